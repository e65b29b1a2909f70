package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubesched/kubesched/fwk"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "k8s.io/api/core/v1"
)

// UsingListers returns a framework that runs f's plugins, with f's
// weights, extenders, nominator and settings, whose plugins read l
// instead of f's listers. It shares f's random source, so a seeded f
// and the new framework draw from one sequence, but keeps its own
// search start and caches. Package sim uses it to serve plugins the
// objects of a simulated cluster as they change.
func (f *Framework) UsingListers(l fwk.Listers) *Framework {
	g := &Framework{
		preEnqueues: f.preEnqueues,
		preFilters:  f.preFilters,
		filters:     f.filters,
		preScores:   f.preScores,
		scores:      f.scores,
		reserves:    f.reserves,
		postFilters: f.postFilters,
		percentage:  f.percentage,
		parallelism: f.parallelism,
		rng:         f.rng,
		listers:     l,
		extenders:   f.extenders,
		nominator:   f.nominator,
		memos:       &memos{},
		plugins:     f.plugins,
	}
	g.scratch.New = f.scratch.New
	return g
}

// RunPreEnqueuePlugins returns a [*NotTriedError] for a pod
// kube-scheduler would not try to schedule, being deleted or turned down
// by a PreEnqueue plugin (scheduling gates, a missing ResourceClaim), as
// [Framework.Schedule] does before its cycle; nil for a pod it would try.
// A simulator that searches nodes itself, as first fit does, asks it
// first.
func (f *Framework) RunPreEnqueuePlugins(ctx context.Context, pod *v1.Pod) error {
	if pod == nil {
		return errors.New("preenqueue: nil pod")
	}
	var notTried *NotTriedError
	if err := f.checkCall(ctx, pod, 1); errors.As(err, &notTried) {
		return notTried
	}
	return nil
}

// RunPreFilterPlugins starts a scheduling cycle for pod over the nodes
// of snap, as [Framework.ScheduleSnapshot] does, and runs its PreFilter
// plugins. It returns the cycle's state, with which
// [framework.ExcludedByPreFilter] and
// [Framework.RunFilterPluginsWithNominatedPods] judge nodes of snap one
// at a time, and PreFilter's verdict: nil, or a rejection of every node
// naming its plugin, or an Error for a plugin error, a bad call (nil
// pod, no nodes, a cancelled context) or a pod kube-scheduler would not
// try (being deleted, turned down by a PreEnqueue plugin).
//
// This is how cluster-autoscaler checks a pod against chosen nodes.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, pod *v1.Pod, snap NodeSnapshot) (*fwk.CycleState, *fwk.Status) {
	if snap == nil {
		return nil, fwk.AsStatus(errors.New("prefilter: nil snapshot"))
	}
	idx, nodes := f.indexSnapshot(snap)
	if err := f.checkCall(ctx, pod, len(nodes)); err != nil {
		var notTried *NotTriedError
		if errors.As(err, &notTried) {
			return nil, notTried.Status
		}
		return nil, fwk.AsStatus(err)
	}
	state := f.newCycleState(nodes, idx)
	result, status, narrowedBy := f.runPreFilter(ctx, state, pod, nodes)
	if status == nil && !result.AllNodes() {
		d := cycleOf(state)
		d.kept = result.NodeNames
		d.excluded = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(narrowedBy)))
	}
	f.recordNominations(state, pod)
	return state, status
}

// RunReservePlugins tells the Reserve plugins that pod goes to the node
// called nodeName, in the cycle of state (from
// [Framework.RunPreFilterPlugins], after the node passed its filters),
// as [Framework.ScheduleSnapshot] does for the node it chooses. It
// returns a Result naming the node, with what the plugins recorded
// (DynamicResources' ResourceClaims), or the first plugin's failure.
func (f *Framework) RunReservePlugins(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodeName string) (*Result, *fwk.Status) {
	if state == nil {
		return nil, fwk.AsStatus(errors.New("reserve: nil cycle state"))
	}
	result := &Result{SuggestedHost: nodeName, EvaluatedNodes: 1, FeasibleNodes: 1, Diagnosis: Diagnosis{nodes: indexOf(state)}}
	for _, pl := range f.reserves {
		if s := pl.Reserve(ctx, state, pod, nodeName, &result.Outputs); s != nil && !s.IsSuccess() {
			return nil, s.WithPlugin(pl.Name())
		}
	}
	return result, nil
}
