package queue

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/requeue"
)

// Reasons a pod moves between the queue's parts, besides events.
const (
	reasonScheduleAttemptFailure = "ScheduleAttemptFailure"
	reasonBackoffComplete        = "BackoffComplete"
)

// NodeUpdateEvents returns the events an update of a node from oldNode
// to newNode raises in the release of fs, in kube-scheduler's order, for
// [PriorityQueue.MoveAllToActiveOrBackoffQueue]: spec.unschedulable
// turning false (reported as UpdateNodeTaint), allocatable, labels,
// taints, conditions (their statuses only), annotations, the pod
// preemption policy (with ScaleUpAndPreemptionPolicyEvents) and declared
// features (the NodeDeclaredFeatures gate is on in every supported
// release). An update changing none of these, such as a heartbeat,
// raises none: it cannot make a pod schedulable. Nil nodes raise none.
func NodeUpdateEvents(fs feature.Features, newNode, oldNode *v1.Node) []fwk.ClusterEvent {
	if newNode == nil || oldNode == nil {
		return nil
	}
	var events []fwk.ClusterEvent
	add := func(changed bool, a fwk.ActionType) {
		if changed {
			events = append(events, fwk.ClusterEvent{Resource: fwk.Node, ActionType: a})
		}
	}
	add(newNode.Spec.Unschedulable != oldNode.Spec.Unschedulable && !newNode.Spec.Unschedulable, fwk.UpdateNodeTaint)
	add(!equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable), fwk.UpdateNodeAllocatable)
	add(!equality.Semantic.DeepEqual(newNode.Labels, oldNode.Labels), fwk.UpdateNodeLabel)
	add(!equality.Semantic.DeepEqual(newNode.Spec.Taints, oldNode.Spec.Taints), fwk.UpdateNodeTaint)
	add(!equality.Semantic.DeepEqual(conditionStatuses(oldNode), conditionStatuses(newNode)), fwk.UpdateNodeCondition)
	add(!equality.Semantic.DeepEqual(oldNode.Annotations, newNode.Annotations), fwk.UpdateNodeAnnotation)
	add(fs.ScaleUpAndPreemptionPolicyEvents && !equality.Semantic.DeepEqual(oldNode.Spec.PodPreemptionPolicy, newNode.Spec.PodPreemptionPolicy),
		fwk.UpdateNodePreemptionPolicy)
	add(!slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures), fwk.UpdateNodeDeclaredFeature)
	return events
}

// NodeSchedulingPropertiesChange is [NodeUpdateEvents] of the newest
// supported release.
func NodeSchedulingPropertiesChange(newNode, oldNode *v1.Node) []fwk.ClusterEvent {
	return NodeUpdateEvents(feature.Default(), newNode, oldNode)
}

func conditionStatuses(n *v1.Node) map[v1.NodeConditionType]v1.ConditionStatus {
	m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(n.Status.Conditions))
	for _, c := range n.Status.Conditions {
		m[c.Type] = c.Status
	}
	return m
}

// PodUpdateEvents returns the events an update of a pod from oldPod to
// newPod raises in the release of fs, in kube-scheduler's order: its
// labels changed, a request went down, a request went up (with
// ScaleUpAndPreemptionPolicyEvents), its scheduling gates were all
// removed, it gained tolerations, its generated ResourceClaims changed.
// When none of these changed it returns a plain Update.
//
// The resource is AssignedPod when newPod is bound. Otherwise it is
// TargetPod when target is set and the release has PodEventsByRole (the
// update is of the pending pod whose hints are asked, as
// [PriorityQueue.Update] raises it), and UnscheduledPod else. Nil pods
// raise none.
func PodUpdateEvents(fs feature.Features, newPod, oldPod *v1.Pod, target bool) []fwk.ClusterEvent {
	if newPod == nil || oldPod == nil {
		return nil
	}
	r := fwk.UnscheduledPod
	switch {
	case newPod.Spec.NodeName != "":
		r = fwk.AssignedPod
	case target && fs.PodEventsByRole:
		r = fwk.TargetPod
	}
	var events []fwk.ClusterEvent
	add := func(changed bool, a fwk.ActionType) {
		if changed {
			events = append(events, fwk.ClusterEvent{Resource: r, ActionType: a})
		}
	}
	newReqs := resourcehelper.PodRequests(newPod, requeue.PodRequestOptions)
	oldReqs := resourcehelper.PodRequests(oldPod, requeue.PodRequestOptions)
	add(!equality.Semantic.DeepEqual(newPod.Labels, oldPod.Labels), fwk.UpdatePodLabel)
	add(lowered(newReqs, oldReqs), fwk.UpdatePodScaleDown)
	add(fs.ScaleUpAndPreemptionPolicyEvents && lowered(oldReqs, newReqs), fwk.UpdatePodScaleUp)
	add(len(newPod.Spec.SchedulingGates) == 0 && len(oldPod.Spec.SchedulingGates) != 0, fwk.UpdatePodSchedulingGatesEliminated)
	add(len(newPod.Spec.Tolerations) != len(oldPod.Spec.Tolerations), fwk.UpdatePodToleration)
	add(!equality.Semantic.DeepEqual(newPod.Status.ResourceClaimStatuses, oldPod.Status.ResourceClaimStatuses) ||
		!equality.Semantic.DeepEqual(newPod.Status.ExtendedResourceClaimStatus, oldPod.Status.ExtendedResourceClaimStatus),
		fwk.UpdatePodGeneratedResourceClaim)
	if len(events) == 0 {
		events = []fwk.ClusterEvent{{Resource: r, ActionType: fwk.Update}}
	}
	return events
}

// PodSchedulingPropertiesChange is [PodUpdateEvents] of the newest
// supported release for a pod other than the pending pod being updated:
// an AssignedPod event when newPod is bound, an UnscheduledPod one
// otherwise. The queue classifies the updates given to
// [PriorityQueue.Update] itself.
func PodSchedulingPropertiesChange(newPod, oldPod *v1.Pod) []fwk.ClusterEvent {
	return PodUpdateEvents(feature.Default(), newPod, oldPod, false)
}

// lowered reports whether some request in before is gone or lower in
// after.
func lowered(after, before v1.ResourceList) bool {
	for name, old := range before {
		q, ok := after[name]
		if !ok || old.MilliValue() > q.MilliValue() {
			return true
		}
	}
	return false
}
