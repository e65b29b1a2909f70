package score

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var (
	_ fwk.ScorePlugin          = &DynamicResources{}
	_ fwk.NormalizeScorePlugin = &DynamicResources{}
)

// DynamicResources prefers nodes where the pod's prioritized-list
// requests (firstAvailable) get an earlier choice, as kube-scheduler's
// DynamicResources does: for each such request, the allocation filter.
// DynamicResources made on the node scores 8 minus the position of the
// subrequest it chose, summed over the pod's claims, then normalized so
// the best node gets 100.
//
// Like kube-scheduler's, it has no PreScore to opt out with: for
// a pod without claims, or whose claims were allocated already, every node
// scores 0, and the plugin is listed with 0 in each node's scores. It reads
// what filter.DynamicResources found in the cycle state and scores 0
// without it. The zero value is ready to use.
type DynamicResources struct{}

// Name returns "DynamicResources".
func (*DynamicResources) Name() string { return names.DynamicResources }

// Score returns the node's raw prioritized-list score.
func (*DynamicResources) Score(_ context.Context, state *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	s, _ := dra.StateKey.Read(state)
	if s.Empty() || !s.Prioritized() {
		return 0, nil // without reading the node: most pods have no claims
	}
	return dra.Score(s, ni.Name())
}

// ScoreBatch sets every score to 0 without looking at the nodes when
// the cycle has no prioritized claims to score, and reports false
// otherwise, for [DynamicResources.Score] to answer.
func (*DynamicResources) ScoreBatch(state *fwk.CycleState, _ int, scores []int64) bool {
	s, _ := dra.StateKey.Read(state)
	if !s.Empty() && s.Prioritized() {
		return false
	}
	clear(scores)
	return true
}

// NormalizeScore scales the scores so the highest becomes 100; all-zero
// scores stay 0.
func (*DynamicResources) NormalizeScore(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, _ []*nodeinfo.NodeInfo, scores []int64) *fwk.Status {
	normalize(scores, false)
	return nil
}

// NodeLocal reports whether the score of a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin): for a pod without claims,
// asking for no resource a DeviceClass could provide, which scores 0 on
// every node.
func (*DynamicResources) NodeLocal(pod *v1.Pod) bool {
	return len(pod.Spec.ResourceClaims) == 0 && !dra.MayUseExtendedResources(pod)
}
