package queue

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/feature"
)

// ActionType is a kind of change to a cluster object. The values are
// bits, as kube-scheduler's, so that a registration can name several.
type ActionType int64

// Action types, as kube-scheduler v1.37.2 defines them. The UpdateNode
// and UpdatePod kinds name the part of an object that changed; Update is
// any of them. Releases before v1.37 raise neither
// UpdateNodePreemptionPolicy nor UpdatePodScaleUp (see
// [feature.Features.ScaleUpAndPreemptionPolicyEvents]); that Update
// counts them changes nothing for those releases.
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	// UpdateNodeTaint is a change of the node's taints, or its
	// spec.unschedulable turning false.
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdateNodeDeclaredFeature
	// UpdateNodePreemptionPolicy: the node's spec.podPreemptionPolicy
	// changed.
	UpdateNodePreemptionPolicy
	UpdatePodLabel
	// UpdatePodScaleDown: some request of the pod went down (or away).
	UpdatePodScaleDown
	// UpdatePodScaleUp: some request of the pod went up (or appeared).
	UpdatePodScaleUp
	// UpdatePodToleration: the pod gained tolerations (the API allows
	// adding them only).
	UpdatePodToleration
	// UpdatePodSchedulingGatesEliminated: the pod's last scheduling gate
	// was removed.
	UpdatePodSchedulingGatesEliminated
	// UpdatePodGeneratedResourceClaim: the ResourceClaims generated for the
	// pod changed.
	UpdatePodGeneratedResourceClaim

	// All is every action.
	All ActionType = 1<<iota - 1
	// Update is any update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdateNodeAnnotation |
		UpdateNodeDeclaredFeature | UpdateNodePreemptionPolicy | UpdatePodLabel | UpdatePodScaleDown | UpdatePodScaleUp |
		UpdatePodToleration | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim
)

var actionNames = map[ActionType]string{
	Add: "Add", Delete: "Delete", UpdateNodeAllocatable: "UpdateNodeAllocatable", UpdateNodeLabel: "UpdateNodeLabel",
	UpdateNodeTaint: "UpdateNodeTaint", UpdateNodeCondition: "UpdateNodeCondition", UpdateNodeAnnotation: "UpdateNodeAnnotation",
	UpdateNodeDeclaredFeature: "UpdateNodeDeclaredFeature", UpdateNodePreemptionPolicy: "UpdateNodePreemptionPolicy",
	UpdatePodLabel: "UpdatePodLabel", UpdatePodScaleDown: "UpdatePodScaleDown", UpdatePodScaleUp: "UpdatePodScaleUp",
	UpdatePodToleration: "UpdatePodToleration", UpdatePodSchedulingGatesEliminated: "UpdatePodSchedulingGatesEliminated",
	UpdatePodGeneratedResourceClaim: "UpdatePodGeneratedResourceClaim", All: "All", Update: "Update",
}

// String returns kube-scheduler's name of the action, or "" for a
// combination it does not name.
func (a ActionType) String() string { return actionNames[a] }

// EventResource is the kind of object an event is about, named as
// kube-scheduler names it.
type EventResource string

// Resources, as kube-scheduler v1.37.2 names them.
const (
	// Pod, in a registration, matches events about any pod: AssignedPod,
	// UnscheduledPod and TargetPod ones. Events themselves name one of
	// those three.
	Pod EventResource = "Pod"
	// AssignedPod: the event is about a pod bound to a node. Deleting a
	// pending pod that was nominated to a node, or changing its
	// nomination, is reported as an AssignedPod deletion too, as the room
	// it held is freed.
	AssignedPod EventResource = "AssignedPod"
	// UnscheduledPod: the event is about a pending pod, other than the
	// one whose hint is asked. (v1.36.3 named it "UnschedulablePod"; the
	// name shows only in labels.)
	UnscheduledPod EventResource = "UnscheduledPod"
	// TargetPod: the event is an update of the pending pod itself,
	// through [PriorityQueue.Update]. Only releases with
	// [feature.Features.PodEventsByRole] raise it; older ones report such
	// an update as an UnscheduledPod one.
	TargetPod             EventResource = "TargetPod"
	Node                  EventResource = "Node"
	PersistentVolume      EventResource = "PersistentVolume"
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	CSINode               EventResource = "storage.k8s.io/CSINode"
	CSIDriver             EventResource = "storage.k8s.io/CSIDriver"
	VolumeAttachment      EventResource = "storage.k8s.io/VolumeAttachment"
	CSIStorageCapacity    EventResource = "storage.k8s.io/CSIStorageCapacity"
	StorageClass          EventResource = "storage.k8s.io/StorageClass"
	ResourceClaim         EventResource = "resource.k8s.io/ResourceClaim"
	ResourceSlice         EventResource = "resource.k8s.io/ResourceSlice"
	DeviceClass           EventResource = "resource.k8s.io/DeviceClass"
	// WildCard matches every resource. An incoming event {WildCard, All}
	// moves every pod, whatever rejected it.
	WildCard EventResource = "*"
)

// ClusterEvent is a change in the cluster that may make pods schedulable.
type ClusterEvent struct {
	// Resource is the kind of object that changed.
	Resource EventResource
	// ActionType is how it changed; a registration may name several
	// actions at once, as bits.
	ActionType ActionType
	// CustomLabel, if set, is the event's Label.
	CustomLabel string
}

// Label names the event for logs, as kube-scheduler does: "NodeAdd",
// "AssignedPodDelete", "UnschedulableTimeout", ...
func (e ClusterEvent) Label() string {
	if e.CustomLabel != "" {
		return e.CustomLabel
	}
	return fmt.Sprintf("%v%v", e.Resource, e.ActionType)
}

// IsWildCard reports whether e is {WildCard, All}, the event that moves
// every pod.
func (e ClusterEvent) IsWildCard() bool { return e.Resource == WildCard && e.ActionType == All }

// Match reports whether incoming, an event that happened, is one that the
// registration e asks for: the same resource (or e is WildCard, or e is
// Pod and incoming about an assigned, unscheduled or target pod), and an
// action at least as specific as one e names. An incoming wildcard event
// matches only a wildcard registration.
func (e ClusterEvent) Match(incoming ClusterEvent) bool {
	if e.IsWildCard() {
		return true
	}
	resource := e.Resource == WildCard || e.Resource == incoming.Resource ||
		e.Resource == Pod && isPodResource(incoming.Resource)
	return resource && e.ActionType&incoming.ActionType != 0 && incoming.ActionType <= e.ActionType
}

// isPodResource reports whether r names a pod in some role.
func isPodResource(r EventResource) bool {
	return r == AssignedPod || r == UnscheduledPod || r == TargetPod
}

// Events the queue and its callers raise, with kube-scheduler's labels.
var (
	EventAssignedPodAdd       = ClusterEvent{Resource: AssignedPod, ActionType: Add}
	EventAssignedPodUpdate    = ClusterEvent{Resource: AssignedPod, ActionType: Update}
	EventAssignedPodDelete    = ClusterEvent{Resource: AssignedPod, ActionType: Delete}
	EventUnscheduledPodAdd    = ClusterEvent{Resource: UnscheduledPod, ActionType: Add}
	EventUnscheduledPodUpdate = ClusterEvent{Resource: UnscheduledPod, ActionType: Update}
	EventUnscheduledPodDelete = ClusterEvent{Resource: UnscheduledPod, ActionType: Delete}
	EventNodeAdd              = ClusterEvent{Resource: Node, ActionType: Add}
	EventNodeDelete           = ClusterEvent{Resource: Node, ActionType: Delete}
	// EventUnschedulableTimeout moves pods left in the unschedulable pool
	// too long.
	EventUnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, CustomLabel: "UnschedulableTimeout"}
	// EventForceActivate moves pods on request.
	EventForceActivate = ClusterEvent{Resource: WildCard, ActionType: All, CustomLabel: "ForceActivate"}
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
func NodeUpdateEvents(fs feature.Features, newNode, oldNode *v1.Node) []ClusterEvent {
	if newNode == nil || oldNode == nil {
		return nil
	}
	var events []ClusterEvent
	add := func(changed bool, a ActionType) {
		if changed {
			events = append(events, ClusterEvent{Resource: Node, ActionType: a})
		}
	}
	add(newNode.Spec.Unschedulable != oldNode.Spec.Unschedulable && !newNode.Spec.Unschedulable, UpdateNodeTaint)
	add(!equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable), UpdateNodeAllocatable)
	add(!equality.Semantic.DeepEqual(newNode.Labels, oldNode.Labels), UpdateNodeLabel)
	add(!equality.Semantic.DeepEqual(newNode.Spec.Taints, oldNode.Spec.Taints), UpdateNodeTaint)
	add(!equality.Semantic.DeepEqual(conditionStatuses(oldNode), conditionStatuses(newNode)), UpdateNodeCondition)
	add(!equality.Semantic.DeepEqual(oldNode.Annotations, newNode.Annotations), UpdateNodeAnnotation)
	add(fs.ScaleUpAndPreemptionPolicyEvents && !equality.Semantic.DeepEqual(oldNode.Spec.PodPreemptionPolicy, newNode.Spec.PodPreemptionPolicy),
		UpdateNodePreemptionPolicy)
	add(!slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures), UpdateNodeDeclaredFeature)
	return events
}

// NodeSchedulingPropertiesChange is [NodeUpdateEvents] of the newest
// supported release.
func NodeSchedulingPropertiesChange(newNode, oldNode *v1.Node) []ClusterEvent {
	return NodeUpdateEvents(feature.Default(), newNode, oldNode)
}

func conditionStatuses(n *v1.Node) map[v1.NodeConditionType]v1.ConditionStatus {
	m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(n.Status.Conditions))
	for _, c := range n.Status.Conditions {
		m[c.Type] = c.Status
	}
	return m
}

// podRequestOptions are the supported releases' defaults for comparing
// requests: status resources count (in-place resize is GA) and pod-level
// resizes are on.
var podRequestOptions = resourcehelper.PodResourcesOptions{
	UseStatusResources: true,
	InPlacePodLevelResourcesVerticalScalingEnabled: true,
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
func PodUpdateEvents(fs feature.Features, newPod, oldPod *v1.Pod, target bool) []ClusterEvent {
	if newPod == nil || oldPod == nil {
		return nil
	}
	r := UnscheduledPod
	switch {
	case newPod.Spec.NodeName != "":
		r = AssignedPod
	case target && fs.PodEventsByRole:
		r = TargetPod
	}
	var events []ClusterEvent
	add := func(changed bool, a ActionType) {
		if changed {
			events = append(events, ClusterEvent{Resource: r, ActionType: a})
		}
	}
	newReqs := resourcehelper.PodRequests(newPod, podRequestOptions)
	oldReqs := resourcehelper.PodRequests(oldPod, podRequestOptions)
	add(!equality.Semantic.DeepEqual(newPod.Labels, oldPod.Labels), UpdatePodLabel)
	add(lowered(newReqs, oldReqs), UpdatePodScaleDown)
	add(fs.ScaleUpAndPreemptionPolicyEvents && lowered(oldReqs, newReqs), UpdatePodScaleUp)
	add(len(newPod.Spec.SchedulingGates) == 0 && len(oldPod.Spec.SchedulingGates) != 0, UpdatePodSchedulingGatesEliminated)
	add(len(newPod.Spec.Tolerations) != len(oldPod.Spec.Tolerations), UpdatePodToleration)
	add(!equality.Semantic.DeepEqual(newPod.Status.ResourceClaimStatuses, oldPod.Status.ResourceClaimStatuses) ||
		!equality.Semantic.DeepEqual(newPod.Status.ExtendedResourceClaimStatus, oldPod.Status.ExtendedResourceClaimStatus),
		UpdatePodGeneratedResourceClaim)
	if len(events) == 0 {
		events = []ClusterEvent{{Resource: r, ActionType: Update}}
	}
	return events
}

// PodSchedulingPropertiesChange is [PodUpdateEvents] of the newest
// supported release for a pod other than the pending pod being updated:
// an AssignedPod event when newPod is bound, an UnscheduledPod one
// otherwise. The queue classifies the updates given to
// [PriorityQueue.Update] itself.
func PodSchedulingPropertiesChange(newPod, oldPod *v1.Pod) []ClusterEvent {
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
