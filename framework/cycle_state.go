package framework

import (
	"context"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// cycleData is what a framework keeps in the states of its cycles beside
// the plugins' slots, in the slot of [cycle.Key]: it is the cycle's
// [cycle.Hooks]. Clones of the state share it (preemption clones the
// state for every candidate node): the framework changes it only on the
// cycle's own state, before PostFilter or nominated pods' filtering
// clone it, or after those clones are done with.
type cycleData struct {
	fw       *Framework
	allNodes []*nodeinfo.NodeInfo
	// index is the framework's index of allNodes, which knows the nodes
	// with pods that have pod affinity terms.
	index nodeIndex
	// parallelism bounds the goroutines of ParallelChunks.
	parallelism int
	// plugins are the Filter plugins and PreFilterExtensions the cycle
	// runs.
	plugins *cyclePlugins
	// skipScore is indexed by plugin position.
	skipScore []bool
	// excluded is the verdict on the nodes outside PreFilter's result,
	// kept, as Framework.RunPreFilterPlugins records them; nil when
	// PreFilter kept every node.
	excluded *fwk.Status
	kept     sets.Set[string]
	// scoredNodes are the nodes the framework hands to PreScore, at
	// positions scored of allNodes.
	scoredNodes []*nodeinfo.NodeInfo
	scored      []int32
	// gens are allNodes' generations, when the node list keeps them.
	gens []int64
	// ends, shared with clones, holds what runs when the framework's
	// cycle ends (OnCycleEnd); nil for a state no cycle of the framework
	// ends, such as one handed back by RunPreFilterPlugins.
	ends *cycleEnds
}

// indexOf returns the framework's index of state's nodes, nil for a
// state no framework made.
func indexOf(state *fwk.CycleState) nodeIndex {
	if d := cycleOf(state); d != nil {
		return d.index
	}
	return nil
}

// cycleOf returns the framework's data in state, nil for a state no
// framework made.
func cycleOf(state *fwk.CycleState) *cycleData {
	h, _ := cycle.Key.Read(state)
	d, _ := h.(*cycleData)
	return d
}

// cycleEnds are the functions to run at the end of a cycle.
type cycleEnds struct {
	mu   sync.Mutex
	fns  []func()
	done bool
}

// OnCycleEnd: see [cycle.Hooks]. fn runs on the goroutine that ran the
// cycle, after every plugin returned, before Schedule (or
// ScheduleSnapshot, Filter, Score, Explain) returns.
func (d *cycleData) OnCycleEnd(fn func()) bool {
	if d.ends == nil {
		return false
	}
	d.ends.mu.Lock()
	defer d.ends.mu.Unlock()
	if d.ends.done {
		return false
	}
	d.ends.fns = append(d.ends.fns, fn)
	return true
}

// endable makes state's cycle one the framework ends with endCycle.
func endable(state *fwk.CycleState) *fwk.CycleState {
	cycleOf(state).ends = &cycleEnds{}
	return state
}

// endCycle ends state's cycle: what OnCycleEnd asked for runs, in the
// order asked.
func endCycle(state *fwk.CycleState) {
	ends := cycleOf(state).ends
	ends.mu.Lock()
	fns := ends.fns
	ends.fns, ends.done = nil, true
	ends.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// NodeGenerations: see [cycle.Hooks]. A plugin that remembers per-node
// results by generation compares these instead of reading every
// NodeInfo, which on a large cluster costs a memory access per node.
func (d *cycleData) NodeGenerations(nodes []*nodeinfo.NodeInfo) []int64 {
	if len(d.gens) == 0 || !d.isAllNodes(nodes) {
		return nil
	}
	return d.gens
}

// ChangedNodes: see [cycle.Hooks]. Only a snapshot updated in place
// (cache.Cache.UpdateSnapshot, whose snapshots log their changes: see
// [NodeSnapshot]) tells.
func (d *cycleData) ChangedNodes(nodes []*nodeinfo.NodeInfo, since cycle.Version) (now cycle.Version, changed []int32, ok bool) {
	if len(d.gens) == 0 || !d.isAllNodes(nodes) {
		return cycle.Version{}, nil, false
	}
	x, isSnap := d.index.(*snapshotIndex)
	if !isSnap || x == nil || x.generation == 0 {
		return cycle.Version{}, nil, false
	}
	log, logs := x.snap.(changeLog)
	if !logs {
		return cycle.Version{}, nil, false
	}
	now = cycle.Version{Gens: &d.gens[0], Generation: x.generation}
	if since.Gens != now.Gens {
		return now, nil, false
	}
	changed, ok = log.ChangedSince(since.Generation)
	return now, changed, ok
}

// changeLog is a [NodeSnapshot] updated in place that tells which of its
// nodes changed since one of its generations, as cache.Snapshot does.
type changeLog interface {
	ChangedSince(generation int64) ([]int32, bool)
}

// ExcludedByPreFilter returns kube-scheduler's verdict on the node called
// name when the PreFilter plugins of [Framework.RunPreFilterPlugins],
// which made state, left it out ("node(s) didn't satisfy plugin(s)
// [NodeAffinity]", UnschedulableAndUnresolvable), and nil when they kept
// it.
func ExcludedByPreFilter(state *fwk.CycleState, name string) *fwk.Status {
	d := cycleOf(state)
	if d == nil || d.excluded == nil || d.kept.Has(name) {
		return nil
	}
	return d.excluded
}

// NodePositions: see [cycle.Hooks]. For the nodes the framework hands to
// PreScore it costs nothing (the framework knows where they are); for
// other nodes, a look-up by name each.
func (d *cycleData) NodePositions(nodes []*nodeinfo.NodeInfo) ([]int32, bool) {
	if len(nodes) == len(d.scored) && (len(nodes) == 0 || &nodes[0] == &d.scoredNodes[0]) {
		return d.scored, true
	}
	if d.isAllNodes(nodes) || d.index == nil || d.index.len() != len(d.allNodes) {
		return cycle.PositionsIn(d.allNodes, nodes)
	}
	pos := make([]int32, len(nodes))
	for j, ni := range nodes {
		if ni == nil {
			return nil, false
		}
		i, ok := d.index.position(ni.Name())
		if !ok || d.allNodes[i] != ni {
			return nil, false
		}
		pos[j] = int32(i)
	}
	return pos, true
}

// NodeInfo: see [cycle.Hooks].
func (d *cycleData) NodeInfo(name string) (*nodeinfo.NodeInfo, bool) {
	if d.index != nil {
		i, ok := d.index.position(name)
		if !ok {
			return nil, false
		}
		return d.allNodes[i], true
	}
	for _, ni := range d.allNodes {
		if ni.Name() == name {
			return ni, true
		}
	}
	return nil, false
}

// minPiecesPerWorker keeps ParallelChunks from starting goroutines for
// loops too short to repay them.
const minPiecesPerWorker = 256

// ParallelChunks: see [cycle.Hooks].
func (d *cycleData) ParallelChunks(ctx context.Context, pieces int, fn func(worker, start, end int)) {
	parallel.ByWorker(ctx, d.Workers(pieces), pieces, fn)
}

// Workers: at most the framework's parallelism and GOMAXPROCS (more
// workers than CPUs would only add partial results to merge), and fewer
// for short loops.
func (d *cycleData) Workers(pieces int) int {
	return max(1, min(d.parallelism, runtime.GOMAXPROCS(0), pieces/minPiecesPerWorker))
}

// NodesWithPodAffinity: see [cycle.Hooks]. When nodes are the cycle's
// nodes (the slice the framework passes to PreFilter and, for pod-only
// plugins, PreScore), the framework's cached index answers without a
// pass over them.
func (d *cycleData) NodesWithPodAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo {
	if d.isAllNodes(nodes) && d.index != nil {
		return d.index.podAffinity().any
	}
	any, _ := cycle.AffinityNodes(nodes)
	return any
}

// NodesWithRequiredPodAntiAffinity: see [cycle.Hooks].
func (d *cycleData) NodesWithRequiredPodAntiAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo {
	if d.isAllNodes(nodes) && d.index != nil {
		return d.index.podAffinity().requiredAnti
	}
	_, anti := cycle.AffinityNodes(nodes)
	return anti
}

// isAllNodes reports whether nodes is the cycle's own node slice.
func (d *cycleData) isAllNodes(nodes []*nodeinfo.NodeInfo) bool {
	return len(d.allNodes) == len(nodes) && len(nodes) > 0 && &d.allNodes[0] == &nodes[0]
}

type affinityNodes struct {
	once         sync.Once
	any          []*nodeinfo.NodeInfo
	requiredAnti []*nodeinfo.NodeInfo
}

func newAffinityNodes(nodes []*nodeinfo.NodeInfo) *affinityNodes {
	a := &affinityNodes{}
	a.once.Do(func() { a.any, a.requiredAnti = cycle.AffinityNodes(nodes) })
	return a
}
