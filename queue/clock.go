package queue

import (
	"sync"
	"time"
)

// Clock tells the queue the time and wakes its flushing loop ([PriorityQueue.Run]).
// [FakeClock] is one for tests.
type Clock interface {
	// Now returns the clock's current time, by which backoffs and the
	// unschedulable pool's timeout are measured.
	Now() time.Time
	// After returns a channel that receives the clock's time once d has
	// passed on it.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// FakeClock is a [Clock] that moves only when told to, so tests of
// backoff and timeouts need no real waiting. It also satisfies the cache
// package's Clock. It is safe for concurrent use.
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewFakeClock returns a clock showing now.
func NewFakeClock(now time.Time) *FakeClock {
	return &FakeClock{now: now}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives the time once Step has moved the
// clock d ahead (at once for d <= 0).
func (c *FakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Step moves the clock d ahead and fires the channels of After calls
// whose time has come.
func (c *FakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// Waiters returns how many After channels have not fired yet, so that a
// test can wait until a goroutine is waiting on the clock before stepping
// it.
func (c *FakeClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
