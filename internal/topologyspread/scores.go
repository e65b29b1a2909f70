package topologyspread

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/podcount"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Scores holds what scoring one pod's soft constraints needs: the matching
// pods of each domain of the feasible nodes, and each constraint's topology
// weight. Build it once per pod with [NewScores]; its methods may then run
// concurrently.
type Scores struct {
	constraints []Constraint
	namespace   string
	// ignored are the feasible nodes missing a topology key, when every key
	// is required: they score 0.
	ignored sets.Set[string]
	// counts[i] maps each domain of constraint i among the feasible nodes to
	// the matching pods of the whole cluster in it. Hostname constraints
	// have none: each node counts its own pods when scored.
	counts []map[string]int64
	// weights[i] is log(domains of constraint i + 2), so that constraints
	// with few domains (zones) are not drowned by those with many (hosts).
	weights []float64
	// keys[i] is constraint i's key for countMatching.
	keys []podcount.Key
	// raw, when not nil, are the feasible nodes' raw scores, in the
	// order NewScores was given them (see [Scores.Batch]); half the
	// memory of int64, and raw64 holds them instead in the unlikely
	// event that one does not fit.
	raw   []int32
	raw64 []int64
}

// NewScores prepares the scoring of pod's soft constraints cs over
// feasible (the nodes that passed filtering), counting matching pods over
// all (every node of the cycle). With requireAll, nodes lacking any
// topology key are ignored; without it (system default constraints), a
// node missing the zone label is still scored by hostname. It returns an
// error only if ctx is cancelled.
//
// positions, when not nil, gives the positions in all of nodes (as
// fwk.cycle.Hooks.NodePositions does). With it, and counts that are
// a sum of node shares (see cacheable), every feasible node is scored
// here at once from an aggregate of inc's kept across cycles, and
// [Scores.Batch] hands the scores out. inc's generations are all's.
func NewScores(ctx context.Context, pod *v1.Pod, cs []Constraint, requireAll bool, all, feasible []*nodeinfo.NodeInfo, positions func([]*nodeinfo.NodeInfo) ([]int32, bool), inc Incremental) (*Scores, error) {
	s := &Scores{
		constraints: cs,
		namespace:   pod.Namespace,
		ignored:     sets.New[string](),
		counts:      make([]map[string]int64, len(cs)),
		weights:     make([]float64, len(cs)),
		keys:        make([]podcount.Key, len(cs)),
	}
	for i := range cs {
		s.keys[i] = matchKey(cs[i].Selector, pod.Namespace)
	}
	for i := range cs {
		s.counts[i] = map[string]int64{}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.scoreAll(pod, requireAll, all, feasible, positions, inc) {
		return s, nil
	}
	domains := make([]int, len(cs))
	for _, ni := range feasible {
		node := ni.Node()
		if node == nil {
			continue
		}
		nodeLabels := ni.Labels() // the NodeInfo's copy: one cache miss fewer
		if requireAll && !hasAllKeys(nodeLabels, cs) {
			s.ignored.Insert(node.Name)
			continue
		}
		for i := range cs {
			if cs[i].TopologyKey == v1.LabelHostname {
				continue
			}
			// A missing label reads as the domain "", as in kube-scheduler.
			v := nodeLabels[cs[i].TopologyKey]
			if _, ok := s.counts[i][v]; !ok {
				s.counts[i][v] = 0
				domains[i]++
			}
		}
	}
	for i := range cs {
		n := domains[i]
		if cs[i].TopologyKey == v1.LabelHostname {
			n = len(feasible) - s.ignored.Len()
		}
		s.weights[i] = math.Log(float64(n + 2))
	}

	// Only domains of feasible nodes are worth counting; the maps are
	// read-only while counting.
	want := func(i int, value string) bool {
		_, ok := s.counts[i][value]
		return ok
	}
	e := eligibilityOf(pod)
	// Hostname constraints are counted per node when scored.
	counted := make([]bool, len(cs))
	for i := range cs {
		counted[i] = cs[i].TopologyKey != v1.LabelHostname
	}
	counts, err := countDomains(ctx, pod, cs, &e, all, inc, requireAll, want, counted)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		for value, n := range counts[i] {
			s.counts[i][value] += int64(n)
		}
	}
	return s, nil
}

// scoreAll is NewScores' way through an aggregate: it scores every
// feasible node into s.raw and fills the rest of s as the per-node way
// would. It reports false, having changed nothing, when it cannot: no
// position function, a node without a position, counts that are not a
// sum of shares, no aggregates, or the aggregate busy with another cycle.
func (s *Scores) scoreAll(pod *v1.Pod, requireAll bool, all, feasible []*nodeinfo.NodeInfo, positions func([]*nodeinfo.NodeInfo) ([]int32, bool), inc Incremental) bool {
	cs := s.constraints
	if positions == nil || inc.Aggregates == nil || !cacheable(pod, cs) {
		return false
	}
	at, ok := positions(feasible)
	if !ok {
		return false
	}
	a, giveBack := inc.Aggregates.values.Take(aggregateKey(pod.Namespace, cs, requireAll, nil))
	if a == nil {
		return false
	}
	defer giveBack()
	a.update(pod, cs, s.keys, all, inc.Gens, inc.State, requireAll, nil)

	// The domains of the feasible nodes, with their matching pods. A node
	// counted for no constraint (dom -1) has no node object, or lacks a
	// topology key when every key is required; it is counted for all or
	// none. Constraint by constraint: each reads one array.
	dom0 := a.dom[0]
	host := make([]bool, len(cs))
	for c := range cs {
		host[c] = cs[c].TopologyKey == v1.LabelHostname
	}
	// Every node counted under the first constraint: none ignored.
	if a.uncounted > 0 {
		for j, i := range at {
			if dom0[i] < 0 && feasible[j].Node() != nil {
				s.ignored.Insert(feasible[j].Name())
			}
		}
	}
	domains := make([]int, len(cs))
	for c := range cs {
		if host[c] {
			domains[c] = len(feasible) - s.ignored.Len()
			continue
		}
		if len(at) == len(all) {
			// Every node is feasible: the domains are those with a
			// counted node.
			for d, value := range a.values[c] {
				if a.members[c][d] > 0 {
					domains[c]++
					s.counts[c][value] = int64(a.sums[c][d])
				}
			}
			continue
		}
		dom, seen := a.dom[c], make([]bool, len(a.values[c]))
		for _, i := range at {
			if d := dom[i]; d >= 0 && !seen[d] {
				seen[d] = true
				domains[c]++
				s.counts[c][a.values[c][d]] = int64(a.sums[c][d])
			}
		}
	}
	for c := range cs {
		s.weights[c] = math.Log(float64(domains[c] + 2))
	}

	// Per constraint: the domain "", which also stands for a missing
	// label (scoring nothing), and each domain's term of the sum, as
	// Score adds it; a hostname constraint's term is per node.
	empty := make([]int32, len(cs))
	terms := make([][]float64, len(cs))
	skew := make([]float64, len(cs))
	for c := range cs {
		skew[c] = float64(cs[c].MaxSkew - 1)
		empty[c] = -2 // no domain is "": matches no domain id, nor -1 (not counted)
		if d, ok := a.ids[c][""]; ok {
			empty[c] = d
		}
		if !host[c] {
			terms[c] = make([]float64, len(a.values[c]))
			for d := range terms[c] {
				terms[c][d] = float64(int64(a.sums[c][d]))*s.weights[c] + skew[c]
			}
		}
	}
	// Each feasible node's raw score, as Score works it out, from its
	// domains or, for a hostname constraint, its matching pods.
	rawOf := func(j int, i int32) int64 {
		var sum float64
		for c := range cs {
			d := a.dom[c][i]
			switch {
			case d == empty[c] && !hasKey(feasible[j], cs[c].TopologyKey):
				continue
			case host[c]:
				sum += float64(int64(a.share[c][i]))*s.weights[c] + skew[c]
			default:
				sum += terms[c][d]
			}
		}
		return int64(math.Round(sum))
	}
	s.raw = make([]int32, len(at))
	// A node's score is a function of its domain, or its matching pods,
	// under each constraint: nodes alike (the same alike key, see
	// aggregate.alike) are worked out once.
	a.stamp++
	if a.stamp == 0 { // wrapped: forget every stamp
		clear(a.stamps)
		a.stamp = 1
	}
	alike, stamps, raws, stamp, raw := a.alike, a.stamps, a.raws, a.stamp, s.raw
	for j, i := range at {
		// Most nodes: alike some node scored before, in 32 bits.
		if k := alike[i]; k >= 0 && stamps[k] == stamp && s.raw64 == nil {
			raw[j] = int32(raws[k])
			continue
		}
		if dom0[i] < 0 {
			continue // counted for no constraint: ignored, or no node
		}
		var v int64
		if k := alike[i]; k < 0 {
			v = rawOf(j, i)
		} else {
			v = rawOf(j, i)
			// Kept only when it fits in 32 bits, for the loop above.
			if v == int64(int32(v)) {
				raws[k], stamps[k] = v, stamp
			}
		}
		raw[j] = int32(v)
		if s.raw64 != nil {
			s.raw64[j] = v
		} else if v != int64(int32(v)) {
			s.raw64 = make([]int64, len(at))
			for jj := range j {
				s.raw64[jj] = int64(s.raw[jj])
			}
			s.raw64[j] = v
		}
	}
	return true
}

// hasKey reports whether ni's node has the label key.
func hasKey(ni *nodeinfo.NodeInfo, key string) bool {
	_, ok := ni.Labels()[key]
	return ok
}

// Batch sets scores[i] to the raw score of the (start+i)-th feasible
// node NewScores was given, as [Scores.Score] would, and reports true
// when NewScores prepared them all; false otherwise. It may run
// concurrently.
func (s *Scores) Batch(start int, scores []int64) bool {
	if s.raw == nil || start < 0 || start+len(scores) > len(s.raw) {
		return false
	}
	if s.raw64 != nil {
		copy(scores, s.raw64[start:])
		return true
	}
	for i, v := range s.raw[start : start+len(scores)] {
		scores[i] = int64(v)
	}
	return true
}

// Score returns node's raw score, lower being better: for each constraint
// whose topology key the node has, its domain's matching pods times the
// constraint's weight, plus maxSkew-1 to soften small differences; summed
// and rounded. Ignored nodes score 0.
func (s *Scores) Score(ni *nodeinfo.NodeInfo) int64 {
	if s.ignored.Has(ni.Name()) {
		return 0
	}
	var sum float64
	for i := range s.constraints {
		c := &s.constraints[i]
		v, ok := ni.Labels()[c.TopologyKey]
		if !ok {
			continue
		}
		var n int64
		if c.TopologyKey == v1.LabelHostname {
			n = int64(countMatching(ni, c.Selector, s.namespace, s.keys[i]))
		} else {
			n = s.counts[i][v]
		}
		sum += float64(n)*s.weights[i] + float64(c.MaxSkew-1)
	}
	return int64(math.Round(sum))
}

// Normalize turns raw scores into [0, 100], the fewest matching pods
// scoring highest: 100*(max+min-score)/max over the scored nodes, 100 for
// all when max is 0, and 0 for ignored nodes. scores[i] is nodes[i]'s.
//
// As in kube-scheduler, a raw score of -1 (possible only with maxSkew 0)
// is taken for an ignored node's, and negative raw scores can give
// results outside [0, 100], which the framework reports as an error.
func (s *Scores) Normalize(nodes []*nodeinfo.NodeInfo, scores []int64) {
	const ignored = -1
	lowest, highest := int64(math.MaxInt64), int64(0)
	someIgnored := s.ignored.Len() > 0
	if someIgnored {
		for i, ni := range nodes {
			if s.ignored.Has(ni.Name()) {
				scores[i] = ignored
				continue
			}
			lowest = min(lowest, scores[i])
			highest = max(highest, scores[i])
		}
	} else {
		for _, v := range scores {
			lowest = min(lowest, v)
			highest = max(highest, v)
		}
	}
	switch {
	case highest == 0:
		for i, v := range scores {
			scores[i] = fwk.MaxNodeScore
			if v == ignored {
				scores[i] = 0
			}
		}
	case lowest >= ignored && highest-lowest < maxNormalizeTable && int(highest-lowest) < len(scores):
		// Raw scores are counts times a few weights: far fewer values
		// than nodes, each divided once.
		var table [maxNormalizeTable]int64
		span := table[:highest-lowest+1]
		for k := range span {
			span[k] = fwk.MaxNodeScore * (highest - int64(k)) / highest
		}
		for i, v := range scores {
			if v == ignored {
				scores[i] = 0
				continue
			}
			scores[i] = span[v-lowest]
		}
	default:
		for i, v := range scores {
			if v == ignored {
				scores[i] = 0
				continue
			}
			scores[i] = fwk.MaxNodeScore * (highest + lowest - v) / highest
		}
	}
}

// maxNormalizeTable bounds the spread of raw scores [Scores.Normalize]
// divides once per value rather than once per node.
const maxNormalizeTable = 512
