package queue

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	resourcehelper "k8s.io/component-helpers/resource"
)

// ActionType is a kind of change to a cluster object. The values are
// bits, as kube-scheduler's, so that a registration can name several.
type ActionType int64

// Action types, as kube-scheduler v1.36.3 defines them. The UpdateNode
// and UpdatePod kinds name the part of an object that changed; Update is
// any of them.
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
	UpdatePodLabel
	// UpdatePodScaleDown: some request of the pod went down (or away).
	UpdatePodScaleDown
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
		UpdateNodeDeclaredFeature | UpdatePodLabel | UpdatePodScaleDown | UpdatePodToleration |
		UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim
)

var actionNames = map[ActionType]string{
	Add: "Add", Delete: "Delete", UpdateNodeAllocatable: "UpdateNodeAllocatable", UpdateNodeLabel: "UpdateNodeLabel",
	UpdateNodeTaint: "UpdateNodeTaint", UpdateNodeCondition: "UpdateNodeCondition", UpdateNodeAnnotation: "UpdateNodeAnnotation",
	UpdateNodeDeclaredFeature: "UpdateNodeDeclaredFeature", UpdatePodLabel: "UpdatePodLabel", UpdatePodScaleDown: "UpdatePodScaleDown",
	UpdatePodToleration: "UpdatePodToleration", UpdatePodSchedulingGatesEliminated: "UpdatePodSchedulingGatesEliminated",
	UpdatePodGeneratedResourceClaim: "UpdatePodGeneratedResourceClaim", All: "All", Update: "Update",
}

// String returns kube-scheduler's name of the action, or "" for a
// combination it does not name.
func (a ActionType) String() string { return actionNames[a] }

// EventResource is the kind of object an event is about, named as
// kube-scheduler names it.
type EventResource string

// Resources, as kube-scheduler v1.36.3 names them. Events about pods
// come as assignedPod or unscheduledPod resources, which registrations
// for Pod match both of.
const (
	Pod                   EventResource = "Pod"
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

	assignedPod    EventResource = "AssignedPod"
	unscheduledPod EventResource = "UnschedulablePod"
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
// Pod and incoming an assigned or unscheduled pod), and an action at
// least as specific as one e names. An incoming wildcard event matches
// only a wildcard registration.
func (e ClusterEvent) Match(incoming ClusterEvent) bool {
	if e.IsWildCard() {
		return true
	}
	resource := e.Resource == WildCard || e.Resource == incoming.Resource ||
		e.Resource == Pod && (incoming.Resource == assignedPod || incoming.Resource == unscheduledPod)
	return resource && e.ActionType&incoming.ActionType != 0 && incoming.ActionType <= e.ActionType
}

// Events the queue and its callers raise, with kube-scheduler's labels.
var (
	EventAssignedPodAdd       = ClusterEvent{Resource: assignedPod, ActionType: Add}
	EventAssignedPodUpdate    = ClusterEvent{Resource: assignedPod, ActionType: Update}
	EventAssignedPodDelete    = ClusterEvent{Resource: assignedPod, ActionType: Delete}
	EventUnscheduledPodAdd    = ClusterEvent{Resource: unscheduledPod, ActionType: Add}
	EventUnscheduledPodUpdate = ClusterEvent{Resource: unscheduledPod, ActionType: Update}
	EventUnscheduledPodDelete = ClusterEvent{Resource: unscheduledPod, ActionType: Delete}
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

// NodeSchedulingPropertiesChange returns the events an update of a node
// from oldNode to newNode raises, in kube-scheduler v1.36.3's order, for
// [PriorityQueue.MoveAllToActiveOrBackoffQueue]: spec.unschedulable turning false
// (reported as UpdateNodeTaint), allocatable, labels, taints, conditions
// (their statuses only), annotations, and declared features (the
// NodeDeclaredFeatures gate is on by default). An update changing none of
// these, such as a heartbeat, raises none: it cannot make a pod
// schedulable. Nil nodes raise none.
func NodeSchedulingPropertiesChange(newNode, oldNode *v1.Node) []ClusterEvent {
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
	add(!slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures), UpdateNodeDeclaredFeature)
	return events
}

func conditionStatuses(n *v1.Node) map[v1.NodeConditionType]v1.ConditionStatus {
	m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(n.Status.Conditions))
	for _, c := range n.Status.Conditions {
		m[c.Type] = c.Status
	}
	return m
}

// podRequestOptions are v1.36.3's defaults for comparing requests: status
// resources count (in-place resize is GA) and pod-level resizes are on.
var podRequestOptions = resourcehelper.PodResourcesOptions{
	UseStatusResources: true,
	InPlacePodLevelResourcesVerticalScalingEnabled: true,
}

// PodSchedulingPropertiesChange returns the events an update of a pod
// from oldPod to newPod raises, in kube-scheduler v1.36.3's order: its
// labels changed, a request went down, its scheduling gates were all
// removed, it gained tolerations, its generated ResourceClaims changed.
// When none of these changed it returns a plain Update. The resource is
// an assigned pod when newPod is bound, an unscheduled one otherwise.
// Nil pods raise none.
func PodSchedulingPropertiesChange(newPod, oldPod *v1.Pod) []ClusterEvent {
	if newPod == nil || oldPod == nil {
		return nil
	}
	r := unscheduledPod
	if newPod.Spec.NodeName != "" {
		r = assignedPod
	}
	var events []ClusterEvent
	add := func(changed bool, a ActionType) {
		if changed {
			events = append(events, ClusterEvent{Resource: r, ActionType: a})
		}
	}
	add(!equality.Semantic.DeepEqual(newPod.Labels, oldPod.Labels), UpdatePodLabel)
	add(scaledDown(newPod, oldPod), UpdatePodScaleDown)
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

// scaledDown reports whether some request of oldPod is gone or lower in
// newPod.
func scaledDown(newPod, oldPod *v1.Pod) bool {
	newReqs := resourcehelper.PodRequests(newPod, podRequestOptions)
	for name, old := range resourcehelper.PodRequests(oldPod, podRequestOptions) {
		q, ok := newReqs[name]
		if !ok || old.MilliValue() > q.MilliValue() {
			return true
		}
	}
	return false
}
