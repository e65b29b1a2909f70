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

// ErrReasonUnschedulable is NodeUnschedulable's reason, worded as
// kube-scheduler's.
const ErrReasonUnschedulable = "node(s) were unschedulable"

var nodeUnschedulable = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonUnschedulable).WithPlugin(names.NodeUnschedulable)

// unschedulableTaint is the taint a cordoned node is treated as carrying,
// whether or not the node controller has added it yet. A package variable
// so that passing its address does not allocate.
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// NodeUnschedulable rejects cordoned nodes (spec.unschedulable) unless the
// pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint, as
// DaemonSet pods do. The zero value is ready to use.
type NodeUnschedulable struct {
	// Features: TaintTolerationComparisonOperators is read (see
	// TaintToleration). nil is [feature.Default].
	Features *feature.Features
}

var (
	_ fwk.PreFilterPlugin = &NodeUnschedulable{}
	_ fwk.FilterPlugin    = &NodeUnschedulable{}
)

// PreFilter does nothing and returns nil. kube-scheduler v1.37 gave the
// plugin one (to skip pods whose resize is deferred, behind an alpha
// gate), so a configuration lays it out at PreFilter too.
func (*NodeUnschedulable) PreFilter(context.Context, *fwk.CycleState, *v1.Pod, []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, nil
}

// Name returns "NodeUnschedulable".
func (*NodeUnschedulable) Name() string { return names.NodeUnschedulable }

// Filter returns nil for a schedulable node or a tolerating pod,
// UnschedulableAndUnresolvable with [ErrReasonUnschedulable] otherwise, and
// Error if ni has no node. Only spec.unschedulable counts: the node's
// actual taints are TaintToleration's business. It does not allocate,
// modifies nothing, and is safe for concurrent use.
func (pl *NodeUnschedulable) Filter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	if ni.Unschedulable() && !taints.Tolerated(pod.Spec.Tolerations, &unschedulableTaint, feature.Of(pl.Features).TaintTolerationComparisonOperators) {
		return nodeUnschedulable
	}
	return nil
}

// NodeLocal reports true: the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin).
func (*NodeUnschedulable) NodeLocal(_ *v1.Pod) bool {
	return true
}
