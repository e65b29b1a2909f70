package framework

import (
	"bytes"
	"context"
	"hash/maphash"
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Placing pod after pod of one kind (the replicas of a ReplicaSet, the
// pending pods a cluster-autoscaler simulates) asks the same plugins
// about the same nodes again and again, while one node changes per
// placement. A memo remembers, for one pod shape and node lists of one
// length, by position, what the node-local plugins (NodeLocalPlugin) said of each node at
// its generation: the first Filter that did not pass, and the Scores. A
// cycle of a pod of that shape then asks those plugins only about the
// nodes that changed; the other plugins run as ever, in profile order,
// so the cycle's verdicts, reasons and scores are what they would be
// without the memo.
//
// A pod shape is everything a plugin may read of a pod but its name and
// identity (see sameShape). A NodeInfo's generation names one content of
// it (every change through its methods gives a new one), so a verdict
// kept for a generation is never stale; generation 0, a NodeInfo built
// as a literal, is never remembered.

// Bounds on a framework's memos: at most maxMemos pod shapes, and about
// memoBudget bytes in all, so that at 100,000 nodes fewer shapes are
// kept.
const (
	maxMemos   = 32
	minMemos   = 2
	memoBudget = 64 << 20
)

// memos are a framework's memos, the least recently used forgotten first.
type memos struct {
	mu   sync.Mutex
	list []*memo
	tick uint64
	// seen holds the prints (shapePrint) of pods seen once without a
	// memo: a shape gets one the second time it comes, so that a pod
	// unlike any other does not pay for filling one.
	seen map[uint64]struct{}
}

// maxSeen bounds seen; past it, it starts over.
const maxSeen = 4096

// memo is one pod shape's remembered verdicts and scores over node lists
// of one length, by position. One cycle at a time uses it (busy).
type memo struct {
	busy  sync.Mutex
	used  uint64 // guarded by memos.mu
	pod   *v1.Pod
	spec  []byte // marshalSpec(pod)
	print uint64
	nodes int

	// filters is which of the framework's filters were remembered, as a
	// set of positions in Framework.filters; a cycle running another set
	// starts over.
	filters filterSet
	// gen[p] is the generation whose verdict is kept for position p, 0
	// for none; after a cycle's filters ran on position p, the
	// generation of the node there, so that scoring need not read the
	// node again. first[p] the position in Framework.filters of the first
	// node-local filter that did not pass, -1 if all did, with status[p]
	// its status.
	gen    []int64
	first  []int16
	status []*fwk.Status
	// settled is the version of the node list (cycle.Hooks.ChangedNodes)
	// at which every position's verdict was kept, for the node there, and
	// rejected were the positions, in order, where a node-local filter did
	// not pass; the zero version when not so. A cycle that finds that
	// still so of every node but those changed since judges those alone
	// (see filterNodes).
	settled  cycle.Version
	rejected []int32
	// found is what the last search with the memo settled found, from
	// the search start foundFrom, for the rejected positions; its slices
	// are the memo's, which a search that finds the same nodes rejected
	// from the same start updates where nodes changed. Zero when none.
	found     searched
	foundFrom int
	// partial counts the searches over every node that stopped early
	// without settling m since it last tried to settle: once they may
	// have taken up every node, one judges them all (see filterNodes).
	partial int
	// scoredAt is the version of the node list (as settled) at which a
	// cycle kept the scores of every node its search found; the zero
	// version when not so. A settled search from that version finds only
	// the changed nodes without kept scores (see scoring.prescore).
	scoredAt cycle.Version

	// scores is which of the framework's score plugins are remembered,
	// by position in Framework.scores; sgen[p] the generation whose
	// scores are kept for position p, and score[k*nodes+p] the raw score
	// of scores[k].
	scores []int
	sgen   []int64
	score  []int32
	// nonzero[k] counts the positions p whose score[k*nodes+p] is not 0,
	// kept or not: when it is 0, every node scores 0 (see
	// scoring.uniform).
	nonzero []atomic.Int64
	// bytes[k*nodes+p] is score[k*nodes+p] as a byte, which it is for
	// the plugins that do not normalize (weighed straight from the memo,
	// see scoring.direct), for a Result's score table; dsum[p] is the
	// weighted sum of position p's kept scores of those plugins.
	bytes []uint8
	dsum  []int64

	// fresh counts the nodes a cycle filtered or scored afresh, and
	// lastFresh is the last cycle's count (a new memo's is unbounded):
	// a cycle after one that judged few nodes afresh will too, most
	// likely, and then walks its nodes faster than workers start.
	fresh     atomic.Int64
	lastFresh int64
}

// freshBelow is how few nodes judged afresh make a memo's cycle cheap
// (see memo.cheap).
const freshBelow = 64

// cheap reports whether the last cycle with m judged fewer than
// freshBelow nodes afresh.
func (m *memo) cheap() bool { return m != nil && m.lastFresh < freshBelow }

// cheapPerWorker is how many nodes a worker takes in a cheap cycle:
// each costs a few loads, and waking a worker costs microseconds.
const cheapPerWorker = 4096

// minMemoNodes is the fewest nodes a search must take up for a memo to
// repay finding the pod's shape among those kept (a DaemonSet pod's
// search takes up one node).
const minMemoNodes = 64

// filterSet is a set of positions in Framework.filters; frameworks with
// more than maxMemoFilters filters keep no memos.
type filterSet uint64

const maxMemoFilters = 64

// take returns the memo for pod's shape over a list of n nodes, for the
// filters node-local for pod (local), or nil when the shape's memo is
// busy with another cycle, or every memo is, or the shape comes for the
// first time. perNode is a memo's size
// per node, which bounds how many are kept. The caller gives the memo
// back with m.busy.Unlock.
func (ms *memos) take(pod *v1.Pod, n int, local filterSet, perNode int) *memo {
	print := shapePrint(pod)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.tick++
	var spec []byte // pod's, marshalled once a memo may be its shape's
	for _, m := range ms.list {
		if m.print != print || m.nodes != n {
			continue
		}
		if spec == nil {
			spec = marshalSpec(pod)
		}
		if !sameShapeSpec(m.pod, pod, m.spec, spec) {
			continue
		}
		if !m.busy.TryLock() {
			return nil
		}
		m.used = ms.tick
		if m.filters != local {
			m.filters = local
			clear(m.gen)
			m.settled, m.found = cycle.Version{}, searched{}
		}
		return m
	}
	if _, again := ms.seen[print]; !again {
		if ms.seen == nil || len(ms.seen) >= maxSeen {
			ms.seen = map[uint64]struct{}{}
		}
		ms.seen[print] = struct{}{}
		return nil
	}
	var victim *memo
	if len(ms.list) < max(minMemos, min(maxMemos, memoBudget/max(1, n*perNode))) {
		victim = &memo{}
		victim.busy.Lock()
		ms.list = append(ms.list, victim)
	} else {
		for _, m := range ms.list {
			if (victim == nil || m.used < victim.used) && m.busy.TryLock() {
				if victim != nil {
					victim.busy.Unlock()
				}
				victim = m
			}
		}
		if victim == nil {
			return nil
		}
	}
	victim.used = ms.tick
	victim.reset(pod, print, n, local)
	return victim
}

// reset makes m the memo of pod's shape over n nodes, remembering
// nothing yet.
func (m *memo) reset(pod *v1.Pod, print uint64, n int, local filterSet) {
	// A copy: the caller may change its pod once the cycle is over, as
	// when it binds it.
	m.pod, m.print, m.nodes, m.filters = pod.DeepCopy(), print, n, local
	m.spec = marshalSpec(m.pod)
	m.gen = grow(&m.gen, n)
	clear(m.gen)
	m.settled, m.found, m.partial = cycle.Version{}, searched{}, 0
	m.first = grow(&m.first, n)
	m.status = grow(&m.status, n)
	clear(m.status)
	m.scores = m.scores[:0]
	clear(m.sgen)
	m.fresh.Store(0)
	m.lastFresh = math.MaxInt64
}

// filter runs filters on the node at position p as runFilters does,
// taking the node-local ones' verdict from m when kept for ni's
// generation, and keeping it otherwise. at[i] is filters[i]'s position
// in Framework.filters and local[i] whether it is node-local; others
// lists the filters that are not, in order. gens, when not nil, are the
// cycle's nodes' generations (cycle.Hooks.NodeGenerations), which spare
// reading an unchanged node.
func (m *memo) filter(ctx context.Context, filters []fwk.FilterPlugin, at []int, local []bool, others []int, gens []int64, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, p int32) *fwk.Status {
	if gens == nil || m.gen[p] != gens[p] || m.gen[p] == 0 {
		if !m.check(ctx, filters, at, local, state, pod, ni, p) {
			return runFilters(ctx, filters, state, pod, ni)
		}
	}
	// The filters that are not node-local and come before the first
	// node-local one that did not pass run first, in order.
	first := int(m.first[p])
	for _, i := range others {
		if first >= 0 && at[i] > first {
			break
		}
		if s := filters[i].Filter(ctx, state, pod, ni); !s.IsSuccess() {
			return filterStatus(filters[i], s)
		}
	}
	if first >= 0 {
		return m.status[p]
	}
	return nil
}

// maxSettledRejected bounds how many of n nodes a settled memo keeps
// rejected: past it, a cycle judges every node.
func maxSettledRejected(n int) int { return max(64, n/8) }

// settle judges the nodes at positions changed of nodes (see filter for
// the other arguments), which changed since m settled with rejected
// positions were (in order), and returns the positions rejected now, in
// order, and true; false when some node's verdict cannot be kept, is an
// error, or too many nodes are rejected. out is reused for the result.
func (m *memo) settle(ctx context.Context, filters []fwk.FilterPlugin, at []int, local []bool, others []int, gens []int64, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, changed, were, out []int32) ([]int32, bool) {
	var now []int32 // changed nodes rejected
	for _, p := range changed {
		if gens[p] == 0 {
			return nil, false
		}
		switch s := m.filter(ctx, filters, at, local, others, gens, state, pod, nodes[p], p); {
		case s.IsSuccess():
		case s.IsRejected():
			now = append(now, p)
		default:
			return nil, false
		}
	}
	sorted := slices.Clone(changed)
	slices.Sort(sorted)
	out = out[:0]
	for _, p := range were {
		if _, again := slices.BinarySearch(sorted, p); !again {
			out = append(out, p)
		}
	}
	out = append(out, now...)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxSettledRejected(len(nodes)) {
		return nil, false
	}
	return out, true
}

// check brings position p's kept verdict up to date with ni, running the
// node-local filters if it changed, and reports false for a node whose
// verdict cannot be kept (generation 0).
func (m *memo) check(ctx context.Context, filters []fwk.FilterPlugin, at []int, local []bool, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, p int32) bool {
	gen := ni.Generation()
	if gen == 0 {
		m.gen[p] = 0
		return false
	}
	if m.gen[p] != gen {
		m.fresh.Add(1)
		first, status := int16(-1), (*fwk.Status)(nil)
		for i, pl := range filters {
			if !local[i] {
				continue
			}
			if s := pl.Filter(ctx, state, pod, ni); !s.IsSuccess() {
				first, status = int16(at[i]), filterStatus(pl, s)
				break
			}
		}
		m.first[p], m.status[p], m.gen[p] = first, status, gen
	}
	return true
}

// scoresKept reports whether m keeps position p's scores for the node
// there, whose verdict is kept.
func (m *memo) scoresKept(p int32) bool {
	gen := m.gen[p]
	return gen != 0 && m.sgen[p] == gen
}

// bindScores prepares m to keep the raw scores of the active plugins
// that are node-local for pod, and returns, per active plugin, its slot in
// m (-1 for none). A different set than the last cycle's starts over.
func (m *memo) bindScores(active []*scorePlugin, pod *v1.Pod) []int {
	slots := make([]int, len(active))
	var set []int
	for k, pl := range active {
		slots[k] = -1
		if pl.local != nil && pl.local(pod) {
			slots[k] = len(set)
			set = append(set, pl.index)
		}
	}
	if len(set) == 0 {
		return nil
	}
	if !slicesEqual(set, m.scores) {
		m.scores = append(m.scores[:0], set...)
		m.sgen = grow(&m.sgen, m.nodes)
		clear(m.sgen)
		// Cleared, for nonzero to count them.
		m.score = grow(&m.score, len(set)*m.nodes)
		clear(m.score)
		m.nonzero = make([]atomic.Int64, len(set))
		m.bytes = grow(&m.bytes, len(set)*m.nodes)
		m.dsum = grow(&m.dsum, m.nodes)
		m.scoredAt = cycle.Version{}
	}
	return slots
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var shapeSeed = maphash.MakeSeed()

// shapePrint is a cheap hash of some of what sameShape compares, so that
// most memos of other shapes are passed over without comparing pods.
func shapePrint(pod *v1.Pod) uint64 {
	var h maphash.Hash
	h.SetSeed(shapeSeed)
	h.WriteString(pod.Namespace)
	h.WriteByte(0)
	// Labels in any order: a sum of each pair's hash.
	var labels uint64
	for k, v := range pod.Labels {
		labels += maphash.String(shapeSeed, k) ^ maphash.String(shapeSeed, v)<<1
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			h.WriteString(cs[i].Image)
			h.WriteByte(0)
			// In any order, and without q.String, which writes to q.
			var requests uint64
			for name, q := range cs[i].Resources.Requests {
				requests += maphash.String(shapeSeed, string(name)) ^ uint64(q.MilliValue())<<1
			}
			maphash.WriteComparable(&h, requests)
		}
		h.WriteByte(1)
	}
	return h.Sum64() ^ labels
}

// sameShape reports whether a and b are alike in everything a node-local
// plugin may read of a pod: all of it but its name, generated name, UID,
// resource version, creation time and managed fields, and of its status
// the times of its conditions and its start time. Quantities compare by
// value, as plugins read them.
func sameShape(a, b *v1.Pod) bool { return sameShapeSpec(a, b, nil, nil) }

// marshalSpec returns pod's spec in protobuf, or nil if that fails. Two
// specs marshalled alike are semantically equal: every field of PodSpec
// is marshalled (TestMarshalledSpecsShowEveryField), maps in key order,
// quantities in their canonical form.
func marshalSpec(pod *v1.Pod) []byte {
	b, err := pod.Spec.Marshal()
	if err != nil {
		return nil
	}
	return b
}

// sameShapeSpec is sameShape, given a's and b's specs as marshalSpec
// returns them (or nil), which compare in far less time than the specs
// when they are equal.
func sameShapeSpec(a, b *v1.Pod, aSpec, bSpec []byte) bool {
	if a == b {
		return true
	}
	if a.Namespace != b.Namespace || !maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Annotations, b.Annotations) ||
		a.DeletionTimestamp != nil || b.DeletionTimestamp != nil ||
		!reflect.DeepEqual(a.OwnerReferences, b.OwnerReferences) || !reflect.DeepEqual(a.Finalizers, b.Finalizers) {
		return false
	}
	// reflect.DeepEqual is several times faster than the semantic
	// comparison and implies it; replicas made from one template pass it.
	// Only specs it tells apart (a nil slice against an empty one, a
	// quantity written two ways) pay for the semantic comparison.
	if (aSpec == nil || bSpec == nil || !bytes.Equal(aSpec, bSpec)) && !reflect.DeepEqual(&a.Spec, &b.Spec) && !equality.Semantic.DeepEqual(&a.Spec, &b.Spec) {
		return false
	}
	if len(a.Status.Conditions) != len(b.Status.Conditions) {
		return false
	}
	for i := range a.Status.Conditions {
		ca, cb := &a.Status.Conditions[i], &b.Status.Conditions[i]
		if ca.Type != cb.Type || ca.Status != cb.Status || ca.Reason != cb.Reason {
			return false
		}
	}
	// A pending pod's status holds little but its conditions: then
	// nothing is left to compare, nor to copy.
	if bareStatus(&a.Status) && bareStatus(&b.Status) {
		return true
	}
	sa, sb := a.Status, b.Status
	sa.Conditions, sb.Conditions = nil, nil
	sa.StartTime, sb.StartTime = nil, nil
	return reflect.DeepEqual(&sa, &sb) || equality.Semantic.DeepEqual(&sa, &sb)
}

// bareStatus reports whether every field of s but its conditions and
// start time is empty. TestBareStatusLooksAtEveryField keeps it up to
// date with PodStatus.
func bareStatus(s *v1.PodStatus) bool {
	return s.ObservedGeneration == 0 && s.Phase == "" && s.Message == "" && s.Reason == "" &&
		s.NominatedNodeName == "" && s.HostIP == "" && len(s.HostIPs) == 0 && s.PodIP == "" && len(s.PodIPs) == 0 &&
		len(s.InitContainerStatuses) == 0 && len(s.ContainerStatuses) == 0 && s.QOSClass == "" &&
		len(s.EphemeralContainerStatuses) == 0 && s.Resize == "" && len(s.ResourceClaimStatuses) == 0 &&
		s.ExtendedResourceClaimStatus == nil && len(s.AllocatedResources) == 0 && s.Resources == nil &&
		len(s.NodeAllocatableResourceClaimStatuses) == 0 && len(s.VolumeHealth) == 0
}
