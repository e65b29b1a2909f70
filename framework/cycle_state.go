package framework

import (
	"context"
	"k8s.io/apimachinery/pkg/util/sets"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// CycleState carries what one Schedule call computes once and its plugins
// read many times. Each plugin keeps its own per-pod value in a typed slot
// ([StateKey]), so there are no string keys and no type assertions in
// plugin code.
//
// The framework writes state only in PreFilter and PreScore, which run one
// plugin at a time; Filter and Score may read it concurrently. A state
// made by a framework cycle lives as long as the cycle: plugins must not
// keep it, or clones of it, to read after Schedule returns, since what
// plugins lent it may change then (see [CycleState.OnCycleEnd]).
type CycleState struct {
	allNodes []*nodeinfo.NodeInfo
	// listers is shared with the framework, and with clones: a pointer
	// keeps the state small to copy.
	listers *Listers
	// index is the framework's index of allNodes, which knows the nodes
	// with pods that have pod affinity terms; nil outside a framework,
	// where affinityNodes are computed on first use.
	index         nodeIndex
	affinityNodes *affinityNodes
	slots         []any
	// parallelism bounds the goroutines of [CycleState.ParallelChunks].
	parallelism int
	// plugins are the Filter plugins and PreFilterExtensions the cycle
	// runs; nil outside a framework.
	plugins *cyclePlugins
	// skipScore is indexed by plugin position.
	skipScore []bool
	// fw is the framework running the cycle; nil outside one.
	fw *Framework
	// excluded is the verdict on the nodes outside PreFilter's result,
	// kept, as Framework.RunPreFilterPlugins records them; nil when
	// PreFilter kept every node.
	excluded *Status
	kept     sets.Set[string]
	// scoredNodes are the nodes the framework hands to PreScore, at
	// positions scored of allNodes.
	scoredNodes []*nodeinfo.NodeInfo
	scored      []int32
	// gens are allNodes' generations, when the node list keeps them.
	gens []int64
	// ends, shared with clones, holds what runs when the framework's
	// cycle ends (OnCycleEnd); nil for a state no cycle of the framework
	// ends, such as one a caller made or was handed back.
	ends *cycleEnds
}

// cycleEnds are the functions to run at the end of a cycle.
type cycleEnds struct {
	mu   sync.Mutex
	fns  []func()
	done bool
}

// OnCycleEnd asks for fn to run once the framework's scheduling cycle
// that made s has ended, when nothing reads s or its clones any more, and
// reports whether it will. Plugins use it to take back what they lent the
// cycle: say, counts kept from one cycle to the next that the state shares
// instead of copying. fn runs on the goroutine that ran the cycle, after
// every plugin returned, before Schedule (or ScheduleSnapshot, Filter,
// Score, Explain) returns. It reports false, and fn never runs, for a
// state no cycle of the framework ends: one made with [NewCycleState],
// handed back by [Framework.RunPreFilterPlugins], or whose cycle already
// ended. fn must not block.
func (s *CycleState) OnCycleEnd(fn func()) bool {
	if s == nil || s.ends == nil {
		return false
	}
	s.ends.mu.Lock()
	defer s.ends.mu.Unlock()
	if s.ends.done {
		return false
	}
	s.ends.fns = append(s.ends.fns, fn)
	return true
}

// endable makes s a state whose cycle the framework ends with end.
func (s *CycleState) endable() *CycleState {
	s.ends = &cycleEnds{}
	return s
}

// end ends s's cycle: what OnCycleEnd asked for runs, in the order
// asked.
func (s *CycleState) end() {
	s.ends.mu.Lock()
	fns := s.ends.fns
	s.ends.fns, s.ends.done = nil, true
	s.ends.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// NodeGenerations returns the Generation of each of nodes, in order,
// when nodes is the cycle's own [CycleState.AllNodes] and its node list
// keeps the generations beside its nodes (a cache.Snapshot does: see
// [NodeSnapshot]); nil otherwise. A plugin that remembers per-node
// results by generation compares these instead of reading every
// NodeInfo, which on a large cluster costs a memory access per node. Do
// not modify the slice.
func (s *CycleState) NodeGenerations(nodes []*nodeinfo.NodeInfo) []int64 {
	if s == nil || len(s.gens) == 0 || !s.isAllNodes(nodes) {
		return nil
	}
	return s.gens
}

// NodesVersion names one content of a cycle's node list, for plugins
// that keep per-node results from one cycle to the next: see
// [CycleState.ChangedNodes]. The zero value names nothing.
type NodesVersion struct {
	// gens is the list's generations slice, which stays the same while
	// the list is updated in place, and generation the list's.
	gens       *int64
	generation int64
}

// ChangedNodes returns the version of nodes, the cycle's own
// [CycleState.AllNodes], and the positions in it of the nodes that
// changed since version since, with ok true. A plugin that kept results
// per node position at version since need look again only at those
// nodes. The positions come in no particular order and may repeat; do
// not modify the slice.
//
// ok is false when it cannot tell, and then any node may have changed:
// since is the zero version or another list's; nodes is not the cycle's
// list; the list is not one updated in place (cache.Cache.UpdateSnapshot,
// whose snapshots log their changes: see [NodeSnapshot]); or its log no
// longer reaches back to since. now is the zero version when nodes has
// none.
func (s *CycleState) ChangedNodes(nodes []*nodeinfo.NodeInfo, since NodesVersion) (now NodesVersion, changed []int32, ok bool) {
	if s == nil || len(s.gens) == 0 || !s.isAllNodes(nodes) {
		return NodesVersion{}, nil, false
	}
	x, isSnap := s.index.(*snapshotIndex)
	if !isSnap || x == nil || x.generation == 0 {
		return NodesVersion{}, nil, false
	}
	log, logs := x.snap.(changeLog)
	if !logs {
		return NodesVersion{}, nil, false
	}
	now = NodesVersion{gens: &s.gens[0], generation: x.generation}
	if since.gens != now.gens {
		return now, nil, false
	}
	changed, ok = log.ChangedSince(since.generation)
	return now, changed, ok
}

// changeLog is a [NodeSnapshot] updated in place that tells which of its
// nodes changed since one of its generations, as cache.Snapshot does.
type changeLog interface {
	ChangedSince(generation int64) ([]int32, bool)
}

// ExcludedByPreFilter returns kube-scheduler's verdict on the node called
// name when the PreFilter plugins of [Framework.RunPreFilterPlugins] left
// it out ("node(s) didn't satisfy plugin(s) [NodeAffinity]",
// UnschedulableAndUnresolvable), and nil when they kept it.
func (s *CycleState) ExcludedByPreFilter(name string) *Status {
	if s == nil || s.excluded == nil || s.kept.Has(name) {
		return nil
	}
	return s.excluded
}

// NewCycleState returns the state for one scheduling cycle over allNodes.
// Plugin tests use it to call plugins outside a framework.
func NewCycleState(allNodes []*nodeinfo.NodeInfo) *CycleState {
	return &CycleState{allNodes: allNodes, affinityNodes: &affinityNodes{}}
}

// AllNodes returns every node of the cycle, feasible or not. Nil state
// returns nil.
func (s *CycleState) AllNodes() []*nodeinfo.NodeInfo {
	if s == nil {
		return nil
	}
	return s.allNodes
}

// NodePositions returns the position in [CycleState.AllNodes] of each of
// nodes, so that a plugin can keep a cycle's per-node data in slices
// rather than maps; false if one of them is not there. For the nodes the
// framework hands to PreScore it costs nothing (the framework knows where
// they are); for other nodes, a look-up by name each. Do not modify the
// result.
func (s *CycleState) NodePositions(nodes []*nodeinfo.NodeInfo) ([]int32, bool) {
	if s == nil {
		return nil, false
	}
	if len(nodes) == len(s.scored) && (len(nodes) == 0 || &nodes[0] == &s.scoredNodes[0]) {
		return s.scored, true
	}
	if s.isAllNodes(nodes) {
		pos := make([]int32, len(nodes))
		for i := range pos {
			pos[i] = int32(i)
		}
		return pos, true
	}
	find := s.finder()
	pos := make([]int32, len(nodes))
	for j, ni := range nodes {
		i, ok := find(ni)
		if !ok {
			return nil, false
		}
		pos[j] = int32(i)
	}
	return pos, true
}

// finder returns a function giving the position of a node in AllNodes:
// by name through the framework's index, or outside a framework through
// a map made for the purpose.
func (s *CycleState) finder() func(*nodeinfo.NodeInfo) (int, bool) {
	if s.index != nil && s.index.len() == len(s.allNodes) {
		return func(ni *nodeinfo.NodeInfo) (int, bool) {
			if ni == nil {
				return 0, false
			}
			i, ok := s.index.position(ni.Name())
			return i, ok && s.allNodes[i] == ni
		}
	}
	at := make(map[*nodeinfo.NodeInfo]int, len(s.allNodes))
	for i, ni := range s.allNodes {
		if _, dup := at[ni]; !dup {
			at[ni] = i
		}
	}
	return func(ni *nodeinfo.NodeInfo) (int, bool) {
		i, ok := at[ni]
		return i, ok
	}
}

// minPiecesPerWorker keeps ParallelChunks from starting goroutines for
// loops too short to repay them.
const minPiecesPerWorker = 256

// ParallelChunks splits [0, pieces) into chunks of consecutive indexes and
// calls fn for each on up to the framework's parallelism goroutines, with
// the worker's number, from 0 to [CycleState.Workers](pieces)-1. A worker
// runs its chunks one after another, so PreFilter and PreScore plugins can
// count into per-worker values and merge them afterwards, without locks.
// It returns when every call has returned; once ctx is done no further
// chunk starts, so callers must check ctx before trusting the result. On
// a nil state, or one not made by a framework, every chunk runs on worker
// 0, in order.
func (s *CycleState) ParallelChunks(ctx context.Context, pieces int, fn func(worker, start, end int)) {
	parallel.ByWorker(ctx, s.Workers(pieces), pieces, fn)
}

// Workers returns how many workers [CycleState.ParallelChunks] uses for
// pieces: at most the framework's parallelism and GOMAXPROCS (more
// workers than CPUs would only add partial results to merge), and fewer
// for short loops.
func (s *CycleState) Workers(pieces int) int {
	if s == nil {
		return 1
	}
	return max(1, min(s.parallelism, runtime.GOMAXPROCS(0), pieces/minPiecesPerWorker))
}

// NodesWithPodAffinity returns the nodes among nodes that hold a pod with
// pod affinity or anti-affinity terms, so that plugins need not visit every
// node. When nodes are the cycle's nodes (the slice the framework passes to
// PreFilter and, for pod-only plugins, PreScore), the framework's cached
// index answers without a pass over them.
func (s *CycleState) NodesWithPodAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo {
	if s.isAllNodes(nodes) {
		return s.podAffinityNodes().any
	}
	return (&affinityNodes{}).filled(nodes).any
}

// NodesWithRequiredPodAntiAffinity is [CycleState.NodesWithPodAffinity] for
// pods with required pod anti-affinity terms.
func (s *CycleState) NodesWithRequiredPodAntiAffinity(nodes []*nodeinfo.NodeInfo) []*nodeinfo.NodeInfo {
	if s.isAllNodes(nodes) {
		return s.podAffinityNodes().requiredAnti
	}
	return (&affinityNodes{}).filled(nodes).requiredAnti
}

// isAllNodes reports whether nodes is the cycle's own node slice.
func (s *CycleState) isAllNodes(nodes []*nodeinfo.NodeInfo) bool {
	all := s.AllNodes()
	return len(all) == len(nodes) && len(all) > 0 && &all[0] == &nodes[0]
}

type affinityNodes struct {
	once         sync.Once
	any          []*nodeinfo.NodeInfo
	requiredAnti []*nodeinfo.NodeInfo
}

func newAffinityNodes(nodes []*nodeinfo.NodeInfo) *affinityNodes {
	a := &affinityNodes{}
	a.once.Do(func() { a.fill(nodes) })
	return a
}

func (a *affinityNodes) filled(nodes []*nodeinfo.NodeInfo) *affinityNodes {
	a.fill(nodes)
	return a
}

func (a *affinityNodes) fill(nodes []*nodeinfo.NodeInfo) {
	for _, ni := range nodes {
		if ni == nil {
			continue
		}
		if len(ni.PodsWithAffinity()) > 0 {
			a.any = append(a.any, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity()) > 0 {
			a.requiredAnti = append(a.requiredAnti, ni)
		}
	}
}

func (s *CycleState) podAffinityNodes() *affinityNodes {
	if s.index != nil {
		return s.index.podAffinity()
	}
	s.affinityNodes.once.Do(func() { s.affinityNodes.fill(s.allNodes) })
	return s.affinityNodes
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
// other calls on the same state; the framework calls PreFilter and PreScore
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
	c.skipScore = append([]bool(nil), s.skipScore...)
	return &c
}
