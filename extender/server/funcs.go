package server

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// EachNode returns a FilterFunc that checks each node with check, the
// shape of a kubesched Filter plugin without state: nil (or Success) keeps
// the node, Unschedulable or UnschedulableAndUnresolvable rejects it with
// the status's message, and any other code fails the call, naming the
// node. Nodes are checked one after the other, in order.
func EachNode(check func(ctx context.Context, pod *v1.Pod, node *nodeinfo.NodeInfo) *fwk.Status) FilterFunc {
	return func(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error) {
		var d framework.Diagnosis
		var feasible []*nodeinfo.NodeInfo
		for _, ni := range nodes {
			s := check(ctx, pod, ni)
			switch {
			case s.IsSuccess():
				feasible = append(feasible, ni)
			case s.IsRejected():
				d.SetNodeStatus(ni.Name(), s)
			default:
				return nil, d, fmt.Errorf("checking node %q: %v", ni.Name(), s)
			}
		}
		return feasible, d, nil
	}
}

// EachNodeScore returns a PrioritizeFunc that scores each node with score;
// an error fails the call, naming the node.
func EachNodeScore(score func(ctx context.Context, pod *v1.Pod, node *nodeinfo.NodeInfo) (int64, error)) PrioritizeFunc {
	return func(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, error) {
		list := make(extenderv1.HostPriorityList, len(nodes))
		for i, ni := range nodes {
			s, err := score(ctx, pod, ni)
			if err != nil {
				return nil, fmt.Errorf("scoring node %q: %w", ni.Name(), err)
			}
			list[i] = extenderv1.HostPriority{Host: ni.Name(), Score: s}
		}
		return list, nil
	}
}

// FrameworkPrioritize returns a PrioritizeFunc that scores nodes with f's
// score plugins ([framework.Framework.Score]) and rescales the weighted
// totals so that the best node gets extenderv1.MaxExtenderPriority (10)
// and the others their share of it, rounded down: the scheduler's weight
// for the extender then says how much this ranking counts.
func FrameworkPrioritize(f *framework.Framework) PrioritizeFunc {
	return func(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, error) {
		scores, err := f.Score(ctx, pod, nodes)
		if err != nil {
			return nil, err
		}
		var best int64
		for _, s := range scores {
			best = max(best, s.TotalScore)
		}
		list := make(extenderv1.HostPriorityList, len(scores))
		for i, s := range scores {
			list[i].Host = s.Name
			if best > 0 {
				list[i].Score = s.TotalScore * extenderv1.MaxExtenderPriority / best
			}
		}
		return list, nil
	}
}
