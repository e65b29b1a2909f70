package queue

import (
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
)

type pluginHint struct {
	plugin string
	fn     framework.QueueingHintFn
}

type eventHints struct {
	event framework.ClusterEvent
	hints []pluginHint
}

// hintTable is PluginEvents indexed by event, in registration order.
type hintTable struct {
	events     []eventHints
	registered sets.Set[string]
	byPlugin   map[string][]framework.ClusterEvent
}

// newHintTable indexes pe. Before RegisteredEventsOnly, as kube-scheduler
// did then, a node that becomes untainted counts as a new one for a
// plugin registered for node additions but not taint updates.
func newHintTable(pe framework.PluginEvents, fs feature.Features) hintTable {
	t := hintTable{registered: sets.New[string](), byPlugin: map[string][]framework.ClusterEvent{}}
	add := func(plugin string, e framework.ClusterEvent, fn framework.QueueingHintFn) {
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
			if eh.Event.Resource == framework.Node {
				nodeAdded = nodeAdded || eh.Event.ActionType&framework.Add != 0
				taintUpdated = taintUpdated || eh.Event.ActionType&framework.UpdateNodeTaint != 0
			}
		}
		if nodeAdded && !taintUpdated && !fs.RegisteredEventsOnly {
			add(plugin, framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint}, nil)
		}
	}
	return t
}
