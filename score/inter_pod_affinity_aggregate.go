package score

import (
	"strconv"
	"strings"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/keyed"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/internal/podcount"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Aggregates pay for themselves once a PreScore would visit this many
// nodes holding pods with affinity terms, or fewer when the cycle knows
// its nodes' generations (then comparing them costs next to nothing).
const (
	minScoreAggregateNodes         = 256
	minScoreAggregateNodesWithGens = 32
)

// InterPodAffinity's aggregates remember, per way of scoring (see scoringKey), the
// domain scores that placed pods' terms give a pod without preferred
// terms of its own, over the last node list scored, and each node's
// share of them, so that scoring again over a list where few nodes
// changed (a simulation placing pod after pod) visits the changed nodes
// alone. As InterPodAffinity's PreFilter aggregates, it compares
// generations only and keeps no NodeInfo alive. Each plugin holds its
// own: two frameworks share none.
type scoreAggregates = keyed.Values[scoreAggregate]

// scoreAggregate is one way of scoring's running totals, used by one
// cycle at a time.
type scoreAggregate struct {
	// gens[p] is the generation of the NodeInfo scored at position p,
	// shares[p] what it added to totals, and matched[p] whether a term
	// of its pods matched (which counts even when the scores cancel).
	gens    []int64
	shares  [][]affinityScore
	matched []bool
	totals  podaffinity.Counts
	// matches is how many positions have matched set.
	matches int
	// scratch is where a visit scores one node, emptied and reused.
	scratch podaffinity.Counts
	// version is the node list's when last scored, when it tells which
	// nodes changed since (framework.CycleState.ChangedNodes): the next
	// count then visits those alone.
	version framework.NodesVersion
}

// affinityScore is n for the topology pair (key, value).
type affinityScore struct {
	key, value string
	n          int64
}

// scoringKey describes a way of scoring for a pod without preferred
// terms: what placed pods' terms are matched against (the pod's
// namespace, labels and namespace labels) and the weight of their
// required affinity terms.
func scoringKey(d *domainScorer) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(d.hardWeight)))
	b.WriteByte(0)
	b.WriteString(d.pod.Namespace)
	b.WriteByte(0)
	podcount.SetText(&b, d.pod.Labels)
	podcount.SetText(&b, d.nsLabels)
	return b.String()
}

// count brings a up to date with nodes (every node of the cycle, in
// order), scoring again, as d would, the nodes that changed since. gens,
// when not nil, are the nodes' generations
// (framework.CycleState.NodeGenerations); state, when not nil, the
// cycle's, which may tell which nodes changed since a last scored, so
// that only they are visited.
func (a *scoreAggregate) count(d *domainScorer, nodes []*nodeinfo.NodeInfo, gens []int64, state *framework.CycleState) {
	if len(a.gens) != len(nodes) {
		*a = scoreAggregate{gens: make([]int64, len(nodes)), shares: make([][]affinityScore, len(nodes)), matched: make([]bool, len(nodes))}
	}
	now, changed, ok := state.ChangedNodes(nodes, a.version)
	a.version = now
	if ok {
		for _, p := range changed {
			a.visit(d, nodes[p], int(p), gens)
		}
		return
	}
	for p, ni := range nodes {
		a.visit(d, ni, p, gens)
	}
}

// visit scores position p, holding ni, again if it changed since a
// scored it.
func (a *scoreAggregate) visit(d *domainScorer, ni *nodeinfo.NodeInfo, p int, gens []int64) {
	if gens != nil && a.gens[p] == gens[p] && gens[p] != 0 {
		return
	}
	if a.gens[p] == ni.Generation() && ni.Generation() != 0 {
		return
	}
	a.gens[p] = ni.Generation()
	for _, sh := range a.shares[p] {
		a.totals.Add(sh.key, sh.value, -sh.n)
	}
	if a.matched[p] {
		a.matches--
	}
	one := *d
	a.scratch.Reset()
	one.scores, one.matched = &a.scratch, false
	// As domainScores visits a node: only its pods with terms, and
	// none on a node without pods, object or labels.
	if nodeLabels := ni.Labels(); len(ni.Pods()) > 0 && ni.Node() != nil && len(nodeLabels) > 0 {
		for _, pi := range ni.PodsWithAffinity() {
			one.add(pi, nodeLabels)
		}
	}
	shares := a.shares[p][:0]
	one.scores.Each(func(key, value string, n int64) {
		shares = append(shares, affinityScore{key: key, value: value, n: n})
		a.totals.Add(key, value, n)
	})
	if len(shares) == 0 {
		shares = nil
	}
	a.shares[p], a.matched[p] = shares, one.matched
	if one.matched {
		a.matches++
	}
}
