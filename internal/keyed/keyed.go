// Package keyed holds values that plugins keep from one scheduling cycle
// to the next, one per key (a way of counting), each used by one cycle at
// a time.
package keyed

import "sync"

// Values holds up to a bounded number of values by key; past the bound a
// key is forgotten, at random, to make room. The zero value is not ready:
// use [New].
type Values[T any] struct {
	mu    sync.Mutex
	max   int
	byKey map[string]*entry[T]
}

type entry[T any] struct {
	mu sync.Mutex
	v  T
}

// New returns Values holding at most max keys.
func New[T any](max int) *Values[T] {
	return &Values[T]{max: max, byKey: map[string]*entry[T]{}}
}

// Take returns the value for key (its zero value the first time) and the
// function that gives it back, or nil and nil when another caller holds
// it: the caller then does without.
func (v *Values[T]) Take(key string) (*T, func()) {
	v.mu.Lock()
	e, ok := v.byKey[key]
	if !ok {
		if len(v.byKey) >= v.max {
			for k := range v.byKey {
				delete(v.byKey, k)
				break
			}
		}
		e = &entry[T]{}
		v.byKey[key] = e
	}
	v.mu.Unlock()
	if !e.mu.TryLock() {
		return nil, nil
	}
	return &e.v, e.mu.Unlock
}
