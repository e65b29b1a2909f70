package incremental

import (
	"cmp"
	"sync"
)

// MaxKeys is how many keys a ByKey holds at once; past it a key is
// forgotten, at random, to make room.
const MaxKeys = 64

// ByKey holds up to [MaxKeys] values (aggregates), one per way of
// counting. The zero value is ready; a ByKey must not be copied after
// first use. Plugins hold theirs, so that two frameworks share none.
type ByKey[T any] struct {
	mu    sync.Mutex
	byKey map[string]*entry[T]
	// max, when not 0, replaces MaxKeys (in tests).
	max int
}

type entry[T any] struct {
	mu sync.Mutex
	v  T
}

// Take returns the value for key (its zero value the first time) and the
// function that gives it back, or nil and nil when another count holds
// it: the caller then counts without it.
func (v *ByKey[T]) Take(key string) (*T, func()) {
	v.mu.Lock()
	if v.byKey == nil {
		v.byKey = map[string]*entry[T]{}
	}
	e, ok := v.byKey[key]
	if !ok {
		if limit := cmp.Or(v.max, MaxKeys); len(v.byKey) >= limit {
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
