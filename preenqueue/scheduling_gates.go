package preenqueue

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/requeue"
	"github.com/kubesched/kubesched/names"
)

// SchedulingGates turns down pods that have scheduling gates
// (spec.schedulingGates), as kube-scheduler's plugin of that name does: a
// gated pod is not tried until its last gate is removed. The zero value is
// ready.
type SchedulingGates struct{}

var _ fwk.PreEnqueuePlugin = &SchedulingGates{}

// Name returns "SchedulingGates".
func (*SchedulingGates) Name() string { return names.SchedulingGates }

// EventsToRegister: the pod's own update that removed its last gate.
func (*SchedulingGates) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	return []fwk.ClusterEventWithHint{requeue.For(fs).Target(fwk.UpdatePodSchedulingGatesEliminated, requeue.AlwaysQueue)}
}

// PreEnqueue returns nil for a pod without scheduling gates, and
// UnschedulableAndUnresolvable "waiting for scheduling gates: [...]",
// naming them in order, otherwise.
func (*SchedulingGates) PreEnqueue(_ context.Context, _ fwk.Listers, pod *v1.Pod) *fwk.Status {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, len(pod.Spec.SchedulingGates))
	for i, g := range pod.Spec.SchedulingGates {
		gates[i] = g.Name
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}
