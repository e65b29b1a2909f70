package filter

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrReasonNodeName is NodeName's reason, worded as kube-scheduler's.
const ErrReasonNodeName = "node(s) didn't match the requested node name"

var nodeNameMismatch = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonNodeName).WithPlugin(names.NodeName)

// NodeName keeps a pod that already names its node (spec.nodeName) off
// every other node. A pod with an empty spec.nodeName fits anywhere. The
// zero value is ready to use.
type NodeName struct {
	// Features: NodeNamePreFilter is read. nil is [feature.Default].
	Features *feature.Features
}

var (
	_ fwk.PreFilterPlugin = &NodeName{}
	_ fwk.FilterPlugin    = &NodeName{}
)

// Name returns "NodeName".
func (*NodeName) Name() string { return names.NodeName }

// PreFilter narrows the cycle to the node a pod names, when the
// NodeNamePreFilter feature is on: every other node is then excluded
// before any Filter runs, as kube-scheduler v1.37 does. It returns nil
// for a pod that names no node, or with the feature off.
func (pl *NodeName) PreFilter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if pod.Spec.NodeName == "" || !feature.Of(pl.Features).NodeNamePreFilter {
		return nil, nil
	}
	return &fwk.PreFilterResult{NodeNames: sets.New(pod.Spec.NodeName)}, nil
}

// Filter returns nil if the pod names no node or names this one, and
// UnschedulableAndUnresolvable with [ErrReasonNodeName] otherwise; Error
// if ni has no node. It does not allocate, modifies nothing, and is safe
// for concurrent use.
func (pl *NodeName) Filter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	if want := pod.Spec.NodeName; want != "" && want != node.Name {
		return nodeNameMismatch
	}
	return nil
}

// NodeLocal reports true: the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin).
func (*NodeName) NodeLocal(_ *v1.Pod) bool {
	return true
}
