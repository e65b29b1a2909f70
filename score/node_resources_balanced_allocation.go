package score

import (
	"context"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/noderesources"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var (
	_ fwk.PreScorePlugin = (*NodeResourcesBalancedAllocation)(nil)
	_ fwk.ScorePlugin    = (*NodeResourcesBalancedAllocation)(nil)
)

// NodeResourcesBalancedAllocation favours nodes whose resources (cpu and
// memory by default) stay evenly used with the pod placed there. For the
// resources the node has (and, for extended resources, the pod requests)
// it takes the used fraction of each, capped at 1, and the balance
// b = 100 * (1 - standard deviation of the fractions), truncated; the score
// is 50 + (50 + b with the pod - b without it) / 2, so 75 means the pod
// leaves the balance as it was, more means it improves it.
//
// Requests are read as given, without the defaults NodeResourcesFit assumes
// for unset cpu and memory, so a pod requesting none of the resources is
// not scored at all (PreScore returns Skip).
//
// A DRA-backed extended resource the node has none of is counted from its
// DeviceClass's devices, as for NodeResourcesFit.
//
// The zero value scores cpu and memory. It is safe for concurrent use.
type NodeResourcesBalancedAllocation struct {
	scorer *noderesources.Scorer
}

// NewNodeResourcesBalancedAllocation returns the plugin configured by args,
// kube-scheduler's own type: the resources to balance, cpu and memory when
// unset (and for nil args). args are checked as kube-scheduler checks them
// (no repeated resource, every weight 1), and an error lists every problem
// in its words.
func NewNodeResourcesBalancedAllocation(args *configv1.NodeResourcesBalancedAllocationArgs) (*NodeResourcesBalancedAllocation, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &NodeResourcesBalancedAllocation{scorer: noderesources.NewBalancedScorer(a)}, nil
}

// Name returns "NodeResourcesBalancedAllocation".
func (*NodeResourcesBalancedAllocation) Name() string { return names.NodeResourcesBalancedAllocation }

func (pl *NodeResourcesBalancedAllocation) getScorer() *noderesources.Scorer {
	if pl.scorer == nil {
		return noderesources.DefaultBalancedScorer
	}
	return pl.scorer
}

var balancedAllocationKey = fwk.NewStateKey[resourceScoreState]()

// PodOnlyPreScore reports true: PreScore depends on the pod alone, so the
// framework may score nodes while it filters them.
func (*NodeResourcesBalancedAllocation) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool {
	return true
}

// PreScore computes the pod's requests once for all nodes. It returns Skip
// when the pod requests none of the scored resources, as kube-scheduler
// does, and Error for a nil pod.
func (pl *NodeResourcesBalancedAllocation) PreScore(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *fwk.Status {
	return preScoreResources(pl.getScorer(), balancedAllocationKey, state, pod, true)
}

// Score returns the node's score, in [50, 100] for well-formed nodes, or
// Error for a NodeInfo without a node or a nil pod. Without PreScore's
// state it computes the pod's requests itself, and scores 0 for a pod
// PreScore would have skipped.
func (pl *NodeResourcesBalancedAllocation) Score(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return scoreResources(ctx, pl.getScorer(), balancedAllocationKey, state, pod, ni, true)
}

// NodeLocal reports whether the score of a node depends on the pod, the
// number of nodes and that node alone (fwk.NodeLocalPlugin): not
// when the plugin scores an extended resource a DeviceClass may provide,
// which counts the cluster's devices.
func (pl *NodeResourcesBalancedAllocation) NodeLocal(*v1.Pod) bool {
	return !scoresExtended(pl.getScorer())
}
