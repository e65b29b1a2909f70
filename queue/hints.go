package queue

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

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
// plugins register (with queueing hints on, as they are by default), and
// SchedulingGates' hint. The other plugins' hints are not reproduced, so
// a registered event always retries the pods the plugin rejected: pods
// may be retried more often than by kube-scheduler, never less.
func DefaultPluginEvents() PluginEvents {
	node := func(a ActionType) ClusterEventWithHint {
		return ClusterEventWithHint{Event: ClusterEvent{Resource: Node, ActionType: a}}
	}
	pod := func(a ActionType) ClusterEventWithHint {
		return ClusterEventWithHint{Event: ClusterEvent{Resource: Pod, ActionType: a}}
	}
	other := func(r EventResource, a ActionType) ClusterEventWithHint {
		return ClusterEventWithHint{Event: ClusterEvent{Resource: r, ActionType: a}}
	}
	return PluginEvents{
		names.NodeUnschedulable:  {node(Add | UpdateNodeTaint), pod(UpdatePodToleration)},
		names.NodeName:           {node(Add)},
		names.TaintToleration:    {node(Add | UpdateNodeTaint), pod(UpdatePodToleration)},
		names.NodeAffinity:       {node(Add | UpdateNodeLabel)},
		names.NodePorts:          {pod(Delete), node(Add)},
		names.NodeResourcesFit:   {pod(Delete | UpdatePodScaleDown), node(Add | UpdateNodeAllocatable), other(DeviceClass, Add|Update)},
		names.VolumeRestrictions: {pod(Delete), node(Add), other(PersistentVolumeClaim, Add)},
		names.NodeVolumeLimits: {other(CSINode, Add), other(CSINode, Update), pod(Delete),
			other(PersistentVolumeClaim, Add), other(VolumeAttachment, Delete)},
		names.VolumeZone: {other(StorageClass, Add), node(Add | UpdateNodeLabel),
			other(PersistentVolumeClaim, Add|Update), other(PersistentVolume, Add|Update)},
		names.PodTopologySpread: {pod(Add | UpdatePodLabel | UpdatePodToleration | Delete), node(Add | Delete | UpdateNodeLabel | UpdateNodeTaint)},
		names.InterPodAffinity:  {pod(Add | UpdatePodLabel | Delete), node(Add | UpdateNodeLabel)},
		names.VolumeBinding: {other(StorageClass, Add|Update), other(PersistentVolumeClaim, Add|Update),
			other(PersistentVolume, Add|Update), node(Add | UpdateNodeLabel), other(CSINode, Add|Update),
			other(CSIDriver, Update), other(CSIStorageCapacity, Add|Update)},
		names.SchedulingGates: {{Event: ClusterEvent{Resource: Pod, ActionType: UpdatePodSchedulingGatesEliminated}, Hint: sameUnscheduledPod}},
		names.DynamicResources: {node(Add | UpdateNodeLabel | UpdateNodeAllocatable), other(ResourceClaim, Add|Update),
			pod(UpdatePodGeneratedResourceClaim), other(DeviceClass, Add|Update), other(ResourceSlice, Add|Update)},
		names.NodeDeclaredFeatures: {node(Add | UpdateNodeDeclaredFeature), pod(Update)},
	}
}

// sameUnscheduledPod is SchedulingGates' hint: only the pod's own update
// can remove its gates.
func sameUnscheduledPod(pod *v1.Pod, _, newObj any) (QueueingHint, error) {
	updated, ok := newObj.(*v1.Pod)
	if !ok {
		return Queue, fmt.Errorf("SchedulingGates hint: %T is not a pod", newObj)
	}
	if updated.UID != pod.UID {
		return QueueSkip, nil
	}
	return Queue, nil
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
