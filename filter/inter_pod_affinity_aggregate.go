package filter

import (
	"github.com/kubesched/kubesched/internal/keyed"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/nodeinfo"
)

// minAggregateNodes is how many nodes a count must visit before an
// aggregate, which compares every node of the cycle, repays itself.
const minAggregateNodes = 256

// maxAffinityAggregates bounds how many ways of counting are remembered
// at once; past it one is forgotten.
const maxAffinityAggregates = 64

// affinityAggregates remembers, per way of counting (the pod's namespace,
// labels and namespace labels, and its required terms), the counts of
// InterPodAffinity's PreFilter over the last node list counted and each
// node's share of them, so that counting again over a list where few
// nodes changed (a simulation placing pod after pod, a snapshot updated
// in place) visits the changed nodes alone. Every node's generation is
// still compared.
var affinityAggregates = keyed.New[affinityAggregate](maxAffinityAggregates)

// affinityAggregate is one way of counting's running totals, used by one
// count at a time.
type affinityAggregate struct {
	// gens[p] is the generation of the NodeInfo counted at position p
	// (see the aggregates of package topologyspread: the generation names
	// the content, and no NodeInfo is kept alive), and shares[p] what it
	// counted.
	gens   []int64
	shares [][]affinityShare
	// The totals, as newInterPodAffinityState's state holds them.
	existingAnti, affinityCounts, antiAffinityCounts podaffinity.Counts
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
// than from each node.
func (a *affinityAggregate) count(s *interPodAffinityState, keys countingKeys, nodes []*nodeinfo.NodeInfo, gens []int64) {
	if len(a.gens) != len(nodes) {
		// Start over.
		a.gens, a.shares = make([]int64, len(nodes)), make([][]affinityShare, len(nodes))
		a.existingAnti, a.affinityCounts, a.antiAffinityCounts = podaffinity.Counts{}, podaffinity.Counts{}, podaffinity.Counts{}
	}
	totals := [...]*podaffinity.Counts{&a.existingAnti, &a.affinityCounts, &a.antiAffinityCounts}
	counts := make([]int, len(keys.incoming))
	for p, ni := range nodes {
		if gens != nil && a.gens[p] == gens[p] && gens[p] != 0 {
			continue
		}
		if a.gens[p] == ni.Generation && ni.Generation != 0 {
			continue
		}
		a.gens[p] = ni.Generation
		for _, sh := range a.shares[p] {
			totals[sh.which].Add(sh.key, sh.value, -sh.n)
		}
		one := *s
		one.existingAnti, one.affinityCounts, one.antiAffinityCounts = &podaffinity.Counts{}, &podaffinity.Counts{}, &podaffinity.Counts{}
		one.countNode(ni, keys, counts)
		shares := a.shares[p][:0]
		for which, c := range [...]*podaffinity.Counts{one.existingAnti, one.affinityCounts, one.antiAffinityCounts} {
			c.Each(func(key, value string, n int64) {
				shares = append(shares, affinityShare{which: which, key: key, value: value, n: n})
				totals[which].Add(key, value, n)
			})
		}
		if len(shares) == 0 {
			shares = nil
		}
		a.shares[p] = shares
	}
}
