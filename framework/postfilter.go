package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// PostFilterPlugin runs when no node fits a pod, to make it fit in a later
// cycle: DefaultPreemption chooses pods to evict, DynamicResources a
// ResourceClaim to deallocate. kubesched changes nothing in the cluster;
// a plugin writes what kube-scheduler would do into fe (its Preemption
// and ClearNomination, or its [fwk.Outputs] under keys of the plugin's own,
// as DynamicResources its claim to deallocate) for the caller to act on.
type PostFilterPlugin interface {
	fwk.Plugin
	// PostFilter returns nil (Success) when it made the pod schedulable,
	// which ends the PostFilter phase; Unschedulable, with a reason, when
	// it could not, and the next plugin runs; UnschedulableAndUnresolvable
	// or Error to end the phase with its message. fe.Diagnosis holds the
	// verdict on every node; state is the cycle's, after Filter.
	PostFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, fe *FitError) *fwk.Status
}

// Preemption is DefaultPreemption's decision for a pod no node fits: the
// node to nominate it to and the pods to evict there first.
type Preemption struct {
	// NominatedNodeName is the node kube-scheduler nominates the pod to:
	// it writes it into the pod's status.nominatedNodeName and schedules
	// the pod there once the victims are gone.
	NominatedNodeName string
	// Victims are the pods to evict on that node, most important first.
	// kube-scheduler marks each with the DisruptionTarget condition
	// (reason PreemptionByScheduler) and deletes it.
	Victims []*v1.Pod
	// NumPDBViolations counts the victims whose eviction a
	// PodDisruptionBudget does not allow.
	NumPDBViolations int
	// NominationsToClear are the pods of lower priority nominated to
	// that node (known from the framework's [Nominator]), whose
	// status.nominatedNodeName kube-scheduler clears: the room is the
	// preemptor's now. It clears them as it starts evicting, so none
	// when every victim is already being deleted.
	NominationsToClear []*v1.Pod
}

// NominationUpdater is a [Nominator] the framework can update, as
// [*Nominations] can: after a preemption, Schedule nominates the pod to
// the chosen node and removes the nominations of the lower-priority pods
// nominated there, and when kube-scheduler would clear the pod's
// nomination ([FitError.ClearNomination]) it removes it, as
// kube-scheduler updates its own nominator.
type NominationUpdater interface {
	Nominator
	// Add nominates pod to nodeName, replacing any nomination it has.
	Add(pod *v1.Pod, nodeName string)
	// Delete removes pod's nomination, if it has one.
	Delete(pod *v1.Pod)
}

// WithoutPreemption leaves the DefaultPreemption plugin out of the
// PostFilter phase, as a KubeSchedulerConfiguration that disables it
// does: a pod that fits nowhere gets its FitError without a preemption
// attempt. Other PostFilter plugins (DynamicResources') still run.
func WithoutPreemption() Option {
	return func(c *config) error {
		c.noPreemption = true
		return nil
	}
}

// defaultPreemption is the name WithoutPreemption leaves out.
const defaultPreemption = "DefaultPreemption"

// runPostFilter runs the PostFilter plugins on fe as kube-scheduler's
// RunPostFilterPlugins does: the first Success ends the phase with an
// empty message; UnschedulableAndUnresolvable or Error ends it with that
// plugin's message; Unschedulable reasons are collected and joined.
// Without PostFilter plugins, kube-scheduler clears the pod's nomination.
func (f *Framework) runPostFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, fe *FitError) {
	if len(f.postFilters) == 0 {
		fe.ClearNomination = true
		f.recordPostFilter(pod, fe)
		return
	}
	var reasons []string
	for _, pl := range f.postFilters {
		s := pl.PostFilter(ctx, state, pod, fe)
		switch {
		case s.IsSuccess():
			// Empty but from v1.37's DefaultPreemption, which says where
			// it found room.
			fe.Diagnosis.PostFilterMsg = s.Message()
			f.recordPostFilter(pod, fe)
			return
		case s.Code() == fwk.UnschedulableAndUnresolvable, !s.IsRejected():
			fe.Diagnosis.PostFilterMsg = s.Message()
			f.recordPostFilter(pod, fe)
			return
		}
		reasons = append(reasons, s.Reasons()...)
	}
	fe.Diagnosis.PostFilterMsg = strings.Join(reasons, ", ")
	f.recordPostFilter(pod, fe)
}

// recordPostFilter completes fe with what needs the framework's
// nominator, and updates the nominator when it can be.
func (f *Framework) recordPostFilter(pod *v1.Pod, fe *FitError) {
	if f.nominator == nil {
		return
	}
	up, _ := f.nominator.(NominationUpdater)
	if p := fe.Preemption; p != nil {
		priority := corev1helpers.PodPriority(pod)
		// kube-scheduler clears them when it starts evicting, which it
		// does not when every victim is already being deleted.
		evicting := slices.ContainsFunc(p.Victims, func(v *v1.Pod) bool { return v.DeletionTimestamp == nil })
		for _, pi := range f.nominator.NominatedPods()[p.NominatedNodeName] {
			if !evicting {
				break
			}
			if corev1helpers.PodPriority(pi.Pod) < priority {
				p.NominationsToClear = append(p.NominationsToClear, pi.Pod)
			}
		}
		if up != nil {
			up.Add(pod, p.NominatedNodeName)
			for _, victim := range p.NominationsToClear {
				up.Delete(victim)
			}
		}
		return
	}
	if fe.ClearNomination && up != nil {
		up.Delete(pod)
	}
}

// Of returns the framework running the cycle of state, through which
// PostFilter plugins re-run filters as if pods were added or removed
// (see [Framework.RunFilterPluginsWithNominatedPods]); nil for a state
// made outside a framework.
func Of(state *fwk.CycleState) *Framework {
	if d := cycleOf(state); d != nil {
		return d.fw
	}
	return nil
}

// RunFilterPluginsWithNominatedPods runs the filters that take part in
// the cycle of state on node ni for pod, accounting for the pods
// nominated to ni as [Framework.Schedule] does (see [WithNominator]). It
// returns the first rejection. PostFilter plugins use it on copies of
// state and ni changed through [Framework.RunPreFilterExtensionAddPod]
// and [Framework.RunPreFilterExtensionRemovePod].
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	filters := f.filtersOf(state)
	nominated, _ := nominatedPodsKey.Read(state)
	if pods := nominated[ni.Name()]; len(pods) > 0 {
		return f.runFiltersWithNominatedPods(ctx, filters, state, pod, ni, pods)
	}
	return runFilters(ctx, filters, state, pod, ni)
}

// RunPreFilterExtensionAddPod updates state as if podToAdd had been added
// to ni (the caller adds it to ni), through the PreFilterExtensions of
// the PreFilter plugins that did not return Skip in the cycle.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *fwk.CycleState, podToSchedule *v1.Pod, podToAdd *nodeinfo.PodInfo, ni *nodeinfo.NodeInfo) *fwk.Status {
	for _, ext := range f.extensions(state) {
		if s := ext.AddPod(ctx, state, podToSchedule, podToAdd, ni); !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", ext.name, s.AsError()))
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod updates state as if podToRemove had been
// removed from ni (the caller removes it from ni), through the
// PreFilterExtensions of the PreFilter plugins that did not return Skip
// in the cycle.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *fwk.CycleState, podToSchedule *v1.Pod, podToRemove *nodeinfo.PodInfo, ni *nodeinfo.NodeInfo) *fwk.Status {
	for _, ext := range f.extensions(state) {
		if s := ext.RemovePod(ctx, state, podToSchedule, podToRemove, ni); !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", ext.name, s.AsError()))
		}
	}
	return nil
}

// IntN returns a number in [0, n) from the framework's random source (see
// [WithRandSource]), so that plugins' random choices are reproducible
// with a seeded one. n must be positive.
func (f *Framework) IntN(n int) int { return f.intN(n) }

// Parallelism returns the number of goroutines the framework filters and
// scores with (see [WithParallelism]).
func (f *Framework) Parallelism() int { return f.parallelism }

// Extenders returns the framework's extenders, in the order they run.
func (f *Framework) Extenders() []Extender { return f.extenders }

// NewFitError returns the FitError over numAllNodes nodes whose verdicts
// are statuses, the nodes not named there sharing absent (which may be
// nil), as kube-scheduler builds the FitError a PostFilter plugin reports
// (DefaultPreemption's "preemption: 0/3 nodes are available: ...").
func NewFitError(pod *v1.Pod, numAllNodes int, statuses map[string]*fwk.Status, absent *fwk.Status) *FitError {
	return &FitError{Pod: pod, NumAllNodes: numAllNodes, Diagnosis: Diagnosis{statuses: statuses, absent: absent}}
}
