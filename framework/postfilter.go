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
		r, s := pl.PostFilter(ctx, state, pod, &fe.Diagnosis)
		fe.add(r)
		if s.Code() != fwk.Unschedulable {
			// Success ends the phase with its message (empty but from
			// v1.37's DefaultPreemption, which says where it found
			// room), as UnschedulableAndUnresolvable and Error do.
			fe.Diagnosis.PostFilterMsg = s.Message()
			f.recordPostFilter(pod, fe)
			return
		}
		reasons = append(reasons, s.Reasons()...)
	}
	fe.Diagnosis.PostFilterMsg = strings.Join(reasons, ", ")
	f.recordPostFilter(pod, fe)
}

// add records what a PostFilter plugin asked for.
func (fe *FitError) add(r *fwk.PostFilterResult) {
	if r == nil {
		return
	}
	if r.Preemption != nil {
		fe.Preemption = r.Preemption
	}
	fe.ClearNomination = fe.ClearNomination || r.ClearNomination
	fe.Outputs.Merge(&r.Outputs)
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

// The framework is its plugins' [fwk.Handle].
var _ fwk.Handle = (*Framework)(nil)

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
func (f *Framework) Extenders() []fwk.Extender { return f.extenders }
