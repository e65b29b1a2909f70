package filter

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/locality"
)

// The filters whose verdict on a node depends on the pod and that node
// alone (see package internal/locality), so that the framework may
// remember it for the node's generation.
func init() {
	for _, example := range []any{
		&NodeUnschedulable{}, &NodeUnschedulable{},
		&NodeName{}, &NodeName{},
		&TaintToleration{}, &TaintToleration{},
		&NodeDeclaredFeatures{}, &NodeDeclaredFeatures{},
		&NodePorts{}, &NodePorts{},
		&NodeAffinity{},
	} {
		locality.Register(example, nil)
	}
	// Extended resources a DeviceClass may provide are judged against the
	// cluster's devices.
	locality.Register(&NodeResourcesFit{}, func(_ any, pod *v1.Pod) bool {
		return !dra.MayUseExtendedResources(pod)
	})
}
