package fwk_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// gpuOnly is a Filter plugin of one's own: it keeps pods off nodes without
// a gpu label, unless they tolerate that.
type gpuOnly struct{}

func (gpuOnly) Name() string { return "GPUOnly" }

func (gpuOnly) Filter(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if _, ok := ni.Labels()["gpu"]; !ok {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had no gpu")
	}
	return nil
}

// A plugin is called directly, outside a framework, with a state made
// for the purpose; in a framework (framework.WithPlugin) it runs in
// every cycle.
func Example() {
	nodes := []*nodeinfo.NodeInfo{
		nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1"}}),
		nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: map[string]string{"gpu": "a100"}}}),
	}
	state := fwk.NewCycleState(nodes)
	var pl fwk.FilterPlugin = gpuOnly{}
	for _, ni := range state.AllNodes() {
		st := pl.Filter(context.Background(), state, &v1.Pod{}, ni)
		fmt.Printf("%s: success=%v %s\n", ni.Name(), st.IsSuccess(), st.Message())
	}
	// Output:
	// cpu-1: success=false node(s) had no gpu
	// gpu-1: success=true
}
