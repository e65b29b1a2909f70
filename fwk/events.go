package fwk

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

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
	// through the queue's Update ([github.com/kubesched/kubesched/queue.PriorityQueue.Update]). Only releases with
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

// QueueingHint is a plugin's verdict on whether an event may make a pod
// it rejected schedulable.
type QueueingHint int

const (
	// QueueSkip: the event cannot help the pod.
	QueueSkip QueueingHint = iota
	// Queue: the event may help; try the pod again.
	Queue
)

// QueueingHintFn decides whether an event may make pod, which the plugin
// rejected, schedulable. oldObj is nil for an addition and newObj for a
// deletion. An error counts as Queue, so that no pod is stranded.
type QueueingHintFn func(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error)

// ClusterEventWithHint is an event a plugin registers for, with an
// optional hint; without one, every such event retries the pod.
type ClusterEventWithHint struct {
	// Event is the kind of change registered for.
	Event ClusterEvent
	// Hint, when not nil, decides for each such event whether it may
	// help a pod the plugin rejected.
	Hint QueueingHintFn
}

// PluginEvents maps plugin names to the events that may make the pods
// they rejected schedulable. Only pods rejected by a plugin registered
// for an event move when it happens; a pod rejected by a plugin not in
// the map moves on any event, as kube-scheduler treats plugins that
// register nothing.
type PluginEvents map[string][]ClusterEventWithHint

// EnqueueExtensions is implemented by plugins that name the cluster
// events that may make the pods they reject schedulable, as
// kube-scheduler's plugins do with EventsToRegister. The queue retries a
// pod a plugin rejected only after an event the plugin registered for,
// and only when the registration's hint says the event may help; it
// retries the pods that a plugin not implementing EnqueueExtensions
// rejected after any event.
type EnqueueExtensions interface {
	Plugin
	// EventsToRegister returns the plugin's registrations in the
	// kube-scheduler release of fs. Hints that read cluster objects
	// besides the event's read them through l, which should hold each
	// event's new state when the hint runs. A hint runs on the goroutine
	// that raises the event, under the queue's lock.
	EventsToRegister(fs feature.Features, l Listers) []ClusterEventWithHint
}

// PluginEventsOf collects the registrations of those of plugins that
// implement [EnqueueExtensions], by plugin name, in the release of fs.
// When two plugins share a name (kubesched's split plugins have a
// filter and a score part), the first one's registrations count.
func PluginEventsOf(fs feature.Features, l Listers, plugins ...Plugin) PluginEvents {
	pe := PluginEvents{}
	for _, p := range plugins {
		ee, ok := p.(EnqueueExtensions)
		if !ok {
			continue
		}
		if _, seen := pe[ee.Name()]; seen {
			continue
		}
		pe[ee.Name()] = ee.EventsToRegister(fs, l)
	}
	return pe
}
