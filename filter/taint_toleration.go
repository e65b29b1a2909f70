package filter

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/taints"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrReasonUntoleratedTaint is TaintToleration's reason. Since v1.33
// kube-scheduler no longer names the taint in it.
const ErrReasonUntoleratedTaint = "node(s) had untolerated taint(s)"

var untoleratedTaint = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonUntoleratedTaint).WithPlugin(names.TaintToleration)

// TaintToleration rejects nodes with a NoSchedule or NoExecute taint the pod
// does not tolerate (UnschedulableAndUnresolvable). PreferNoSchedule taints
// only lower the score (see score.TaintToleration). The zero value is ready
// to use.
type TaintToleration struct {
	// Features: TaintTolerationComparisonOperators (an alpha gate, off in
	// every supported release) lets Gt/Lt tolerations match numeric taint
	// values; operators the gate introduces tolerate nothing while it is
	// off. nil is [feature.Default].
	Features *feature.Features
}

var (
	_ fwk.PreFilterPlugin = &TaintToleration{}
	_ fwk.FilterPlugin    = &TaintToleration{}
)

// PreFilter does nothing and returns nil. kube-scheduler v1.37 gave the
// plugin one (to skip pods whose resize is deferred, behind an alpha
// gate), so a configuration lays it out at PreFilter too.
func (*TaintToleration) PreFilter(context.Context, *fwk.CycleState, *v1.Pod, []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, nil
}

// Name returns "TaintToleration".
func (*TaintToleration) Name() string { return names.TaintToleration }

// Filter implements [fwk.FilterPlugin].
func (pl *TaintToleration) Filter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	if taints.FirstUntolerated(ni.Taints(), pod.Spec.Tolerations, feature.Of(pl.Features).TaintTolerationComparisonOperators) >= 0 {
		return untoleratedTaint
	}
	return nil
}

// NodeLocal reports true: the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin).
func (*TaintToleration) NodeLocal(_ *v1.Pod) bool {
	return true
}
