package score

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var preferredAffinityKey = fwk.NewStateKey[*nodeaffinity.Preferred]()

// NodeAffinity prefers nodes matching the pod's preferred node affinity:
// the raw score is the sum of the weights of the matching terms (plus the
// profile's AddedAffinity preferred terms, if configured), normalized so the
// best node gets 100. The zero value is ready to use.
type NodeAffinity struct {
	added *nodeaffinity.Preferred
}

var (
	_ fwk.PreScorePlugin       = (*NodeAffinity)(nil)
	_ fwk.NormalizeScorePlugin = (*NodeAffinity)(nil)
)

// NewNodeAffinity returns a NodeAffinity that also adds the weights of
// the preferred terms of args.AddedAffinity for every pod, as
// kube-scheduler does; nil args add nothing. The whole of AddedAffinity is
// checked as kube-scheduler checks it, and an error lists every problem in
// its words. Its required terms belong to filter.NewNodeAffinity.
func NewNodeAffinity(args *configv1.NodeAffinityArgs) (*NodeAffinity, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	pl := &NodeAffinity{}
	if added := a.AddedAffinity; added != nil && len(added.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		p, err := nodeaffinity.NewPreferred(added.PreferredDuringSchedulingIgnoredDuringExecution)
		if err != nil {
			return nil, fmt.Errorf("addedAffinity: %w", err)
		}
		pl.added = p
	}
	return pl, nil
}

// Name returns "NodeAffinity".
func (*NodeAffinity) Name() string { return names.NodeAffinity }

// PodOnlyPreScore reports true: PreScore depends on the pod alone, so the
// framework may score nodes while it filters them.
func (*NodeAffinity) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// PreScore compiles the preferred terms once. It skips pods without
// preferred node affinity (when nothing was added), and returns Error for
// terms that do not parse, which fails the scheduling attempt as in
// kube-scheduler.
func (pl *NodeAffinity) PreScore(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *fwk.Status {
	preferred, err := nodeaffinity.PreferredOf(pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if preferred == nil && pl.added == nil {
		return skip
	}
	preferredAffinityKey.Write(state, preferred)
	return nil
}

// Score sums the weights of the preferred terms node matches.
func (pl *NodeAffinity) Score(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	node := ni.Node()
	if node == nil {
		return 0, errNilNode
	}
	preferred, ok := preferredAffinityKey.Read(state)
	if !ok {
		var err error
		if preferred, err = nodeaffinity.PreferredOf(pod); err != nil {
			return 0, fwk.AsStatus(err)
		}
	}
	var n int64
	if pl.added != nil {
		n += pl.added.Score(node)
	}
	if preferred != nil {
		n += preferred.Score(node)
	}
	return n, nil
}

// NormalizeScore scales the sums so the best node gets 100.
func (pl *NodeAffinity) NormalizeScore(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, _ []*nodeinfo.NodeInfo, scores []int64) *fwk.Status {
	normalize(scores, false)
	return nil
}

// NodeLocal reports true: the score of a node depends on the pod, the
// number of nodes and that node alone (fwk.NodeLocalPlugin).
func (*NodeAffinity) NodeLocal(_ *v1.Pod) bool {
	return true
}
