package framework

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Explanation is [Framework.Explain]'s account of one pod over a list of
// nodes.
type Explanation struct {
	// Pod is the pod explained.
	Pod *v1.Pod
	// Result and Err are what [Framework.Schedule] answers for the pod on
	// the same nodes: kube-scheduler's decision, or a *[FitError] whose
	// Error is kube-scheduler's message. Exactly one is set.
	Result *Result
	Err    error
	// PreFilter holds each PreFilter plugin's verdict, in profile order:
	// nil for a pass, Skip when the plugin has nothing to check for this
	// pod (its Filter does not run), a rejection of every node otherwise.
	PreFilter []PluginVerdict
	// Filters names the Filter plugins, in the order they run: the columns
	// of each node's Filters.
	Filters []string
	// Scores names the score plugins that scored the pod, with their
	// weights: the columns of each node's Scores.
	Scores []PluginInfo
	// Nodes explains every node, in the order given.
	Nodes []NodeExplanation
}

// NodeExplanation is one node's part of an [Explanation].
type NodeExplanation struct {
	// Name is the node's name.
	Name string
	// Status is kube-scheduler's verdict on the node: the first rejection,
	// worded and attributed as in the FitError's Diagnosis, or nil when
	// the node is feasible.
	Status *fwk.Status
	// Filters holds every Filter plugin's verdict on the node, in the
	// order of Explanation.Filters. This is kubesched's extra:
	// kube-scheduler stops at the first rejection, so the plugins after it
	// never run there. A plugin PreFilter skipped has a Skip status; one
	// that failed on a node the cycle had rejected before reaching it has
	// its Error status. Empty when PreFilter rejected the pod, since then
	// no filter runs.
	Filters []PluginVerdict
	// ExcludedByPreFilter is set for a node a PreFilter plugin ruled out
	// by naming the nodes worth filtering (NodeAffinity, for one): its
	// Status is then kube-scheduler's shared verdict on such nodes.
	ExcludedByPreFilter bool
	// Rejections counts the Filter plugins that rejected the node, and
	// counts 1 for a node PreFilter ruled out that no filter rejects.
	Rejections int
	// Scores holds each score plugin's score for a feasible node, in the
	// order of Explanation.Scores; empty for a node that is not feasible.
	Scores []ExplainedScore
	// Total is the sum of the weighted scores.
	Total int64
}

// PluginVerdict is one plugin's verdict, with the details it could give.
type PluginVerdict struct {
	// Plugin is the Filter plugin's name.
	Plugin string
	// Status is the plugin's verdict on the node: nil when it passed,
	// Skip when PreFilter skipped the plugin for this pod.
	Status *fwk.Status
	// Details are the facts behind a rejection, from a plugin that
	// implements [FilterExplainer]; empty for a plugin that does not, and
	// for any verdict but a rejection.
	Details []fwk.Detail
}

// ExplainedScore is one score plugin's score for a node at each step.
type ExplainedScore struct {
	// Plugin is the score plugin's name.
	Plugin string
	// Raw is the plugin's Score, Normalized the same after NormalizeScore
	// (Raw for a plugin that does not normalize), Weighted that times the
	// plugin's weight: the part of the node's total.
	Raw, Normalized, Weighted int64
}

// Explain runs the scheduling cycle for pod over nodes and says, for every
// node, what each Filter plugin thinks of it and, for the feasible ones,
// what each score plugin gives it.
//
// The decision (Explanation.Result or Err) is [Framework.Schedule]'s on the
// same nodes, so with a percentageOfNodesToScore below 100 on a large
// cluster it may rest on fewer nodes than are explained; the explanation
// itself filters every node and scores every feasible one (kube-scheduler
// skips scoring when a single node is feasible; Explain does not). The
// verdicts come from the plugins' Filter calls after one PreFilter, as in
// the cycle; a node with nominated pods is judged as kube-scheduler judges
// it (Status), and its per-plugin verdicts are those with the nominated
// pods added, then without where the plugin passed. Extenders take part
// in the decision only.
//
// Explain costs a Schedule and then every filter on every node: use it to
// answer a person, not in a scheduling loop. It advances the framework's
// rotating search start as Schedule does. It returns an error for what
// Schedule rejects as bad input, a cancelled context, or a plugin error.
func (f *Framework) Explain(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*Explanation, error) {
	res, err := f.Schedule(ctx, pod, nodes)
	var fitErr *FitError
	if err != nil && !errors.As(err, &fitErr) {
		return nil, err
	}
	idx, err2 := f.indexSlice(nodes)
	if err2 != nil {
		return nil, fmt.Errorf("explain: %w", err2)
	}
	e := &Explanation{Pod: pod, Result: res, Err: err, Nodes: make([]NodeExplanation, len(nodes))}
	for i, ni := range nodes {
		e.Nodes[i].Name = ni.Name()
	}
	state := endable(f.newCycleState(nodes, idx))
	defer endCycle(state)
	preRes, status, narrowed := f.explainPreFilter(ctx, state, pod, nodes, e)
	if status != nil {
		if !status.IsRejected() {
			return nil, status.AsError()
		}
		for i := range e.Nodes {
			e.Nodes[i].Status = status
		}
		return e, nil
	}
	f.recordNominations(state, pod)
	filters := cycleOf(state).plugins.filters
	active := make(map[string]bool, len(filters))
	for _, pl := range filters {
		active[pl.Name()] = true
	}
	for _, pl := range f.filters {
		e.Filters = append(e.Filters, pl.Name())
	}
	var excluded *fwk.Status
	if !preRes.AllNodes() {
		// The verdict Schedule gave the nodes PreFilter ruled out, which
		// names the plugin of a failed nominated node too.
		if fitErr != nil {
			excluded = fitErr.Diagnosis.absent
		} else {
			excluded = res.Diagnosis.absent
		}
		if excluded == nil {
			d := Diagnosis{UnschedulablePlugins: narrowed}
			f.narrow(idx, preRes, &d)
			excluded = d.absent
		}
	}
	nominated, _ := nominatedPodsKey.Read(state)
	var firstErr error
	errs := make([]error, len(nodes))
	parallel.Chunks(ctx, f.parallelism, len(nodes), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			errs[i] = f.explainNode(ctx, state, pod, nodes[i], nominated[nodes[i].Name()], active, excluded, preRes, &e.Nodes[i])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := f.explainScores(ctx, state, pod, nodes, idx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// explainPreFilter runs the PreFilter plugins as runPreFilter does,
// recording each one's verdict in e.
func (f *Framework) explainPreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, e *Explanation) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	res, status, narrowed := f.runPreFilter(ctx, state, pod, nodes)
	// runPreFilter stops at the first unresolvable rejection; the verdicts
	// are read again from a state of its own, plugin by plugin, so that
	// each plugin's own answer is shown.
	probe := endable(f.newCycleState(nodes, indexOf(state)))
	defer endCycle(probe)
	for _, pl := range f.preFilters {
		r, s := pl.PreFilter(ctx, probe, pod, nodes)
		v := PluginVerdict{Plugin: pl.Name()}
		switch {
		case s.IsSkip():
			v.Status = s.WithPlugin(pl.Name())
		case !s.IsSuccess():
			v.Status = s.WithPlugin(pl.Name())
		case !r.AllNodes():
			msg := fmt.Sprintf("keeps %d of the %d nodes", r.NodeNames.Len(), len(nodes))
			if r.NodeNames.Len() <= 5 {
				msg = "keeps only the nodes named " + strings.Join(sets.List(r.NodeNames), ", ")
			}
			v.Details = []fwk.Detail{{Message: msg}}
		}
		e.PreFilter = append(e.PreFilter, v)
	}
	return res, status, narrowed
}

// explainNode judges one node: kube-scheduler's verdict, then every
// filter's.
func (f *Framework) explainNode(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, nominated []*nodeinfo.PodInfo, active map[string]bool, excluded *fwk.Status, preRes *fwk.PreFilterResult, out *NodeExplanation) error {
	filters := cycleOf(state).plugins.filters
	// The pod's nominated node is filtered first, as in kube-scheduler,
	// whatever PreFilter narrowed the search to.
	kept := preRes.AllNodes() || preRes.NodeNames.Has(ni.Name()) || ni.Name() == pod.Status.NominatedNodeName
	withState, withNode := state, ni
	switch {
	case !kept:
		out.Status, out.ExcludedByPreFilter = excluded, true
	case len(nominated) > 0:
		out.Status = f.runFiltersWithNominatedPods(ctx, filters, state, pod, ni, nominated)
		var err error
		if withState, withNode, err = f.addNominatedPods(ctx, state, pod, ni, nominated); err != nil {
			return err
		}
	default:
		out.Status = runFilters(ctx, filters, state, pod, ni)
	}
	if out.Status != nil && !out.Status.IsRejected() {
		return out.Status.AsError()
	}
	out.Filters = make([]PluginVerdict, 0, len(f.filters))
	for _, pl := range f.filters {
		v := PluginVerdict{Plugin: pl.Name()}
		if !active[pl.Name()] {
			v.Status = fwk.NewStatus(fwk.Skip).WithPlugin(pl.Name())
			out.Filters = append(out.Filters, v)
			continue
		}
		// The state and node the verdict comes from, to explain it on.
		judgedState, judgedNode := withState, withNode
		s := pl.Filter(ctx, withState, pod, withNode)
		if s.IsSuccess() && withNode != ni {
			judgedState, judgedNode = state, ni
			s = pl.Filter(ctx, state, pod, ni)
		}
		if !s.IsSuccess() {
			v.Status = filterStatus(pl, s)
			if !v.Status.IsRejected() {
				// kube-scheduler's cycle, which stopped at an earlier
				// rejection, never met this error: it is the plugin's
				// verdict, not the cycle's.
				out.Filters = append(out.Filters, v)
				continue
			}
			out.Rejections++
			if x, ok := pl.(fwk.FilterExplainer); ok {
				v.Details = x.ExplainFilter(ctx, judgedState, pod, judgedNode)
			}
		}
		out.Filters = append(out.Filters, v)
	}
	if !kept && out.Rejections == 0 {
		// PreFilter ruled the node out although no filter rejects it.
		out.Rejections = 1
	}
	return nil
}

// explainScores scores every feasible node through the cycle's own
// scoring, keeping each plugin's scores from before normalization.
func (f *Framework) explainScores(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, idx nodeIndex, e *Explanation) error {
	var found searched
	for i, ni := range nodes {
		if e.Nodes[i].Status == nil {
			found.nodes = append(found.nodes, ni)
			found.pos = append(found.pos, int32(i))
		}
	}
	if len(found.nodes) == 0 || len(f.scores) == 0 {
		return nil
	}
	sc := f.newScoring()
	defer sc.release()
	var before []int64
	sc.before = &before
	var t scoreTable
	totals, err := f.scoreNodes(ctx, state, pod, found, sc, idx, &t)
	if err != nil {
		return err
	}
	n := len(found.nodes)
	for _, pl := range t.plugins {
		e.Scores = append(e.Scores, PluginInfo{Name: pl.name, Points: []ExtensionPoint{Score}, Weight: int32(pl.weight)})
	}
	for j, p := range found.pos {
		out := &e.Nodes[p]
		out.Total = totals[j]
		out.Scores = make([]ExplainedScore, len(t.plugins))
		for k, pl := range t.plugins {
			norm := int64(t.score(k, j))
			out.Scores[k] = ExplainedScore{Plugin: pl.name, Raw: before[k*n+j], Normalized: norm, Weighted: norm * pl.weight}
		}
	}
	return nil
}

// Closest returns the nodes that are not feasible, closest to fitting
// first: fewest rejecting Filter plugins, then the smallest resource
// shortfall (the sum over the resources a node lacks of the missing
// share of what the pod requests), then the order given. At most n are
// returned; n < 0 returns all.
func (e *Explanation) Closest(n int) []*NodeExplanation {
	type ranked struct {
		node      *NodeExplanation
		shortfall float64
	}
	var rs []ranked
	for i := range e.Nodes {
		ne := &e.Nodes[i]
		if ne.Status == nil {
			continue
		}
		rs = append(rs, ranked{node: ne, shortfall: ne.shortfall()})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(a.node.Rejections, b.node.Rejections); c != 0 {
			return c
		}
		return cmp.Compare(a.shortfall, b.shortfall)
	})
	if n >= 0 && len(rs) > n {
		rs = rs[:n]
	}
	out := make([]*NodeExplanation, len(rs))
	for i, r := range rs {
		out[i] = r.node
	}
	return out
}

// shortfall sums the missing share of each resource the node lacks.
func (ne *NodeExplanation) shortfall() float64 {
	var sum float64
	for _, v := range ne.Filters {
		for _, d := range v.Details {
			if s := d.Shortfall; s != nil && s.Requested > 0 {
				sum += float64(s.Missing()) / float64(s.Requested)
			}
		}
	}
	return sum
}
