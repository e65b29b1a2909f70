package queue

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/names"
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

// DefaultPluginEvents returns the newest supported release's events:
// PluginEventsFor(feature.Default(), l).
func DefaultPluginEvents(l framework.Listers) PluginEvents {
	return PluginEventsFor(feature.Default(), l)
}

// PluginEventsFor returns the events the default plugins of the
// kube-scheduler release of fs register, with queueing hints on as they
// are there (GA, locked on), and each plugin's hint: the same events and
// action types as upstream's EventsToRegister, and hints that give
// upstream's verdict for the same pod and objects, for the default plugin
// arguments and feature gates. A pod waiting in the unschedulable pool is
// retried after an event only when the hint of a plugin that rejected it
// says the event may help. In short, an event helps a pod that:
//
//   - NodeResourcesFit rejected: a node added, or grown (allocatable of a
//     resource the pod requests, or pod slots), that the pod fits when
//     empty; a pod on a node deleted; a bound pod scaled down in a
//     resource the pod requests, or the pod itself scaled down; a
//     DeviceClass that now provides an extended resource the pod
//     requests;
//   - NodeAffinity rejected: a node added or relabelled that now matches
//     the pod's nodeSelector and required node affinity;
//   - TaintToleration or NodeUnschedulable rejected: a node added or
//     updated that now has no taint the pod does not tolerate (is no
//     longer unschedulable), or the pod gaining a toleration that helps;
//   - NodePorts rejected: a bound pod using one of its host ports deleted;
//   - InterPodAffinity or PodTopologySpread rejected: a pod on a node
//     added, deleted or relabelled that its terms or constraints select;
//     a node added, deleted or changed in the topology keys they use; the
//     pod's own labels changed (or its tolerations, for spreading that
//     honours taints);
//   - a volume plugin rejected: its claims added or updated, a volume
//     whose zones changed, a StorageClass, CSINode, CSIDriver,
//     CSIStorageCapacity or VolumeAttachment change that raises a limit
//     or a capacity it could use, a pod sharing its disks deleted;
//   - DynamicResources rejected: one of its ResourceClaims created or
//     changed in status, any claim deallocated (or, with
//     ResourceClaimDeleteEvents, deleted while allocated), its own
//     generated claims recorded; nodes, DeviceClasses and ResourceSlices
//     (a DeviceTaintRule's change among them, see the package doc)
//     always;
//   - NodeDeclaredFeatures rejected: a node's declared features changed,
//     or the features the pod needs;
//   - SchedulingGates held back: its own gates removed.
//
// With PodEventsByRole (v1.37) the pod events are registered by role:
// AssignedPod for bound pods' additions, deletions and updates, TargetPod
// for the pending pod's own updates, whose hints then do not check whose
// update it is (only [PriorityQueue.Update] raises TargetPod events, for
// the pod updated). Before, each plugin registers Pod events, which match
// every role, and its hint tells the pod's own update apart.
//
// NodeName's, NodePorts', VolumeRestrictions', VolumeBinding's and
// VolumeZone's node events have no hint, as upstream's: they always help.
// DefaultPreemption registers pod deletions with a hint that never
// helps, as upstream's (it gates pods only while an asynchronous
// preemption runs, which kubesched does not do).
//
// Most hints look only at the event's objects and the pod. Two read the
// cluster through l, as upstream's read its informers: NodeResourcesFit's
// node hint the DeviceClasses (an extended resource a class provides is
// not needed in the node's allocatable) and DynamicResources' claim and
// pod hints the ResourceClaims (which claims the pod uses). l should be
// the listers the framework reads, holding the event's new state; a nil
// lister reads as empty. A hint runs on the goroutine that raises the
// event, under the queue's lock, and calls the listers there.
//
// NodeAffinity's hint ignores the plugin's addedAffinity argument, which
// the default profile does not set: a profile that sets it sees more pods
// retried than kube-scheduler would retry, never fewer.
func PluginEventsFor(fs feature.Features, l framework.Listers) PluginEvents {
	h := clusterHints{listers: l, anyAntiTerm: fs.AnyAntiAffinityTermRequeues}
	event := func(r EventResource, a ActionType, hint QueueingHintFn) ClusterEventWithHint {
		return ClusterEventWithHint{Event: ClusterEvent{Resource: r, ActionType: a}, Hint: hint}
	}
	// assigned registers events about bound pods: AssignedPod ones by
	// role, Pod ones (every pod) before.
	assigned := func(a ActionType, hint QueueingHintFn) ClusterEventWithHint {
		if fs.PodEventsByRole {
			return event(AssignedPod, a, hint)
		}
		return event(Pod, a, hint)
	}
	// target registers updates of the pending pod itself: TargetPod ones
	// by role; before, Pod ones, whose hint skips other pods' updates.
	target := func(a ActionType, hint QueueingHintFn) ClusterEventWithHint {
		if fs.PodEventsByRole {
			return event(TargetPod, a, hint)
		}
		return event(Pod, a, ownUpdate(hint))
	}
	claimActions := Add | Update
	if fs.ResourceClaimDeleteEvents {
		claimActions |= Delete
	}
	pe := PluginEvents{
		names.SchedulingGates: {target(UpdatePodSchedulingGatesEliminated, alwaysQueue)},
		names.NodeUnschedulable: {
			event(Node, Add|UpdateNodeTaint, nodeBecameSchedulable),
			target(UpdatePodToleration, podToleratesUnschedulable),
		},
		names.NodeName: {event(Node, Add, nil)},
		names.TaintToleration: {
			event(Node, Add|UpdateNodeTaint, taintsNowTolerated),
			target(UpdatePodToleration, alwaysQueue),
		},
		names.NodeAffinity: {event(Node, Add|UpdateNodeLabel, nodeAffinityNowMatches)},
		names.NodePorts: {
			assigned(Delete, deletedPodFreesPorts),
			event(Node, Add, nil),
		},
		names.VolumeRestrictions: {
			assigned(Delete, deletedPodFreesVolumes),
			event(Node, Add, nil),
			event(PersistentVolumeClaim, Add, claimOfPod),
		},
		names.NodeVolumeLimits: {
			event(CSINode, Add, nil),
			event(CSINode, Update, csiNodeLimitRaised),
			assigned(Delete, deletedPodFreesAttachments),
			event(PersistentVolumeClaim, Add, claimOfPodOrEphemeral),
			event(VolumeAttachment, Delete, volumeAttachmentDeleted),
		},
		names.VolumeBinding: {
			event(StorageClass, Add|Update, storageClassTopologyChanged),
			event(PersistentVolumeClaim, Add|Update, claimOfPodOrEphemeral),
			event(PersistentVolume, Add|Update, nil),
			event(Node, Add|UpdateNodeLabel, nil),
			event(CSINode, Add|Update, csiNodeMigrationChanged),
			event(CSIDriver, Update, csiDriverCapacityDisabled),
			event(CSIStorageCapacity, Add|Update, storageCapacityGrew),
		},
		names.VolumeZone: {
			event(StorageClass, Add, storageClassWaitsForConsumer),
			event(Node, Add|UpdateNodeLabel, nil),
			event(PersistentVolumeClaim, Add|Update, claimOfPod),
			event(PersistentVolume, Add|Update, volumeTopologyChanged),
		},
		names.DynamicResources: {
			event(Node, Add|UpdateNodeLabel|UpdateNodeAllocatable, nil),
			event(ResourceClaim, claimActions, h.claimChangeHelps),
			target(UpdatePodGeneratedResourceClaim, h.podClaimsNowUsable),
			event(DeviceClass, Add|Update, nil),
			event(ResourceSlice, Add|Update, nil),
		},
		names.NodeDeclaredFeatures: {
			event(Node, Add|UpdateNodeDeclaredFeature, declaredFeaturesChanged),
			target(Update, requiredFeaturesChanged),
		},
		// Upstream's PreEnqueue holds a pod back while its asynchronous
		// preemption runs; the plugins that rejected the pod decide when
		// it is retried, never DefaultPreemption.
		names.DefaultPreemption: {assigned(Delete, never)},
	}
	// These three split one registration for every pod into one per role,
	// each with a hint of its own.
	fitNode := event(Node, Add|UpdateNodeAllocatable, h.nodeNowFitsResources)
	fitClass := event(DeviceClass, Add|Update, deviceClassProvidesRequest)
	spreadNode := event(Node, Add|Delete|UpdateNodeLabel|UpdateNodeTaint, h.spreadAfterNodeChange)
	affinityNode := event(Node, Add|UpdateNodeLabel, podAffinityAfterNodeChange)
	if fs.PodEventsByRole {
		pe[names.NodeResourcesFit] = []ClusterEventWithHint{
			event(AssignedPod, Delete, podHeldPlace), fitNode, fitClass,
			event(AssignedPod, UpdatePodScaleDown, boundPodGaveUpRequest),
			event(TargetPod, UpdatePodScaleDown, alwaysQueue),
		}
		pe[names.PodTopologySpread] = []ClusterEventWithHint{
			event(AssignedPod, Add|UpdatePodLabel|Delete, h.spreadAfterAssignedPodChange),
			event(TargetPod, UpdatePodLabel|UpdatePodToleration, h.spreadAfterTargetPodChange),
			spreadNode,
		}
		pe[names.InterPodAffinity] = []ClusterEventWithHint{
			event(AssignedPod, Add|UpdatePodLabel|Delete, h.podAffinityAfterAssignedPodChange),
			event(TargetPod, UpdatePodLabel, alwaysQueue),
			affinityNode,
		}
	} else {
		pe[names.NodeResourcesFit] = []ClusterEventWithHint{
			event(Pod, Delete|UpdatePodScaleDown, resourcesFreedByPod), fitNode, fitClass,
		}
		pe[names.PodTopologySpread] = []ClusterEventWithHint{
			event(Pod, Add|UpdatePodLabel|UpdatePodToleration|Delete, h.spreadAfterPodChange),
			spreadNode,
		}
		// The pod's own relabelling may help: a pod's anti-affinity may
		// have selected its old labels.
		pe[names.InterPodAffinity] = []ClusterEventWithHint{
			event(Pod, Add|UpdatePodLabel|Delete, ownUpdateOr(alwaysQueue, h.podAffinityAfterAssignedPodChange)),
			affinityNode,
		}
	}
	return pe
}

// never is DefaultPreemption's hint.
func never(*v1.Pod, any, any) (QueueingHint, error) { return QueueSkip, nil }

// alwaysQueue is the hint of the TargetPod registrations whose update of
// the pod, whatever it changed, may help it.
func alwaysQueue(*v1.Pod, any, any) (QueueingHint, error) { return Queue, nil }

// ownUpdate returns a hint that asks hint about updates of the pod itself
// and skips every other pod's: the hint of a Pod registration, which
// every pod's update matches, before PodEventsByRole.
func ownUpdate(hint QueueingHintFn) QueueingHintFn {
	return func(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
		_, updated, err := objects[*v1.Pod](oldObj, newObj)
		if err != nil {
			return Queue, err
		}
		if updated == nil {
			return Queue, errNoObject
		}
		if updated.UID != pod.UID {
			return QueueSkip, nil
		}
		return hint(pod, oldObj, newObj)
	}
}

// ownUpdateOr returns a hint that asks own about updates of the pod
// itself and others about every other event.
func ownUpdateOr(own, others QueueingHintFn) QueueingHintFn {
	return func(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
		old, updated, err := objects[*v1.Pod](oldObj, newObj)
		if err != nil {
			return Queue, err
		}
		if old != nil && updated != nil && updated.UID == pod.UID {
			return own(pod, oldObj, newObj)
		}
		return others(pod, oldObj, newObj)
	}
}

// clusterHints are the hints that read cluster objects besides the
// event's.
type clusterHints struct {
	listers framework.Listers
	// anyAntiTerm is the release's AnyAntiAffinityTermRequeues.
	anyAntiTerm bool
}

// objects returns an event's objects as T, the zero T for nil (an
// addition has no old object, a deletion no new one), or an error when
// either is of another type, which the queue reads as Queue.
func objects[T any](oldObj, newObj any) (old, updated T, err error) {
	if newObj != nil {
		var ok bool
		if updated, ok = newObj.(T); !ok {
			return old, updated, fmt.Errorf("expected %T, got %T", updated, newObj)
		}
	}
	if oldObj != nil {
		var ok bool
		if old, ok = oldObj.(T); !ok {
			return old, updated, fmt.Errorf("expected %T, got %T", old, oldObj)
		}
	}
	return old, updated, nil
}

// errNoObject is a hint's error for an event without the object the hint
// needs, which only a caller's mistake raises.
var errNoObject = errors.New("queueing hint: the event has no object")

// assignedOrNominated reports whether p holds, or is about to hold, a
// place on a node; an unscheduled pod's coming and going frees nothing.
func assignedOrNominated(p *v1.Pod) bool {
	return p.Spec.NodeName != "" || p.Status.NominatedNodeName != ""
}

type pluginHint struct {
	plugin string
	fn     QueueingHintFn
}

type eventHints struct {
	event ClusterEvent
	hints []pluginHint
}

// hintTable is PluginEvents indexed by event, in registration order.
type hintTable struct {
	events     []eventHints
	registered sets.Set[string]
	byPlugin   map[string][]ClusterEvent
}

// newHintTable indexes pe. Before RegisteredEventsOnly, as kube-scheduler
// did then, a node that becomes untainted counts as a new one for a
// plugin registered for node additions but not taint updates.
func newHintTable(pe PluginEvents, fs feature.Features) hintTable {
	t := hintTable{registered: sets.New[string](), byPlugin: map[string][]ClusterEvent{}}
	add := func(plugin string, e ClusterEvent, fn QueueingHintFn) {
		t.byPlugin[plugin] = append(t.byPlugin[plugin], e)
		for i := range t.events {
			if t.events[i].event == e {
				t.events[i].hints = append(t.events[i].hints, pluginHint{plugin, fn})
				return
			}
		}
		t.events = append(t.events, eventHints{event: e, hints: []pluginHint{{plugin, fn}}})
	}
	for _, plugin := range sets.List(sets.KeySet(pe)) {
		t.registered.Insert(plugin)
		nodeAdded, taintUpdated := false, false
		for _, eh := range pe[plugin] {
			add(plugin, eh.Event, eh.Hint)
			if eh.Event.Resource == Node {
				nodeAdded = nodeAdded || eh.Event.ActionType&Add != 0
				taintUpdated = taintUpdated || eh.Event.ActionType&UpdateNodeTaint != 0
			}
		}
		if nodeAdded && !taintUpdated && !fs.RegisteredEventsOnly {
			add(plugin, ClusterEvent{Resource: Node, ActionType: UpdateNodeTaint}, nil)
		}
	}
	return t
}
