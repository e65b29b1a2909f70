package queue

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

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

// DefaultPluginEvents returns the events kube-scheduler v1.36.3's default
// plugins register, with queueing hints on as they are there (GA, locked
// on), and each plugin's hint: the same events and action types as
// upstream's EventsToRegister, and hints that give upstream's verdict for
// the same pod and objects, for the default plugin arguments and feature
// gates. A pod waiting in the unschedulable pool is retried after an
// event only when the hint of a plugin that rejected it says the event may
// help. In short, an event helps a pod that:
//
//   - NodeResourcesFit rejected: a node added, or grown (allocatable of a
//     resource the pod requests, or pod slots), that the pod fits when
//     empty; a pod on a node deleted; a bound pod (or the pod itself)
//     scaled down in a resource the pod requests; a DeviceClass that now
//     provides an extended resource the pod requests;
//   - NodeAffinity rejected: a node added or relabelled that now matches
//     the pod's nodeSelector and required node affinity;
//   - TaintToleration or NodeUnschedulable rejected: a node added or
//     updated that now has no taint the pod does not tolerate (is no
//     longer unschedulable), or the pod gaining a toleration that helps;
//   - NodePorts rejected: a bound pod using one of its host ports deleted;
//   - InterPodAffinity or PodTopologySpread rejected: a pod on a node
//     added, deleted or relabelled that its terms or constraints select;
//     a node added, deleted or changed in the topology keys they use;
//   - a volume plugin rejected: its claims added or updated, a volume
//     whose zones changed, a StorageClass, CSINode, CSIDriver,
//     CSIStorageCapacity or VolumeAttachment change that raises a limit
//     or a capacity it could use, a pod sharing its disks deleted;
//   - DynamicResources rejected: one of its ResourceClaims created or
//     changed in status, any claim deallocated, its own generated claims
//     recorded; nodes, DeviceClasses and ResourceSlices always;
//   - NodeDeclaredFeatures rejected: a node's declared features changed,
//     or the features the pod needs;
//   - SchedulingGates held back: its own gates removed.
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
func DefaultPluginEvents(l framework.Listers) PluginEvents {
	h := clusterHints{listers: l}
	event := func(r EventResource, a ActionType, hint QueueingHintFn) ClusterEventWithHint {
		return ClusterEventWithHint{Event: ClusterEvent{Resource: r, ActionType: a}, Hint: hint}
	}
	return PluginEvents{
		names.SchedulingGates: {event(Pod, UpdatePodSchedulingGatesEliminated, sameUnscheduledPod)},
		names.NodeUnschedulable: {
			event(Node, Add|UpdateNodeTaint, nodeBecameSchedulable),
			event(Pod, UpdatePodToleration, podToleratesUnschedulable),
		},
		names.NodeName: {event(Node, Add, nil)},
		names.TaintToleration: {
			event(Node, Add|UpdateNodeTaint, taintsNowTolerated),
			event(Pod, UpdatePodToleration, podOwnTolerationsChanged),
		},
		names.NodeAffinity: {event(Node, Add|UpdateNodeLabel, nodeAffinityNowMatches)},
		names.NodePorts: {
			event(Pod, Delete, deletedPodFreesPorts),
			event(Node, Add, nil),
		},
		names.NodeResourcesFit: {
			event(Pod, Delete|UpdatePodScaleDown, resourcesFreedByPod),
			event(Node, Add|UpdateNodeAllocatable, h.nodeNowFitsResources),
			event(DeviceClass, Add|Update, deviceClassProvidesRequest),
		},
		names.VolumeRestrictions: {
			event(Pod, Delete, deletedPodFreesVolumes),
			event(Node, Add, nil),
			event(PersistentVolumeClaim, Add, claimOfPod),
		},
		names.NodeVolumeLimits: {
			event(CSINode, Add, nil),
			event(CSINode, Update, csiNodeLimitRaised),
			event(Pod, Delete, deletedPodFreesAttachments),
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
		names.PodTopologySpread: {
			event(Pod, Add|UpdatePodLabel|UpdatePodToleration|Delete, h.spreadAfterPodChange),
			event(Node, Add|Delete|UpdateNodeLabel|UpdateNodeTaint, h.spreadAfterNodeChange),
		},
		names.InterPodAffinity: {
			event(Pod, Add|UpdatePodLabel|Delete, podAffinityAfterPodChange),
			event(Node, Add|UpdateNodeLabel, podAffinityAfterNodeChange),
		},
		names.DynamicResources: {
			event(Node, Add|UpdateNodeLabel|UpdateNodeAllocatable, nil),
			event(ResourceClaim, Add|Update, h.claimChangeHelps),
			event(Pod, UpdatePodGeneratedResourceClaim, h.podClaimsNowUsable),
			event(DeviceClass, Add|Update, nil),
			event(ResourceSlice, Add|Update, nil),
		},
		names.NodeDeclaredFeatures: {
			event(Node, Add|UpdateNodeDeclaredFeature, declaredFeaturesChanged),
			event(Pod, Update, requiredFeaturesChanged),
		},
		// Upstream's PreEnqueue holds a pod back while its asynchronous
		// preemption runs; the plugins that rejected the pod decide when
		// it is retried, never DefaultPreemption.
		names.DefaultPreemption: {event(Pod, Delete, never)},
	}
}

// never is DefaultPreemption's hint.
func never(*v1.Pod, any, any) (QueueingHint, error) { return QueueSkip, nil }

// clusterHints are the hints that read cluster objects besides the
// event's.
type clusterHints struct {
	listers framework.Listers
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

// sameUnscheduledPod is SchedulingGates' hint: only the pod's own update
// can remove its gates.
func sameUnscheduledPod(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
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
	return Queue, nil
}

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

func newHintTable(pe PluginEvents) hintTable {
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
		// As kube-scheduler: a node that becomes untainted is as good as a
		// new one to a plugin waiting for new nodes.
		if nodeAdded && !taintUpdated {
			add(plugin, ClusterEvent{Resource: Node, ActionType: UpdateNodeTaint}, nil)
		}
	}
	return t
}
