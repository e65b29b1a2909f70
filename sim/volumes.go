package sim

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// volumeObject is a kind of object a store holds.
type volumeObject interface {
	*v1.PersistentVolume | *v1.PersistentVolumeClaim
	GetLabels() map[string]string
}

// store holds the cluster's objects of one kind that placements change
// (PersistentVolumes bound to claims, claims selected for provisioning),
// listed in the order given, a replaced object keeping its place, so that
// plugins see them in the same order whatever was assumed.
type store[T volumeObject] struct {
	mu   sync.RWMutex
	objs []T
	at   map[string]int
	key  func(T) string
}

func newStore[T volumeObject](key func(T) string) *store[T] {
	return &store[T]{at: map[string]int{}, key: key}
}

// List returns the objects whose labels sel matches, as listers do.
func (s *store[T]) List(sel labels.Selector) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.objs))
	for _, o := range s.objs {
		if sel == nil || sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

// set puts o in place of the object of its key, or last, and returns the
// object it replaced, if any.
func (s *store[T]) set(o T) (old T, had bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.key(o)
	if i, ok := s.at[k]; ok {
		old, s.objs[i] = s.objs[i], o
		return old, true
	}
	s.at[k] = len(s.objs)
	s.objs = append(s.objs, o)
	return old, false
}

// drop removes the last object, undoing a set that added it: undo steps
// run newest first, so the object added last is the one to go.
func (s *store[T]) drop(o T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, s.key(o))
	s.objs = s.objs[:len(s.objs)-1]
}

// setVolume puts pv in place of the PersistentVolume of its name.
func (c *Cluster) setVolume(pv *v1.PersistentVolume) {
	restore(c, c.volumes, pv)
}

// setVolumeClaim puts claim in place of the PersistentVolumeClaim of its
// namespace and name.
func (c *Cluster) setVolumeClaim(claim *v1.PersistentVolumeClaim) {
	restore(c, c.volumeClaims, claim)
}

// restore sets o in s, recording how to undo it.
func restore[T volumeObject](c *Cluster, s *store[T], o T) {
	old, had := s.set(o)
	c.undo(func() error {
		if had {
			s.set(old)
		} else {
			s.drop(o)
		}
		return nil
	})
}
