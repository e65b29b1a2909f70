package score

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/taints"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var preferNoScheduleKey = fwk.NewStateKey[[]v1.Toleration]()

// TaintToleration prefers nodes with fewer PreferNoSchedule taints the pod
// does not tolerate: the raw score is that count, normalized in reverse so
// the node with the fewest gets 100. The zero value is ready to use.
type TaintToleration struct {
	// Features: TaintTolerationComparisonOperators is read (see
	// filter.TaintToleration). nil is [feature.Default].
	Features *feature.Features
}

var (
	_ fwk.PreScorePlugin       = &TaintToleration{}
	_ fwk.NormalizeScorePlugin = &TaintToleration{}
)

// Name returns "TaintToleration".
func (*TaintToleration) Name() string { return names.TaintToleration }

// PodOnlyPreScore reports true: PreScore depends on the pod alone, so the
// framework may score nodes while it filters them.
func (*TaintToleration) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// PreScore keeps the tolerations that can match a PreferNoSchedule taint
// (those with that effect or none). It never skips.
func (*TaintToleration) PreScore(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *fwk.Status {
	preferNoScheduleKey.Write(state, preferNoScheduleTolerations(pod))
	return nil
}

func preferNoScheduleTolerations(pod *v1.Pod) []v1.Toleration {
	var out []v1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			out = append(out, t)
		}
	}
	return out
}

// Score counts the node's PreferNoSchedule taints the pod does not tolerate.
func (pl *TaintToleration) Score(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	node := ni.Node()
	if node == nil {
		return 0, errNilNode
	}
	tolerations, ok := preferNoScheduleKey.Read(state)
	if !ok {
		tolerations = preferNoScheduleTolerations(pod)
	}
	var n int64
	nodeTaints := ni.Taints()
	for i := range nodeTaints {
		t := &nodeTaints[i]
		if t.Effect == v1.TaintEffectPreferNoSchedule && !taints.Tolerated(tolerations, t, feature.Of(pl.Features).TaintTolerationComparisonOperators) {
			n++
		}
	}
	return n, nil
}

// NormalizeScore maps the counts so that fewer untolerated taints score higher.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, _ []*nodeinfo.NodeInfo, scores []int64) *fwk.Status {
	normalize(scores, true)
	return nil
}

// NodeLocal reports true: the score of a node depends on the pod, the
// number of nodes and that node alone (fwk.NodeLocalPlugin).
func (*TaintToleration) NodeLocal(_ *v1.Pod) bool {
	return true
}
