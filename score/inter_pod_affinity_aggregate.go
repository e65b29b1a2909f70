package score

import (
	"strconv"
	"strings"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/incremental"
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

// InterPodAffinity's aggregates remember, per way of scoring (see
// scoringKey), the domain scores that placed pods' terms give a pod
// without preferred terms of its own, over the last node list scored,
// and each node's share of them (see package incremental for the words).
// Each plugin holds its own: two frameworks share none.
type scoreAggregates = incremental.ByKey[scoreAggregate]

// scoreAggregate is one way of scoring's running totals, used by one
// cycle at a time.
type scoreAggregate struct {
	positions incremental.Positions
	// shares are what each position added to totals, and matched[p]
	// whether a term of its pods matched (which counts even when the
	// scores cancel).
	shares  incremental.Shares[topologyPair]
	matched []bool
	totals  podaffinity.Counts
	// matches is how many positions have matched set.
	matches int
	// scratch is where a visit scores one node, emptied and reused.
	scratch podaffinity.Counts
	// add is totals.Add, made once.
	add func(topologyPair, int64)
}

// topologyPair is a topology key and value.
type topologyPair struct{ key, value string }

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
// order), scoring again, as d would, the nodes that changed since
// ([incremental.Positions.Sync] for gens and state).
func (a *scoreAggregate) count(d *domainScorer, nodes []*nodeinfo.NodeInfo, gens []int64, state *fwk.CycleState) {
	if a.positions.Len() != len(nodes) {
		*a = scoreAggregate{matched: make([]bool, len(nodes))}
		a.positions.Reset(len(nodes))
		a.shares.Reset(len(nodes))
		a.add = func(k topologyPair, n int64) { a.totals.Add(k.key, k.value, n) }
	}
	a.positions.Sync(state, nodes, gens, func(p int, ni *nodeinfo.NodeInfo, _ int64) { a.visit(d, ni, p) })
}

// visit scores position p, holding ni, again.
func (a *scoreAggregate) visit(d *domainScorer, ni *nodeinfo.NodeInfo, p int) {
	a.shares.Drop(p, a.add)
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
	one.scores.Each(func(key, value string, n int64) {
		a.shares.Add(p, topologyPair{key, value}, n, a.add)
	})
	a.matched[p] = one.matched
	if one.matched {
		a.matches++
	}
}
