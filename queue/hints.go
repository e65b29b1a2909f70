package queue

import (
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
)

type pluginHint struct {
	plugin string
	fn     fwk.QueueingHintFn
}

type eventHints struct {
	event fwk.ClusterEvent
	hints []pluginHint
}

// hintTable is PluginEvents indexed by event, in registration order.
type hintTable struct {
	events     []eventHints
	registered sets.Set[string]
	byPlugin   map[string][]fwk.ClusterEvent
}

// newHintTable indexes pe. Before RegisteredEventsOnly, as kube-scheduler
// did then, a node that becomes untainted counts as a new one for a
// plugin registered for node additions but not taint updates.
func newHintTable(pe fwk.PluginEvents, fs feature.Features) hintTable {
	t := hintTable{registered: sets.New[string](), byPlugin: map[string][]fwk.ClusterEvent{}}
	add := func(plugin string, e fwk.ClusterEvent, fn fwk.QueueingHintFn) {
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
			if eh.Event.Resource == fwk.Node {
				nodeAdded = nodeAdded || eh.Event.ActionType&fwk.Add != 0
				taintUpdated = taintUpdated || eh.Event.ActionType&fwk.UpdateNodeTaint != 0
			}
		}
		if nodeAdded && !taintUpdated && !fs.RegisteredEventsOnly {
			add(plugin, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}, nil)
		}
	}
	return t
}
