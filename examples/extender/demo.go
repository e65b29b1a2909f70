package main

import (
	"cmp"
	"context"
	"strconv"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// priorityLabel marks the nodes the demo extender accepts; its value, an
// integer, is the node's priority.
const priorityLabel = "priority.lixueduan.com"

// The demo's reasons for rejecting a node.
const (
	errReasonNoPriority = "node(s) didn't have label " + priorityLabel
	errReasonNotHighest = "node(s) didn't have the highest " + priorityLabel
)

// The verbs the demo serves, each at "/" + verb.
const (
	verbFilter        = "filter"
	verbFilterOnlyOne = "filter_onlyone"
	verbPrioritize    = "prioritize"
	verbBind          = "bind"
)

// newHandler serves the demo's verbs: /bind only if bind is not nil.
// nodes, if not nil, answers schedulers that send node names only
// (nodeCacheCapable).
func newHandler(nodes server.NodeSource, bind server.BindFunc, opts ...server.Option) (*server.Handler, error) {
	opts = append([]server.Option{
		server.Filter(verbFilter, server.EachNode(hasPriority)),
		server.Filter(verbFilterOnlyOne, onlyHighest),
		server.Prioritize(verbPrioritize, server.EachNodeScore(priorityScore)),
	}, opts...)
	if bind != nil {
		opts = append(opts, server.Bind(verbBind, bind))
	}
	if nodes != nil {
		opts = append(opts, server.WithNodes(nodes))
	}
	return server.New(opts...)
}

// hasPriority keeps the nodes carrying priorityLabel. Without it no
// preemption can help, hence UnschedulableAndUnresolvable.
func hasPriority(_ context.Context, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if _, ok := ni.Labels()[priorityLabel]; ok {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, errReasonNoPriority)
}

// priority returns the node's priorityLabel as an integer; a missing or
// malformed label counts as 0.
func priority(ni *nodeinfo.NodeInfo) int64 {
	p, err := strconv.ParseInt(ni.Labels()[priorityLabel], 10, 64)
	if err != nil {
		return 0
	}
	return p
}

// priorityScore scores a node by its priority, brought into the range an
// extender's scores must lie in, 0 to 10 (extenderv1.MaxExtenderPriority):
// kube-scheduler multiplies a score by the extender's weight and by 10
// without checking it, so an unchecked label of 20 would outweigh every
// plugin. Priorities above 10 score as 10.
func priorityScore(_ context.Context, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, error) {
	return min(max(priority(ni), extenderv1.MinExtenderPriority), extenderv1.MaxExtenderPriority), nil
}

// onlyHighest keeps only the labelled node of highest priority (the first
// by name among equals): a filter that leaves one node decides the
// placement alone, whatever the scores, which is how the seed's extender
// takes full control.
func onlyHighest(_ context.Context, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error) {
	var d framework.Diagnosis
	var best *nodeinfo.NodeInfo
	for _, ni := range nodes {
		if _, ok := ni.Labels()[priorityLabel]; !ok {
			d.SetNodeStatus(ni.Name(), fwk.NewStatus(fwk.UnschedulableAndUnresolvable, errReasonNoPriority))
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(priority(ni), priority(best)), cmp.Compare(best.Name(), ni.Name())) > 0 {
			best = ni
		}
	}
	if best == nil {
		return nil, d, nil
	}
	for _, ni := range nodes {
		if d.NodeStatus(ni.Name()) == nil && ni != best {
			d.SetNodeStatus(ni.Name(), fwk.NewStatus(fwk.Unschedulable, errReasonNotHighest))
		}
	}
	return []*nodeinfo.NodeInfo{best}, d, nil
}
