package filter

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrReasonNodePorts is NodePorts' reason, worded as kube-scheduler's.
const ErrReasonNodePorts = "node(s) didn't have free ports for the requested pod ports"

var (
	nodePortsConflict = fwk.NewStatus(fwk.Unschedulable, ErrReasonNodePorts).WithPlugin(names.NodePorts)
)

// nodePortsKey holds the pod's host ports, found once per cycle.
var nodePortsKey = fwk.NewStateKey[[]v1.ContainerPort]()

// NodePorts rejects nodes where a host port the pod asks for is already
// bound by a pod on the node: the same protocol and port on the same host
// IP, with 0.0.0.0 (or an empty IP) clashing with every IP. Ports of
// regular containers and of restartable (sidecar) init containers count.
// The rejection is Unschedulable, since evicting the port's holder would
// free it. The zero value is ready to use.
type NodePorts struct{}

var (
	_ fwk.PreFilterPlugin = &NodePorts{}
	_ fwk.FilterPlugin    = &NodePorts{}
)

// Name returns "NodePorts".
func (*NodePorts) Name() string { return names.NodePorts }

// PreFilter returns Skip if the pod asks for no host port, so that Filter
// is not called for it; otherwise it records the pod's host ports in state
// and returns nil. It never narrows the nodes and
// never rejects.
func (*NodePorts) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	ports := nodeinfo.HostPorts(pod)
	if len(ports) == 0 {
		return nil, skip
	}
	nodePortsKey.Write(state, ports)
	return nil, nil
}

// Filter returns nil if none of the pod's host ports is taken on the node,
// Unschedulable with [ErrReasonNodePorts] if one is, and Error if ni has no
// node. It reads the ports PreFilter recorded, or finds them itself when
// state holds none (state may be nil). It does not allocate once PreFilter
// has run, modifies nothing, and is safe for concurrent use.
func (*NodePorts) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	ports, ok := nodePortsKey.Read(state)
	if !ok {
		ports = nodeinfo.HostPorts(pod)
	}
	for i := range ports {
		p := &ports[i]
		if ni.UsedPorts().CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return nodePortsConflict
		}
	}
	return nil
}

// NodeLocal reports true: the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin).
func (*NodePorts) NodeLocal(_ *v1.Pod) bool {
	return true
}
