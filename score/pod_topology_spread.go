package score

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/internal/topologyspread"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// softConstraints caches a pod's ScheduleAnyway constraints from
// PodOnlyPreScore to PreScore: deducing default ones lists Services and
// controllers.
type softConstraints struct{ cs []topologyspread.Constraint }

var (
	spreadSoftKey   = fwk.NewStateKey[*softConstraints]()
	spreadScoresKey = fwk.NewStateKey[*topologyspread.Scores]()
)

var (
	_ fwk.PreScorePlugin       = (*PodTopologySpread)(nil)
	_ fwk.NormalizeScorePlugin = (*PodTopologySpread)(nil)
)

// PodTopologySpread prefers nodes whose domains hold the fewest pods
// matching the pod's ScheduleAnyway topology spread constraints. For each
// constraint whose topology key the node has, the raw score adds the
// matching pods of the node's domain (counted over the whole cluster, but
// only for domains of feasible nodes, and only on nodes passing the
// constraint's inclusion policies) times log(number of domains + 2), plus
// maxSkew-1. Normalizing maps the lowest raw score to 100.
//
// Pods without constraints get the default ones, whose selector comes from
// the Services and controllers selecting the pod, read through
// [fwk.CycleState.Listers]. With the pod's own constraints, or
// defaults from a list, feasible nodes lacking any topology key score 0;
// with system defaults they are scored by the keys they have.
//
// The zero value uses kube-scheduler's default arguments. It is safe for
// concurrent use.
type PodTopologySpread struct {
	defaults   topologyspread.Defaults
	aggregates topologyspread.Aggregates
}

// NewPodTopologySpread returns the scorer configured by args,
// kube-scheduler's own type: unset fields (and nil args) take
// kube-scheduler's defaults, system default constraints; List defaulting
// takes DefaultConstraints, whose selectors are deduced for each pod. args
// are checked as kube-scheduler checks them, and an error lists every
// problem in its words.
func NewPodTopologySpread(args *configv1.PodTopologySpreadArgs) (*PodTopologySpread, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &PodTopologySpread{defaults: topologyspread.NewDefaults(a)}, nil
}

// Name returns "PodTopologySpread".
func (*PodTopologySpread) Name() string { return names.PodTopologySpread }

// PodOnlyPreScore reports whether PreScore will skip pod, the one case in
// which it does not depend on the feasible nodes: when the pod has no soft
// constraints or the cycle has no nodes.
func (pl *PodTopologySpread) PodOnlyPreScore(state *fwk.CycleState, pod *v1.Pod) bool {
	cs, err := pl.soft(state, pod, true)
	// With a nil state PreScore takes its nodes argument for all nodes.
	return err == nil && (len(cs) == 0 || (state != nil && len(state.AllNodes()) == 0))
}

// soft returns pod's ScheduleAnyway constraints, computed once per cycle
// when cache is set. Only the framework's one-at-a-time calls may cache:
// Score runs concurrently.
func (pl *PodTopologySpread) soft(state *fwk.CycleState, pod *v1.Pod, cache bool) ([]topologyspread.Constraint, error) {
	if s, ok := spreadSoftKey.Read(state); ok {
		return s.cs, nil
	}
	cs, err := pl.defaults.Constraints(pod, v1.ScheduleAnyway, state.Listers())
	if err != nil {
		return nil, err
	}
	if cache {
		spreadSoftKey.Write(state, &softConstraints{cs})
	}
	return cs, nil
}

// PreScore counts matching pods per domain of the feasible nodes, over
// every node of the cycle. It returns Skip when the pod has no soft
// constraints (its own, or default ones) or the cycle has no nodes, and
// Error when a selector does not parse or ctx is cancelled. With a nil
// state, nodes stand for every node too.
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) *fwk.Status {
	all := state.AllNodes()
	if state == nil {
		all = nodes
	}
	if len(all) == 0 {
		return skip
	}
	s, err := pl.scores(ctx, state, pod, all, nodes, true)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s == nil {
		return skip
	}
	spreadScoresKey.Write(state, s)
	return nil
}

// scores prepares scoring over feasible; nil when the pod has no soft
// constraints.
func (pl *PodTopologySpread) scores(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, all, feasible []*nodeinfo.NodeInfo, cache bool) (*topologyspread.Scores, error) {
	cs, err := pl.soft(state, pod, cache)
	if err != nil {
		return nil, fmt.Errorf("calculating preScoreState: %w", err)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	// Only the system defaults let nodes without a zone label still be
	// spread by hostname.
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.defaults.System()
	var positions func([]*nodeinfo.NodeInfo) ([]int32, bool)
	if state != nil {
		positions = cycle.Of(state).NodePositions
	}
	return topologyspread.NewScores(ctx, pod, cs, requireAll, all, feasible, positions, topologyspread.Incremental{Aggregates: &pl.aggregates, Gens: cycle.Of(state).NodeGenerations(all), State: state})
}

// stateScores returns PreScore's result or, without one (a nil state, in
// tests), computes it with nodes as both the feasible nodes and all nodes.
// It returns nil when the pod has no soft constraints.
func (pl *PodTopologySpread) stateScores(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*topologyspread.Scores, error) {
	if s, ok := spreadScoresKey.Read(state); ok {
		return s, nil
	}
	return pl.scores(ctx, state, pod, nodes, nodes, false)
}

// Score returns the node's raw score, the weighted count of matching pods
// in its domains (lower is better). It returns Error for a NodeInfo
// without a node.
func (pl *PodTopologySpread) Score(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	if ni.Node() == nil {
		return 0, errNilNode
	}
	// PreScore's result, read here before stateScores so that the slice
	// for its fallback is made only without one.
	s, ok := spreadScoresKey.Read(state)
	if !ok {
		var err error
		if s, err = pl.stateScores(ctx, state, pod, []*nodeinfo.NodeInfo{ni}); err != nil {
			return 0, fwk.AsStatus(err)
		}
	}
	if s == nil {
		return 0, nil
	}
	return s.Score(ni), nil
}

// ScoreBatch sets the raw scores of the scored nodes from start on when
// PreScore worked them out with the others, and reports false otherwise,
// for [PodTopologySpread.Score] to answer.
func (pl *PodTopologySpread) ScoreBatch(state *fwk.CycleState, start int, scores []int64) bool {
	s, ok := spreadScoresKey.Read(state)
	return ok && s != nil && s.Batch(start, scores)
}

// NormalizeScore maps the raw scores to [0, 100], the lowest raw score to
// 100; nodes lacking a required topology key get 0.
func (pl *PodTopologySpread) NormalizeScore(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, scores []int64) *fwk.Status {
	s, err := pl.stateScores(ctx, state, pod, nodes)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s != nil {
		s.Normalize(nodes, scores)
	}
	return nil
}
