package fwk

import (
	"sync/atomic"

	"github.com/kubesched/kubesched/nodeinfo"
)

// CycleState carries what one scheduling cycle computes once and its
// plugins read many times. Each plugin keeps its own per-pod value in a
// typed slot ([StateKey]), so there are no string keys and no type
// assertions in plugin code. It also holds the cycle's nodes and the
// cluster objects plugins read ([Listers]).
//
// A framework writes state only in PreFilter and PreScore, which run one
// plugin at a time; Filter and Score may read it concurrently. A state
// made by a framework's cycle lives as long as the cycle: plugins must
// not keep it, or clones of it, to read after the cycle returns.
type CycleState struct {
	allNodes []*nodeinfo.NodeInfo
	// listers is shared with clones: a pointer keeps a state, which
	// preemption clones for every candidate node, small.
	listers *Listers
	slots   []any
}

// NewCycleState returns the state for one scheduling cycle over allNodes.
// Plugin tests use it to call plugins outside a framework.
func NewCycleState(allNodes []*nodeinfo.NodeInfo) *CycleState {
	return &CycleState{allNodes: allNodes}
}

// AllNodes returns every node of the cycle, feasible or not. Nil state
// returns nil.
func (s *CycleState) AllNodes() []*nodeinfo.NodeInfo {
	if s == nil {
		return nil
	}
	return s.allNodes
}

// Listers returns the cluster objects of the cycle. Fields may be nil,
// meaning none; a nil state has none.
func (s *CycleState) Listers() Listers {
	if s == nil || s.listers == nil {
		return Listers{}
	}
	return *s.listers
}

// SetListers sets the cluster objects plugins see through this state, for
// calling plugins outside a framework. It returns s.
func (s *CycleState) SetListers(l Listers) *CycleState {
	s.listers = &l
	return s
}

// ShareListers is SetListers without the copy, for a framework that
// makes a state per cycle: the state reads *l, which must not change
// while the cycle runs. It returns s.
func (s *CycleState) ShareListers(l *Listers) *CycleState {
	s.listers = l
	return s
}

var stateKeys atomic.Int32

// StateKey is a typed slot in a [CycleState]. Create one per plugin with
// [NewStateKey] in a package-level variable.
type StateKey[T any] struct{ index int }

// NewStateKey allocates a new slot. Call it at package initialization, not
// per cycle: slots are never freed.
func NewStateKey[T any]() StateKey[T] {
	return StateKey[T]{index: int(stateKeys.Add(1) - 1)}
}

// Write stores v in the slot; on a nil state it does nothing, so plugins
// called outside a framework need no special case. It must not race with
// other calls on the same state; a framework calls PreFilter and PreScore
// plugins one at a time.
func (k StateKey[T]) Write(s *CycleState, v T) {
	if s == nil {
		return
	}
	if k.index >= len(s.slots) {
		grown := make([]any, int(stateKeys.Load()))
		copy(grown, s.slots)
		s.slots = grown
	}
	s.slots[k.index] = v
}

// Read returns the slot's value and whether one was written. A nil state
// has nothing written, which lets plugins called outside a framework fall
// back to computing the value themselves.
func (k StateKey[T]) Read(s *CycleState) (T, bool) {
	var zero T
	if s == nil || k.index >= len(s.slots) || s.slots[k.index] == nil {
		return zero, false
	}
	v, ok := s.slots[k.index].(T)
	return v, ok
}

// StateCloner is implemented by state values that PreFilterExtensions
// change in place: Clone must return a deep enough copy that changing it
// leaves the original as it was.
type StateCloner interface {
	// CloneState returns the copy; its dynamic type must be the value's
	// own, since the copy is read back with the same StateKey.
	CloneState() any
}

// Clone returns a copy of the state whose slots can be rewritten without
// affecting s. Values implementing [StateCloner] are copied with it; other
// values are shared, so they must not be modified after being written.
func (s *CycleState) Clone() *CycleState {
	if s == nil {
		return nil
	}
	c := *s
	c.slots = make([]any, len(s.slots))
	for i, v := range s.slots {
		if cl, ok := v.(StateCloner); ok {
			v = cl.CloneState()
		}
		c.slots[i] = v
	}
	return &c
}
