package filter

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/nodeinfo"
)

func TestDynamicResourcesExplainNamesTheClaimsInTheWay(t *testing.T) {
	t.Parallel()
	gpu := draClaim("gpu", draExactly("gpu", "gpu", 1))
	two := draClaim("two", draExactly("gpu", "gpu", 2))
	five := draClaim("five", draExactly("gpu", "gpu", 5))
	all := draClaim("all", resourceapi.DeviceRequest{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeAll}})
	prefer := draClaim("prefer", draFirstAvailable("gpu", draSub("big", "big"), draSub("small", "gpu")))
	held := draAllocated(draClaim("other", draExactly("gpu", "gpu", 1)), "n1", "gpu-0")
	bigClass := draClass("big", `device.attributes["gpu.example.com"].model == "h100"`)

	tests := []struct {
		name string
		pod  *v1.Pod
		objs []runtime.Object
		node string
		want []string
	}{
		{
			"a node that fits has nothing to explain",
			draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, draSlice("n1", draGPUs(1)...)}, "n1", nil,
		},
		{
			"a claim asking for more devices than the node has is named with its request",
			draPod("p", "five"), []runtime.Object{five, draGPUClass, draSlice("n1", draGPUs(2)...)}, "n1",
			[]string{"claim default/five (gpu: 5 of gpu) cannot be allocated on this node"},
		},
		{
			"a device another claim holds counts against the pod",
			draPod("p", "two"), []runtime.Object{two, held, draGPUClass, draSlice("n1", draGPUs(2)...)}, "n1",
			[]string{"claim default/two (gpu: 2 of gpu) cannot be allocated on this node"},
		},
		{
			"of two claims, the one that cannot be allocated even alone is named",
			draPod("p", "gpu", "five"), []runtime.Object{gpu, five, draGPUClass, draSlice("n1", draGPUs(2)...)}, "n1",
			[]string{"claim default/five (gpu: 5 of gpu) cannot be allocated on this node, even alone"},
		},
		{
			"claims that fit alone but not together say so",
			draPod("p", "gpu", "two"), []runtime.Object{gpu, two, draGPUClass, draSlice("n1", draGPUs(2)...)}, "n1",
			[]string{"claim default/gpu, claim default/two can each be allocated on this node, but not all together"},
		},
		{
			"a node without devices names every claim",
			draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, draSlice("n1", draGPUs(1)...)}, "n2",
			[]string{"claim default/gpu (gpu: 1 of gpu) cannot be allocated on this node"},
		},
		{
			"an all-devices request says so",
			draPod("p", "all"), []runtime.Object{all, held, draGPUClass, draSlice("n1", draGPUs(2)...)}, "n1",
			[]string{"claim default/all (gpu: all devices of gpu) cannot be allocated on this node"},
		},
		{
			"a prioritized list names each alternative",
			draPod("p", "prefer"), []runtime.Object{prefer, draGPUClass, bigClass, draSlice("n1", draGPUs(1)...)}, "n2",
			[]string{"claim default/prefer (gpu: the first of big: 1 of big or small: 1 of gpu) cannot be allocated on this node"},
		},
		{
			"an allocated claim on another node is one the node cannot reach",
			draPod("p", "gpu"), []runtime.Object{draAllocated(gpu, "n1", "gpu-0"), draGPUClass, draSlice("n1", draGPUs(1)...)}, "n2",
			[]string{"claim default/gpu is allocated to devices this node cannot reach"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nodes := []*nodeinfo.NodeInfo{draNode("n1"), draNode("n2")}
			state := draState(t, nodes, tt.objs...)
			pl := &DynamicResources{}
			ni := nodes[slices.IndexFunc(nodes, func(n *nodeinfo.NodeInfo) bool { return n.Node().Name == tt.node })]
			filterSaid := pl.Filter(context.Background(), state, tt.pod, ni)
			var got []string
			for _, d := range pl.ExplainFilter(context.Background(), state, tt.pod, ni) {
				got = append(got, d.Message)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExplainFilter =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if (filterSaid == nil) != (tt.want == nil) {
				t.Errorf("Filter said %v while the explanation is %q", filterSaid, got)
			}
		})
	}
}
