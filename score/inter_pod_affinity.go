package score

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// interPodAffinityScoresKey holds, per topology key and value, what a node
// in that domain scores.
var interPodAffinityScoresKey = fwk.NewStateKey[*podaffinity.Counts]()

// InterPodAffinity prefers nodes whose topology domains hold the pods the
// pod prefers to be near, and avoids those holding pods it prefers to
// avoid. A domain scores, for each placed pod in it:
//
//   - plus or minus the weight of each of the pod's preferred affinity or
//     anti-affinity terms the placed pod matches;
//   - plus HardPodAffinityWeight for each of the placed pod's required
//     affinity terms the pod matches;
//   - plus or minus the weight of each of the placed pod's preferred
//     affinity or anti-affinity terms the pod matches.
//
// A node's raw score sums its domains' scores; NormalizeScore maps the
// lowest raw score among the feasible nodes to 0 and the highest to 100.
// The zero value uses kube-scheduler's default arguments and is safe for
// concurrent use.
type InterPodAffinity struct {
	// hardWeight is hardPodAffinityWeight minus its default, so that the
	// zero value has the default.
	hardWeight      int32
	ignorePreferred bool
	// Features: ListedNamespacesOnly is read. nil is [feature.Default].
	Features *feature.Features

	aggregates scoreAggregates
}

var (
	_ fwk.PreScorePlugin       = (*InterPodAffinity)(nil)
	_ fwk.NormalizeScorePlugin = (*InterPodAffinity)(nil)
)

// NewInterPodAffinity returns the scorer configured by args, kube-scheduler's
// own type: unset fields (and nil args) take kube-scheduler's defaults, and
// an out-of-range hardPodAffinityWeight is an error in kube-scheduler's
// words.
func NewInterPodAffinity(args *configv1.InterPodAffinityArgs) (*InterPodAffinity, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &InterPodAffinity{hardWeight: *a.HardPodAffinityWeight - podaffinity.DefaultHardPodAffinityWeight, ignorePreferred: a.IgnorePreferredTermsOfExistingPods}, nil
}

// Name returns "InterPodAffinity".
func (*InterPodAffinity) Name() string { return names.InterPodAffinity }

// PodOnlyPreScore reports true: like kube-scheduler's, PreScore reads every
// node of the cycle (from the state), never just the feasible ones it is
// given, so it may run before filtering.
func (*InterPodAffinity) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// PreScore sums, once per pod, the score of every topology domain over all
// the nodes of the cycle (state.AllNodes; nodes only when the state has
// none, as when called outside a framework). It visits every pod when the
// pod has preferred terms, otherwise only pods with affinity of their own.
//
// It returns Skip when IgnorePreferredTermsOfExistingPods is set and the
// pod has no preferred terms, or when no term matched on any node carrying
// its topology key; Error when a term of the pod does not parse or the
// namespace lister fails or ctx is done.
func (pl *InterPodAffinity) PreScore(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) *fwk.Status {
	if all := state.AllNodes(); len(all) > 0 {
		nodes = all
	}
	scores, status := pl.domainScores(ctx, state, pod, nodes)
	if status != nil {
		return status
	}
	interPodAffinityScoresKey.Write(state, scores)
	return nil
}

// domainScores computes what PreScore writes, or Skip or Error. The nodes
// are scored on the state's workers, each into scores of its own, merged
// at the end.
func (pl *InterPodAffinity) domainScores(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*podaffinity.Counts, *fwk.Status) {
	lister := state.Listers().Namespaces
	a := pod.Spec.Affinity
	hasPreferred := a != nil &&
		((a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
			(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0))
	if pl.ignorePreferred && !hasPreferred {
		return nil, skip
	}
	terms, err := podaffinity.Parse(pod)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("failed to parse pod: %w", err))
	}
	if err := resolveWeighted(terms.PreferredAffinity, lister, feature.Of(pl.Features).ListedNamespacesOnly); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("updating PreferredAffinityTerms: %w", err))
	}
	if err := resolveWeighted(terms.PreferredAntiAffinity, lister, feature.Of(pl.Features).ListedNamespacesOnly); err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("updating PreferredAntiAffinityTerms: %w", err))
	}
	scorer := domainScorer{
		pod:        pod,
		terms:      &terms,
		nsLabels:   podaffinity.NamespaceLabels(lister, pod.Namespace),
		hardWeight: pl.hardWeight + podaffinity.DefaultHardPodAffinityWeight,
	}
	// Without preferred terms of the pod's own, only placed pods' terms
	// can score, and only nodes holding such pods need a visit; what
	// they give, an aggregate kept across cycles can add up.
	if !hasPreferred {
		all, gens := nodes, cycle.Of(state).NodeGenerations(nodes)
		nodes = cycle.Of(state).NodesWithPodAffinity(nodes)
		if len(nodes) >= minScoreAggregateNodes || (gens != nil && len(nodes) >= minScoreAggregateNodesWithGens) {
			if a, giveBack := pl.aggregates.Take(scoringKey(&scorer)); a != nil {
				defer giveBack()
				if err := ctx.Err(); err != nil {
					return nil, fwk.AsStatus(err)
				}
				a.count(&scorer, all, gens, state)
				if a.matches == 0 {
					return nil, skip
				}
				return a.totals.Clone(), nil
			}
		}
	}
	partial := make([]domainScorer, cycle.Of(state).Workers(len(nodes)))
	for i := range partial {
		partial[i] = scorer
		partial[i].scores = &podaffinity.Counts{}
	}
	cycle.Of(state).ParallelChunks(ctx, len(nodes), func(worker, start, end int) {
		d := &partial[worker]
		for _, ni := range nodes[start:end] {
			// A node without pods scores nothing; every score is by a node label.
			nodeLabels := ni.Labels()
			if len(ni.Pods()) == 0 || ni.Node() == nil || len(nodeLabels) == 0 {
				continue
			}
			pods := ni.PodsWithAffinity()
			if hasPreferred {
				pods = ni.Pods()
			}
			for _, pi := range pods {
				d.add(pi, nodeLabels)
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, fwk.AsStatus(err)
	}
	scores, matched := partial[0].scores, false
	for i := range partial {
		matched = matched || partial[i].matched
		if i > 0 {
			scores.Merge(partial[i].scores)
		}
	}
	if !matched {
		return nil, skip
	}
	return scores, nil
}

func resolveWeighted(terms []podaffinity.WeightedTerm, lister podaffinity.NamespaceLister, listedOnly bool) error {
	for i := range terms {
		var err error
		if terms[i].Term, err = terms[i].Resolve(lister, listedOnly); err != nil {
			return err
		}
	}
	return nil
}

// domainScorer accumulates domain scores for one incoming pod.
type domainScorer struct {
	pod        *v1.Pod
	terms      *podaffinity.Terms // the pod's, resolved
	nsLabels   labels.Set         // of the pod's namespace
	hardWeight int32
	scores     *podaffinity.Counts
	// matched is set once any term scored: a score may cancel out to zero
	// and leave scores empty, yet kube-scheduler then still scores.
	matched bool
}

// add scores placed, bound to a node with nodeLabels.
func (d *domainScorer) add(pi *nodeinfo.PodInfo, nodeLabels map[string]string) {
	placed := pi.Pod
	// The pod's own terms are resolved: no namespace labels needed.
	d.addWeighted(d.terms.PreferredAffinity, placed, nil, nodeLabels, 1)
	d.addWeighted(d.terms.PreferredAntiAffinity, placed, nil, nodeLabels, -1)

	theirs := pi.AffinityTerms() // a list that does not parse is empty
	if d.hardWeight > 0 {
		for i := range theirs.RequiredAffinity {
			d.addTerm(&theirs.RequiredAffinity[i], d.hardWeight, d.pod, d.nsLabels, nodeLabels, 1)
		}
	}
	d.addWeighted(theirs.PreferredAffinity, d.pod, d.nsLabels, nodeLabels, 1)
	d.addWeighted(theirs.PreferredAntiAffinity, d.pod, d.nsLabels, nodeLabels, -1)
}

func (d *domainScorer) addWeighted(terms []podaffinity.WeightedTerm, pod *v1.Pod, nsLabels labels.Set, nodeLabels map[string]string, sign int32) {
	for i := range terms {
		d.addTerm(&terms[i].Term, terms[i].Weight, pod, nsLabels, nodeLabels, sign)
	}
}

func (d *domainScorer) addTerm(t *podaffinity.Term, weight int32, pod *v1.Pod, nsLabels labels.Set, nodeLabels map[string]string, sign int32) {
	if !t.Matches(pod, nsLabels) {
		return
	}
	if v, ok := nodeLabels[t.TopologyKey]; ok {
		// The product is an int32, as in kube-scheduler.
		d.scores.Add(t.TopologyKey, v, int64(weight*sign))
		d.matched = true
	}
}

// Score sums the scores of node's domains. Without PreScore's state (nil
// state, as in unit tests) it computes them first over the state's nodes,
// or over node alone if the state has none. Scores may be negative until
// normalized. With state from PreScore it does not allocate.
func (pl *InterPodAffinity) Score(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	node := ni.Node()
	if node == nil {
		return 0, errNilNode
	}
	scores, ok := interPodAffinityScoresKey.Read(state)
	if !ok {
		nodes := state.AllNodes()
		if len(nodes) == 0 {
			nodes = []*nodeinfo.NodeInfo{ni}
		}
		var status *fwk.Status
		if scores, status = pl.domainScores(ctx, state, pod, nodes); status != nil {
			if status.IsSkip() {
				return 0, nil
			}
			return 0, status
		}
	}
	return scores.Sum(ni.Labels()), nil
}

// NormalizeScore maps scores linearly so the lowest becomes 0 and the
// highest 100, rounding down; equal scores all become 0.
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, _ []*nodeinfo.NodeInfo, scores []int64) *fwk.Status {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	spread := hi - lo
	for i, s := range scores {
		var f float64
		if spread > 0 {
			// The same float64 arithmetic as kube-scheduler, so that
			// truncation agrees.
			f = float64(fwk.MaxNodeScore) * (float64(s-lo) / float64(spread))
		}
		scores[i] = int64(f)
	}
	return nil
}
