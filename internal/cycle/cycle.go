// Package cycle is what a framework tells kubesched's own plugins about
// the cycle they run in, beyond the plugin API of package fwk: the
// nodes' generations and which of them changed, where nodes sit in the
// cycle's list, the worker pool, the nodes with pod affinity terms, what
// runs when the cycle ends. A framework writes its [Hooks] into the
// cycle's state ([Key]); [Of] reads them, or, for a state made outside a
// framework, answers as a framework that knows nothing more than the
// state's nodes would. None of it changes a decision: it lets plugins
// skip work.
package cycle

import (
	"context"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Version names one content of a cycle's node list, for plugins that
// keep per-node results from one cycle to the next: see
// [Hooks.ChangedNodes]. The zero value names nothing.
type Version struct {
	// Gens is the list's generations slice, which stays the same while
	// the list is updated in place, and Generation the list's.
	Gens       *int64
	Generation int64
}

// Hooks are what a framework tells its plugins about a cycle.
type Hooks interface {
	// NodeInfo returns the cycle's node called name.
	NodeInfo(name string) (*nodeinfo.NodeInfo, bool)
	// NodeGenerations returns the Generation of each of nodes, in order,
	// when nodes is the cycle's own AllNodes and its node list keeps the
	// generations beside its nodes (a cache.Snapshot does); nil
	// otherwise. Do not modify the slice.
	NodeGenerations(nodes []*nodeinfo.NodeInfo) []int64
	// ChangedNodes returns the version of nodes, the cycle's own
	// AllNodes, and the positions in it of the nodes that changed since
	// version since, with ok true. The positions come in no particular
	// order and may repeat; do not modify the slice. ok is false when it
	// cannot tell, and then any node may have changed: since is the zero
	// version or another list's; nodes is not the cycle's list; the list
	// is not one updated in place whose log reaches back to since.
	ChangedNodes(nodes []*nodeinfo.NodeInfo, since Version) (now Version, changed []int32, ok bool)
	// NodePositions returns the position in AllNodes of each of nodes;
	// false if one of them is not there. Do not modify the result.
	NodePositions(nodes []*nodeinfo.NodeInfo) ([]int32, bool)
	// Workers returns how many workers ParallelChunks uses for pieces.
	Workers(pieces int) int
	// ParallelChunks splits [0, pieces) into chunks of consecutive
	// indexes and calls fn for each on up to Workers(pieces) goroutines,
	// with the worker's number; a worker runs its chunks one after
	// another, so callers can count into per-worker values without
	// locks. Once ctx is done no further chunk starts.
	ParallelChunks(ctx context.Context, pieces int, fn func(worker, start, end int))
	// NodesWithPodAffinity returns the nodes among nodes that hold a pod
	// with pod affinity or anti-affinity terms.
	NodesWithPodAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo
	// NodesWithRequiredPodAntiAffinity is NodesWithPodAffinity for pods
	// with required pod anti-affinity terms.
	NodesWithRequiredPodAntiAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo
	// OnCycleEnd asks for fn to run once the cycle has ended, when
	// nothing reads the state or its clones any more, and reports
	// whether it will (false for a state no cycle of a framework ends).
	// fn must not block.
	OnCycleEnd(fn func()) bool
}

// Key is the slot a framework writes its Hooks in.
var Key = fwk.NewStateKey[Hooks]()

// Of returns the hooks of s's cycle: its framework's, or for a state made
// outside a framework (or nil), hooks that know only s's nodes.
func Of(s *fwk.CycleState) Hooks {
	if h, ok := Key.Read(s); ok {
		return h
	}
	return standalone{s}
}

// standalone are the hooks of a state no framework made.
type standalone struct{ s *fwk.CycleState }

func (h standalone) NodeInfo(name string) (*nodeinfo.NodeInfo, bool) {
	for _, ni := range h.s.AllNodes() {
		if ni.Name() == name {
			return ni, true
		}
	}
	return nil, false
}

func (standalone) NodeGenerations([]*nodeinfo.NodeInfo) []int64 { return nil }

func (standalone) ChangedNodes([]*nodeinfo.NodeInfo, Version) (Version, []int32, bool) {
	return Version{}, nil, false
}

func (h standalone) NodePositions(nodes []*nodeinfo.NodeInfo) ([]int32, bool) {
	return PositionsIn(h.s.AllNodes(), nodes)
}

func (standalone) Workers(int) int { return 1 }

func (standalone) ParallelChunks(ctx context.Context, pieces int, fn func(worker, start, end int)) {
	parallel.ByWorker(ctx, 1, pieces, fn)
}

func (standalone) NodesWithPodAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo {
	any, _ := AffinityNodes(nodes)
	return any
}

func (standalone) NodesWithRequiredPodAntiAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo {
	_, anti := AffinityNodes(nodes)
	return anti
}

func (standalone) OnCycleEnd(func()) bool { return false }

// AffinityNodes returns the nodes among nodes that hold a pod with pod
// affinity or anti-affinity terms, and those that hold one with required
// anti-affinity terms.
func AffinityNodes(nodes []*nodeinfo.NodeInfo) (withTerms, requiredAnti []*nodeinfo.NodeInfo) {
	for _, ni := range nodes {
		if ni == nil {
			continue
		}
		if len(ni.PodsWithAffinity()) > 0 {
			withTerms = append(withTerms, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity()) > 0 {
			requiredAnti = append(requiredAnti, ni)
		}
	}
	return withTerms, requiredAnti
}

// PositionsIn returns the position in all of each of nodes, found through
// a map of all; false if one of them is not there.
func PositionsIn(all, nodes []*nodeinfo.NodeInfo) ([]int32, bool) {
	if len(all) == len(nodes) && len(all) > 0 && &all[0] == &nodes[0] {
		pos := make([]int32, len(nodes))
		for i := range pos {
			pos[i] = int32(i)
		}
		return pos, true
	}
	at := make(map[*nodeinfo.NodeInfo]int32, len(all))
	for i, ni := range all {
		if _, dup := at[ni]; !dup {
			at[ni] = int32(i)
		}
	}
	pos := make([]int32, len(nodes))
	for j, ni := range nodes {
		i, ok := at[ni]
		if !ok {
			return nil, false
		}
		pos[j] = i
	}
	return pos, true
}
