package filter

import (
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/incremental"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/nodeinfo"
)

// minAggregateNodes is how many nodes a count must visit before an
// aggregate, which compares every node of the cycle, repays itself.
const minAggregateNodes = 256

// InterPodAffinity's aggregates remember, per way of counting (the
// pod's namespace, labels and namespace labels, and its required terms),
// the counts of InterPodAffinity's PreFilter over the last node list
// counted and each node's share of them (see package incremental for
// the words). Each plugin holds its own: two frameworks share none.
type affinityAggregates = incremental.ByKey[affinityAggregate]

// affinityAggregate is one way of counting's running totals, used by one
// count at a time.
type affinityAggregate struct {
	positions incremental.Positions
	shares    incremental.Shares[affinityKey]
	// totals are the existing pods' anti-affinity, the pod's affinity and
	// its anti-affinity counts, as newInterPodAffinityState's state holds
	// them, each on loan to the cycles whose state shares it; the state
	// copies a total before AddPod or RemovePod changes it.
	totals [3]*podaffinity.Counts
	loans  [3]incremental.Loan
	// scratch is where one node's share, or the pods changed on it, are
	// counted before they go into shares and totals: emptied and reused.
	scratch interPodAffinityState
	// add is a.add, made once.
	add func(affinityKey, int64)
}

// affinityKey is a topology pair (key, value) in the counts which names.
type affinityKey struct {
	which      int
	key, value string
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
func (a *affinityAggregate) lend(state *fwk.CycleState) (existingAnti, affinityCounts, antiAffinityCounts *podaffinity.Counts) {
	for i := range a.loans {
		a.loans[i].Lend(state)
	}
	return a.totals[0], a.totals[1], a.totals[2]
}

// addTotal adds n to the total for k, copying it first if it is on loan.
func (a *affinityAggregate) addTotal(k affinityKey, n int64) {
	if a.loans[k.which].Out() {
		a.totals[k.which] = a.totals[k.which].Clone()
		a.loans[k.which].Renew()
	}
	a.totals[k.which].Add(k.key, k.value, n)
}

// count brings a up to date with nodes (every node of the cycle, in
// order) for s, the pod's state before counting, counting again the
// nodes that changed since ([incremental.Positions.Sync] for gens and
// state).
func (a *affinityAggregate) count(s *interPodAffinityState, keys countingKeys, nodes []*nodeinfo.NodeInfo, gens []int64, state *fwk.CycleState) {
	if a.positions.Len() != len(nodes) || a.totals[0] == nil {
		// Start over.
		*a = affinityAggregate{totals: [3]*podaffinity.Counts{{}, {}, {}}}
		a.positions.Reset(len(nodes))
		a.shares.Reset(len(nodes))
		a.add = a.addTotal
	}
	counts := make([]int, len(keys.incoming))
	a.positions.Sync(state, nodes, gens, func(p int, ni *nodeinfo.NodeInfo, since int64) {
		if since != 0 && a.shift(s, ni, p, since) {
			return
		}
		a.shares.Drop(p, a.add)
		one := a.one(s)
		one.countNode(ni, keys, counts)
		a.addCounts(one, p)
	})
}

// addCounts adds what one counted to the totals and to position p's
// shares.
func (a *affinityAggregate) addCounts(one *interPodAffinityState, p int) {
	for which, c := range [...]*podaffinity.Counts{one.existingAnti, one.affinityCounts, one.antiAffinityCounts} {
		c.Each(func(key, value string, n int64) {
			a.shares.Add(p, affinityKey{which: which, key: key, value: value}, n, a.add)
		})
	}
}

// shift brings position p's counts up to date with ni by the pods added
// to it and removed from it since a counted it, when ni knows them and
// nothing else changed (NodeInfo.PodChangesSince): each pod counts, with its
// sign, what it counted or will count placed there. It reports false,
// having changed nothing, otherwise.
func (a *affinityAggregate) shift(s *interPodAffinityState, ni *nodeinfo.NodeInfo, p int, since int64) bool {
	if ni.Node() == nil {
		return false
	}
	// Without terms of the pod's own, only pods with required
	// anti-affinity count anything: most changes then count nothing.
	hasTerms := len(s.affinity)+len(s.antiAffinity) > 0
	changes, ok := ni.PodChangesSince(since)
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
		a.addCounts(one, p)
	}
	return true
}
