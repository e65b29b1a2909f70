package framework

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// NodeSnapshot is a list of nodes that never changes once made, such as a
// cache.Snapshot. [Framework.ScheduleSnapshot] trusts it: a cycle then
// costs only what its pod needs (a pod that a PreFilter plugin narrows to
// one node, as every DaemonSet pod is, costs the same in a cluster of 500
// nodes as in one of 50,000), where [Framework.Schedule] checks on every
// call that a plain slice is what it was, since its caller may have
// changed it.
//
// A NodeSnapshot may also keep the Generation of each node beside it, in
// a method Generations() []int64 returning them in Nodes order (the same
// slice each call, changing only with the nodes, as cache.Snapshot's):
// then a cycle tells which nodes changed since it last looked without
// reading every NodeInfo.
type NodeSnapshot interface {
	// Nodes returns every node, in the order the search walks them. Every
	// call returns the same slice, and neither it nor the NodeInfos it
	// holds ever change. No node is nil and no two share a name.
	Nodes() []*nodeinfo.NodeInfo
	// Index returns the position in Nodes of the node called name, and
	// false when there is none. It is called concurrently.
	Index(name string) (int, bool)
}

// podAffinitySnapshot is a [NodeSnapshot] that also knows which of its
// nodes hold pods with pod affinity terms, which InterPodAffinity visits
// for every pod: kept up to date as snapshots are made (cache.Snapshot
// keeps them as kube-scheduler's cache does, rebuilt only when a changed
// node holds or held such a pod), they spare the framework a pass over
// the nodes of each new snapshot.
type podAffinitySnapshot interface {
	NodeSnapshot
	// NodesWithPodAffinity returns the nodes holding a pod with pod
	// affinity or anti-affinity terms, in Nodes order.
	NodesWithPodAffinity() []*nodeinfo.NodeInfo
	// NodesWithRequiredPodAntiAffinity returns the nodes holding a pod
	// with required pod anti-affinity terms, in Nodes order.
	NodesWithRequiredPodAntiAffinity() []*nodeinfo.NodeInfo
}

// nodeIndex is what a cycle knows of its node list beyond the NodeInfos:
// where a node is and what it is called. It never changes, so a Result
// and a Diagnosis can keep it and answer after the cycle, at no cost to
// the cycle itself.
type nodeIndex interface {
	// position returns the position of the node called name.
	position(name string) (int, bool)
	// name returns the name of the node at position i.
	name(i int) string
	// len is the number of nodes.
	len() int
	// podAffinity returns the nodes holding pods with pod affinity terms,
	// computed on first use.
	podAffinity() *affinityNodes
}

// sliceIndex indexes a plain node slice: checked, named and fingerprinted
// once, then reused while the slice's fingerprint stays the same.
type sliceIndex struct {
	// nodes and generation short-cut the fingerprint: while no NodeInfo
	// in the process changed (nodeinfo.LatestGeneration), a slice holding
	// the same pointers holds the same nodes, which comparing the pointers
	// shows without touching a NodeInfo.
	nodes       []*nodeinfo.NodeInfo
	generation  int64
	fingerprint uint64
	byName      map[string]int
	// names are copied because the caller may reuse its slice, while
	// results built on the index live on.
	names    []string
	affinity *affinityNodes
}

func (x *sliceIndex) position(name string) (int, bool) {
	i, ok := x.byName[name]
	return i, ok
}
func (x *sliceIndex) name(i int) string           { return x.names[i] }
func (x *sliceIndex) len() int                    { return len(x.names) }
func (x *sliceIndex) podAffinity() *affinityNodes { return x.affinity }

// snapshotIndex is a [NodeSnapshot] seen by the framework.
type snapshotIndex struct {
	snap     NodeSnapshot
	nodes    []*nodeinfo.NodeInfo
	affinity affinityNodes
	// generation is the snapshot's when indexed, for snapshots that are
	// updated in place (see generationOf).
	generation int64
	// gens are the nodes' generations, when the snapshot keeps them.
	gens []int64
}

// generationOf returns the generation of a snapshot updated in place
// (cache.Cache.UpdateSnapshot), which changes when its nodes do, or 0
// for one that never changes.
func generationOf(snap NodeSnapshot) int64 {
	if g, ok := snap.(interface{ Generation() int64 }); ok {
		return g.Generation()
	}
	return 0
}

func (x *snapshotIndex) position(name string) (int, bool) { return x.snap.Index(name) }
func (x *snapshotIndex) name(i int) string                { return x.nodes[i].Name() }
func (x *snapshotIndex) len() int                         { return len(x.nodes) }
func (x *snapshotIndex) podAffinity() *affinityNodes {
	x.affinity.once.Do(func() {
		if s, ok := x.snap.(podAffinitySnapshot); ok {
			x.affinity.any, x.affinity.requiredAnti = s.NodesWithPodAffinity(), s.NodesWithRequiredPodAntiAffinity()
			return
		}
		x.affinity.any, x.affinity.requiredAnti = cycle.AffinityNodes(x.nodes)
	})
	return &x.affinity
}

// indexSnapshot returns the index of snap, the cached one when snap is
// the snapshot of the previous call: its node slice is the same one, and
// it was not updated in place since.
func (f *Framework) indexSnapshot(snap NodeSnapshot) (*snapshotIndex, []*nodeinfo.NodeInfo) {
	nodes := snap.Nodes()
	if len(nodes) == 0 {
		return nil, nil
	}
	generation := generationOf(snap)
	if x := f.snapIndex.Load(); x != nil && len(x.nodes) == len(nodes) && &x.nodes[0] == &nodes[0] && x.generation == generation {
		return x, nodes
	}
	x := &snapshotIndex{snap: snap, nodes: nodes, generation: generation}
	if g, ok := snap.(interface{ Generations() []int64 }); ok {
		if gens := g.Generations(); len(gens) == len(nodes) {
			x.gens = gens
		}
	}
	f.snapIndex.Store(x)
	return x, nodes
}

// indexSlice returns the index of a plain node list, checking it: no nil
// node, no name twice. The index is cached while the list's fingerprint
// is unchanged, because checking thousands of names for duplicates costs
// more than filtering them.
func (f *Framework) indexSlice(nodes []*nodeinfo.NodeInfo) (*sliceIndex, error) {
	// Read first: a change from now on is one the next call sees.
	generation := nodeinfo.LatestGeneration()
	last := f.index.Load()
	samePointers := last != nil && f.samePointers(last.nodes, nodes)
	if samePointers && last.generation == generation {
		return last, nil
	}
	fp, err := f.fingerprint(nodes)
	if err != nil {
		return nil, err
	}
	if last != nil && last.fingerprint == fp && len(last.names) == len(nodes) {
		// The same nodes, through other pointers or after an unrelated
		// change: keep the index, remember the pointers.
		x := *last
		x.generation = generation
		if !samePointers {
			x.nodes = slices.Clone(nodes)
		}
		f.index.Store(&x)
		return &x, nil
	}
	x := &sliceIndex{nodes: slices.Clone(nodes), generation: generation, fingerprint: fp, byName: make(map[string]int, len(nodes)), names: make([]string, len(nodes)), affinity: newAffinityNodes(nodes)}
	for i, ni := range nodes {
		name := ni.Name()
		if _, dup := x.byName[name]; dup {
			return nil, fmt.Errorf("node name %q appears more than once", name)
		}
		x.byName[name] = i
		x.names[i] = name
	}
	f.index.Store(x)
	return x, nil
}

// samePointers reports whether a and b hold the same pointers. A list of
// tens of thousands of nodes is compared on the workers: the comparison
// reads both lists from memory, and is most of a cycle for a pod pinned
// to one node.
func (f *Framework) samePointers(a, b []*nodeinfo.NodeInfo) bool {
	// Below this, the goroutines cost more than the reads they share.
	const perWorker = 1 << 14
	if len(a) != len(b) {
		return false
	}
	workers := max(1, min(f.parallelism, runtime.GOMAXPROCS(0), len(a)/perWorker))
	if workers == 1 {
		return slices.Equal(a, b)
	}
	var differ atomic.Bool
	parallel.Chunks(context.Background(), workers, workers, func(start, end int) {
		n := len(a)
		lo, hi := start*n/workers, end*n/workers
		if !differ.Load() && !slices.Equal(a[lo:hi], b[lo:hi]) {
			differ.Store(true)
		}
	})
	return !differ.Load()
}

// fingerprint identifies a node list by its NodeInfos' generations, which
// change whenever a NodeInfo's node or pods change, and their positions.
// It also checks that no node is nil. Each node contributes a mixed
// value and the values are summed, so that workers can each take a share
// of a large list: touching every NodeInfo is a cache miss apiece, and on
// the critical path of every cycle over a plain slice.
func (f *Framework) fingerprint(nodes []*nodeinfo.NodeInfo) (uint64, error) {
	// Below this, the goroutines cost more than the misses they share.
	const perWorker = 1024
	workers := max(1, min(f.parallelism, runtime.GOMAXPROCS(0), len(nodes)/perWorker))
	type partial struct {
		sum uint64
		bad int      // the first nil node seen, or -1
		_   [48]byte // its own cache line
	}
	parts := make([]partial, workers)
	for w := range parts {
		parts[w].bad = -1
	}
	parallel.ByWorker(context.Background(), workers, len(nodes), func(w, start, end int) {
		p := &parts[w]
		for i := start; i < end; i++ {
			ni := nodes[i]
			if ni == nil || ni.Node() == nil {
				if p.bad < 0 || i < p.bad {
					p.bad = i
				}
				continue
			}
			p.sum += mix(uint64(ni.Generation()) ^ uint64(i)*0x9e3779b97f4a7c15)
		}
	})
	var sum uint64
	bad := -1
	for _, p := range parts {
		sum += p.sum
		if p.bad >= 0 && (bad < 0 || p.bad < bad) {
			bad = p.bad
		}
	}
	if bad >= 0 {
		return 0, fmt.Errorf("node %d of %d is nil or has no Node object", bad, len(nodes))
	}
	return sum, nil
}

// mix is SplitMix64's finalizer: every input bit affects every output bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
