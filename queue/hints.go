package queue

import (
	"context"
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
	Event ClusterEvent
	Hint  QueueingHintFn
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
		names.NodeResourcesFit:   {pod(Delete | UpdatePodScaleDown), node(Add | UpdateNodeAllocatable)},
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
		schedulingGatesName: {{Event: ClusterEvent{Resource: Pod, ActionType: UpdatePodSchedulingGatesEliminated}, Hint: sameUnscheduledPod}},
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

// PreEnqueuePlugin decides whether a pod may enter the active queue at
// all. A pod it turns down waits, gated, in the unschedulable pool until
// an event the plugin registered for (in [PluginEvents]) says to try
// again.
type PreEnqueuePlugin interface {
	framework.Plugin
	// PreEnqueue returns nil to admit pod, and a non-nil Status, usually
	// UnschedulableAndUnresolvable, to gate it. It must not modify pod.
	PreEnqueue(ctx context.Context, pod *v1.Pod) *framework.Status
}

const schedulingGatesName = "SchedulingGates"

// SchedulingGates gates pods that have scheduling gates
// (spec.schedulingGates), as kube-scheduler's plugin of that name does; it
// is the queue's default [PreEnqueuePlugin]. The zero value is ready.
type SchedulingGates struct{}

var _ PreEnqueuePlugin = SchedulingGates{}

// Name returns "SchedulingGates".
func (SchedulingGates) Name() string { return schedulingGatesName }

// PreEnqueue returns nil for a pod without scheduling gates, and
// UnschedulableAndUnresolvable "waiting for scheduling gates: [...]"
// naming them otherwise.
func (SchedulingGates) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, len(pod.Spec.SchedulingGates))
	for i, g := range pod.Spec.SchedulingGates {
		gates[i] = g.Name
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}
