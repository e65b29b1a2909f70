package filter

import (
	"sync/atomic"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/keyed"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/nodeinfo"
)

// minAggregateNodes is how many nodes a count must visit before an
// aggregate, which compares every node of the cycle, repays itself.
const minAggregateNodes = 256

// InterPodAffinity's aggregates remember, per way of counting (the pod's namespace,
// labels and namespace labels, and its required terms), the counts of
// InterPodAffinity's PreFilter over the last node list counted and each
// node's share of them, so that counting again over a list where few
// nodes changed (a simulation placing pod after pod, a snapshot updated
// in place) visits the changed nodes alone. Every node's generation is
// still compared. Each plugin holds its own: two frameworks share none.
type affinityAggregates = keyed.Values[affinityAggregate]

// affinityAggregate is one way of counting's running totals, used by one
// count at a time.
type affinityAggregate struct {
	// gens[p] is the generation of the NodeInfo counted at position p
	// (see the aggregates of package topologyspread: the generation names
	// the content, and no NodeInfo is kept alive), and shares[p] what it
	// counted.
	gens   []int64
	shares [][]affinityShare
	// version is the node list's when last counted, when it tells which
	// nodes changed since (framework.CycleState.ChangedNodes): the next
	// count then visits those alone.
	version framework.NodesVersion
	// totals are the existing pods' anti-affinity, the pod's affinity and
	// its anti-affinity counts, as newInterPodAffinityState's state holds
	// them. A total lent to a cycle's state is shared, not copied, and the
	// state copies it before AddPod or RemovePod changes it. The aggregate
	// copies it before it next changes it while a state may still read
	// it: while its cycle has not ended (borrowers[which], the cycles
	// reading that total, counted down as each ends), or for good when
	// lent to a state whose end it is not told of (lent[which]). So a
	// simulation placing pod after pod pays for no copy.
	totals    [3]*podaffinity.Counts
	borrowers [3]*atomic.Int32
	lent      [3]bool
	// scratch is where one node's share, or the pods changed on it, are
	// counted before they go into shares and totals: emptied and reused.
	scratch interPodAffinityState
}

// one returns s with a's scratch counts, emptied, to count into; valid
// until the next call.
func (a *affinityAggregate) one(s *interPodAffinityState) *interPodAffinityState {
	counts := [3]*podaffinity.Counts{a.scratch.existingAnti, a.scratch.affinityCounts, a.scratch.antiAffinityCounts}
	for i, c := range counts {
		if c == nil {
			counts[i] = &podaffinity.Counts{}
		}
		counts[i].Reset()
	}
	a.scratch = *s
	a.scratch.existingAnti, a.scratch.affinityCounts, a.scratch.antiAffinityCounts = counts[0], counts[1], counts[2]
	return &a.scratch
}

// lend returns the totals for state's cycle to share.
func (a *affinityAggregate) lend(state *framework.CycleState) (existingAnti, affinityCounts, antiAffinityCounts *podaffinity.Counts) {
	b := a.borrowers
	if state.OnCycleEnd(func() {
		for _, n := range b {
			n.Add(-1)
		}
	}) {
		// Counted up before the cycle can end: it ends once every
		// plugin, this one included, has returned.
		for _, n := range b {
			n.Add(1)
		}
	} else {
		a.lent = [3]bool{true, true, true}
	}
	return a.totals[0], a.totals[1], a.totals[2]
}

// add adds n to the total which for (key, value), copying it first if a
// state may still read it.
func (a *affinityAggregate) add(which int, key, value string, n int64) {
	if a.lent[which] || a.borrowers[which].Load() > 0 {
		a.totals[which], a.lent[which] = a.totals[which].Clone(), false
		a.borrowers[which] = new(atomic.Int32)
	}
	a.totals[which].Add(key, value, n)
}

// affinityShare is one count of one node: n for the topology pair (key,
// value) in the counts which names.
type affinityShare struct {
	which      int
	key, value string
	n          int64
}

// count brings a up to date with nodes (every node of the cycle, in
// order) for s, the pod's state before counting, counting again the
// nodes that changed since. gens, when not nil, are the nodes'
// generations (framework.CycleState.NodeGenerations), read there rather
// than from each node. state, when not nil, is the cycle's, which may
// tell which nodes changed since a last counted, so that only they are
// visited.
func (a *affinityAggregate) count(s *interPodAffinityState, keys countingKeys, nodes []*nodeinfo.NodeInfo, gens []int64, state *framework.CycleState) {
	if len(a.gens) != len(nodes) || a.totals[0] == nil {
		// Start over.
		*a = affinityAggregate{gens: make([]int64, len(nodes)), shares: make([][]affinityShare, len(nodes))}
		a.totals = [3]*podaffinity.Counts{{}, {}, {}}
		a.borrowers = [3]*atomic.Int32{new(atomic.Int32), new(atomic.Int32), new(atomic.Int32)}
	}
	counts := make([]int, len(keys.incoming))
	now, changed, ok := state.ChangedNodes(nodes, a.version)
	a.version = now
	if ok {
		for _, p := range changed {
			a.visit(s, keys, nodes[p], int(p), gens, counts)
		}
		return
	}
	for p, ni := range nodes {
		a.visit(s, keys, ni, p, gens, counts)
	}
}

// visit counts position p, holding ni, again if it changed since a
// counted it. counts is scratch space for the incoming keys.
func (a *affinityAggregate) visit(s *interPodAffinityState, keys countingKeys, ni *nodeinfo.NodeInfo, p int, gens []int64, counts []int) {
	if gens != nil && a.gens[p] == gens[p] && gens[p] != 0 {
		return
	}
	if a.gens[p] == ni.Generation() && ni.Generation() != 0 {
		return
	}
	if a.gens[p] != 0 && a.shift(s, ni, p) {
		a.gens[p] = ni.Generation()
		return
	}
	a.gens[p] = ni.Generation()
	for _, sh := range a.shares[p] {
		a.add(sh.which, sh.key, sh.value, -sh.n)
	}
	one := a.one(s)
	one.countNode(ni, keys, counts)
	a.shares[p] = a.addCounts(one, a.shares[p][:0])
}

// addCounts adds what one counted to the totals and to shares, a
// position's, and returns them; nil when none is left.
func (a *affinityAggregate) addCounts(one *interPodAffinityState, shares []affinityShare) []affinityShare {
	for which, c := range [...]*podaffinity.Counts{one.existingAnti, one.affinityCounts, one.antiAffinityCounts} {
		c.Each(func(key, value string, n int64) {
			a.add(which, key, value, n)
			shares = addShare(shares, affinityShare{which: which, key: key, value: value, n: n})
		})
	}
	if len(shares) == 0 {
		return nil
	}
	return shares
}

// shift brings position p's counts up to date with ni by the pods added
// to it and removed from it since a counted it, when ni knows them and
// nothing else changed (NodeInfo.PodChangesSince): each pod counts, with its
// sign, what it counted or will count placed there. It reports false,
// having changed nothing, otherwise.
func (a *affinityAggregate) shift(s *interPodAffinityState, ni *nodeinfo.NodeInfo, p int) bool {
	if ni.Node() == nil {
		return false
	}
	// Without terms of the pod's own, only pods with required
	// anti-affinity count anything: most changes then count nothing.
	hasTerms := len(s.affinity)+len(s.antiAffinity) > 0
	changes, ok := ni.PodChangesSince(a.gens[p])
	if !ok {
		return false
	}
	var one *interPodAffinityState
	nodeLabels := ni.Labels()
	for _, ch := range changes {
		terms := ch.Pod.AffinityTerms()
		if !hasTerms && len(terms.RequiredAntiAffinity) == 0 {
			continue
		}
		if one == nil {
			one = a.one(s)
		}
		one.count(ch.Pod.Pod, terms, nodeLabels, int64(ch.Sign))
	}
	if one != nil {
		a.shares[p] = a.addCounts(one, a.shares[p])
	}
	return true
}

// addShare adds sh to the share of shares for the same counts and
// topology pair, dropping it when it comes to 0.
func addShare(shares []affinityShare, sh affinityShare) []affinityShare {
	for i := range shares {
		if o := &shares[i]; o.which == sh.which && o.key == sh.key && o.value == sh.value {
			if o.n += sh.n; o.n == 0 {
				last := len(shares) - 1
				shares[i] = shares[last]
				shares = shares[:last]
			}
			return shares
		}
	}
	return append(shares, sh)
}
