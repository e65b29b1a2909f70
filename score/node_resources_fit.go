package score

import (
	"context"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/noderesources"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var (
	_ fwk.PreScorePlugin = (*NodeResourcesFit)(nil)
	_ fwk.ScorePlugin    = (*NodeResourcesFit)(nil)
)

// NodeResourcesFit ranks nodes by how much of the scored resources (cpu and
// memory by default) would be in use with the pod placed there. Containers
// without a cpu or memory request count as 100m and 200Mi, and so do the
// node's pods. Resources the node has none of are left out, and so are
// extended resources the pod does not request.
//
// The pod's request is read as kube-scheduler's scorer reads it:
// containers, init containers, sidecars and overhead, but not pod-level
// requests nor a resize in the pod's status (its scorer is built without
// those feature gates, unlike the filter and BalancedAllocation).
//
// An extended resource the node has none of, but that a DeviceClass
// provides (DRA-backed, see filter.NodeResourcesFit), is counted as
// kube-scheduler counts it: the devices of that class on the
// node's ResourceSlices, and how many of them are allocated. This matters
// only for a configuration that scores extended resources; the default
// scores cpu and memory.
//
// The zero value uses the default strategy, LeastAllocated over cpu and
// memory with weight 1. It is safe for concurrent use.
type NodeResourcesFit struct {
	scorer *noderesources.Scorer
}

// NewNodeResourcesFit returns the score plugin configured by args,
// kube-scheduler's own type, which filter.NewNodeResourcesFit takes too:
// its scoringStrategy is LeastAllocated ((allocatable - requested) * 100 /
// allocatable per resource, averaged by weight), MostAllocated (requested
// * 100 / allocatable) or RequestedToCapacityRatio (the shape at that
// utilization). Unset fields (and nil args) take kube-scheduler's
// defaults; args are then checked as kube-scheduler checks them, and an
// error lists every problem in its words.
func NewNodeResourcesFit(args *configv1.NodeResourcesFitArgs) (*NodeResourcesFit, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &NodeResourcesFit{scorer: noderesources.NewFitScorer(a)}, nil
}

// Name returns "NodeResourcesFit".
func (*NodeResourcesFit) Name() string { return names.NodeResourcesFit }

func (pl *NodeResourcesFit) getScorer() *noderesources.Scorer {
	if pl.scorer == nil {
		return noderesources.DefaultFitScorer
	}
	return pl.scorer
}

// resourceScoreState is what the resource scorers' PreScore computes
// once for all nodes: the pod's requests, one per scored resource, and the
// device counts behind scored DRA-backed extended resources (nil when
// there are none).
type resourceScoreState struct {
	requests []int64
	dra      *dra.Totals
}

var resourcesFitScoreKey = fwk.NewStateKey[resourceScoreState]()

// errNilPod is what the resource-allocation scorers return for a nil pod.
var errNilPod = fwk.NewStatus(fwk.Error, "nil pod")

// PodOnlyPreScore reports true: PreScore depends on the pod alone, so the
// framework may score nodes while it filters them.
func (*NodeResourcesFit) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// PreScore computes the pod's requests once for all nodes. Like
// kube-scheduler's, it never returns Skip; it returns Error for a nil pod.
func (pl *NodeResourcesFit) PreScore(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *fwk.Status {
	return preScoreResources(pl.getScorer(), resourcesFitScoreKey, state, pod, false)
}

// Score returns the node's score in [0, 100] for well-formed nodes (0 when
// it has none of the scored resources), or Error for a NodeInfo without a
// node or a nil pod. Without PreScore's state it computes the pod's
// requests itself.
func (pl *NodeResourcesFit) Score(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return scoreResources(ctx, pl.getScorer(), resourcesFitScoreKey, state, pod, ni, false)
}

// scoreResources is Score for both resource-allocation plugins: it reads
// the pod's requests from key, or computes them when absent or written by
// a differently configured plugin. With zeroForBestEffort, computed
// requests that are all zero score 0, standing in for PreScore's Skip.
// preScoreResources is PreScore for the resource scorers: it stores the
// pod's request vector, or skips a pod requesting nothing when
// skipBestEffort is set.
func preScoreResources(s *noderesources.Scorer, key fwk.StateKey[resourceScoreState], state *fwk.CycleState, pod *v1.Pod, skipBestEffort bool) *fwk.Status {
	if pod == nil {
		return errNilPod
	}
	req := s.PodRequests(pod)
	if skipBestEffort && noderesources.AllZero(req) {
		return skip
	}
	totals, err := draTotals(s, state)
	if err != nil {
		return fwk.AsStatus(err)
	}
	key.Write(state, resourceScoreState{requests: req, dra: totals})
	return nil
}

func scoreResources(ctx context.Context, s *noderesources.Scorer, key fwk.StateKey[resourceScoreState], state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, zeroForBestEffort bool) (int64, *fwk.Status) {
	node := ni.Node()
	if node == nil {
		return 0, errNilNode
	}
	st, ok := key.Read(state)
	if !ok || len(st.requests) != len(s.Resources()) {
		if pod == nil {
			return 0, errNilPod
		}
		st.requests = s.PodRequests(pod)
		if zeroForBestEffort && noderesources.AllZero(st.requests) {
			return 0, nil
		}
		totals, err := draTotals(s, state)
		if err != nil {
			return 0, fwk.AsStatus(err)
		}
		st.dra = totals
	}
	if st.dra == nil {
		return s.Score(st.requests, ni), nil
	}
	return s.ScoreWithDRA(st.requests, ni, func(name v1.ResourceName) (int64, int64) {
		return st.dra.Of(ctx, node, name)
	}), nil
}

// draTotals returns the device counts behind the scored resources that a
// DeviceClass provides, or nil when none is.
func draTotals(s *noderesources.Scorer, state *fwk.CycleState) (*dra.Totals, error) {
	var names []v1.ResourceName
	for _, r := range s.Resources() {
		if dra.IsExtendedResourceName(r.Name) {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return dra.NewTotals(state, names)
}

// NodeLocal reports whether the score of a node depends on the pod, the
// number of nodes and that node alone (fwk.NodeLocalPlugin): not
// when the plugin scores an extended resource a DeviceClass may provide,
// which counts the cluster's devices.
func (pl *NodeResourcesFit) NodeLocal(*v1.Pod) bool {
	return !scoresExtended(pl.getScorer())
}
