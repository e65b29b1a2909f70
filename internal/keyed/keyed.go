// Package keyed holds values that plugins keep from one scheduling cycle
// to the next, one per key (a way of counting), each used by one cycle at
// a time.
package keyed

import (
	"cmp"
	"sync"
)

// Max is how many keys a Values holds at once; past it a key is
// forgotten, at random, to make room.
const Max = 64

// Values holds up to [Max] values by key. The zero value is ready; a
// Values must not be copied after first use. Plugins hold theirs, so
// that two frameworks share none.
type Values[T any] struct {
	mu    sync.Mutex
	byKey map[string]*entry[T]
	// max, when not 0, replaces Max (in tests).
	max int
}

type entry[T any] struct {
	mu sync.Mutex
	v  T
}

// Take returns the value for key (its zero value the first time) and the
// function that gives it back, or nil and nil when another caller holds
// it: the caller then does without.
func (v *Values[T]) Take(key string) (*T, func()) {
	v.mu.Lock()
	if v.byKey == nil {
		v.byKey = map[string]*entry[T]{}
	}
	e, ok := v.byKey[key]
	if !ok {
		if limit := cmp.Or(v.max, Max); len(v.byKey) >= limit {
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
