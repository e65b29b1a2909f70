package filter

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/requeue"
	"github.com/kubesched/kubesched/internal/taints"
)

// The hints of the plugins that look at the node alone: NodeUnschedulable,
// TaintToleration, NodeAffinity and NodeDeclaredFeatures.

// nodeBecameSchedulable is NodeUnschedulable's node hint: a node added
// schedulable, or one that stopped being unschedulable.
func nodeBecameSchedulable(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if !node.Spec.Unschedulable && (old == nil || old.Spec.Unschedulable) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// podToleratesUnschedulable is NodeUnschedulable's pod hint: the updated
// pod (the pod itself, which only [ownUpdate] checks before
// PodEventsByRole) tolerates the node.kubernetes.io/unschedulable
// NoSchedule taint.
func podToleratesUnschedulable(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	_, updated, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if updated == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	unschedulable := v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
	if taints.Tolerated(updated.Spec.Tolerations, &unschedulable, false) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// taintsNowTolerated is TaintToleration's node hint: the node (added, or
// before the update) had a NoSchedule or NoExecute taint the pod does not
// tolerate, and now has none.
func taintsNowTolerated(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	wasUntolerated := old == nil || taints.FirstUntolerated(old.Spec.Taints, pod.Spec.Tolerations, false) >= 0
	if wasUntolerated && taints.FirstUntolerated(node.Spec.Taints, pod.Spec.Tolerations, false) < 0 {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// nodeAffinityNowMatches is NodeAffinity's hint: the node (added, or
// updated from not matching) matches the pod's nodeSelector and required
// node affinity. A term that does not parse makes it Queue with the error
// when no other term matches, as upstream's matcher does.
func nodeAffinityNowMatches(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	required := nodeaffinity.RequiredOf(pod)
	matches, err := required.Match(node)
	if err != nil {
		return fwk.Queue, err
	}
	if !matches {
		return fwk.QueueSkip, nil
	}
	if old == nil {
		return fwk.Queue, nil
	}
	if matched, err := required.Match(old); err != nil || !matched {
		return fwk.Queue, err
	}
	return fwk.QueueSkip, nil
}

// declaredFeaturesChanged is NodeDeclaredFeatures' node hint: a node
// added, or one whose declared features changed.
func declaredFeaturesChanged(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if old != nil && slices.Equal(old.Status.DeclaredFeatures, node.Status.DeclaredFeatures) {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// requiredFeaturesChanged is NodeDeclaredFeatures' pod hint: an update of
// the pod (the pod itself, which only [ownUpdate] checks before
// PodEventsByRole) that changed the features it needs.
func requiredFeaturesChanged(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, updated, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if updated == nil || old == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	before, err := RequiredFeatures(old)
	if err != nil {
		return fwk.Queue, err
	}
	after, err := RequiredFeatures(updated)
	if err != nil {
		return fwk.Queue, err
	}
	if after.Equal(before) {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
