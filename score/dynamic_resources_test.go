package score

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// The prioritized-list fixtures: node "big" has an h100 and an a100,
// node "small" two a100s; the class "big" selects h100s, "any" every
// device of the driver.
const draDriver = "gpu.example.com"

func draGPU(name, model string) resourceapi.Device {
	return resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"model": {StringValue: &model},
	}}
}

func draSlice(node string, devices ...resourceapi.Device) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: draDriver, NodeName: &node, Devices: devices,
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
}

func draClass(name, expression string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expression}}}},
	}
}

func draClaim(name string, requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}},
	}
}

// draPrefer asks for an h100 and, failing that, any device.
func draPrefer(name string) resourceapi.DeviceRequest {
	sub := func(name, class string) resourceapi.DeviceSubRequest {
		return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}
	}
	return resourceapi.DeviceRequest{Name: name, FirstAvailable: []resourceapi.DeviceSubRequest{sub("big", "big"), sub("small", "any")}}
}

func draExactly(name string) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: "any", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
	}}
}

func draPod(claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"}}
	for _, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: c, ResourceClaimName: &c})
	}
	return p
}

// draScores runs filter.DynamicResources' PreFilter and Filter, then the
// scorer, over nodes, and returns the raw and the normalized scores (a
// node Filter rejected scores as Score says; the framework would not ask).
func draScores(t *testing.T, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, objs ...runtime.Object) (raw, normalized []int64) {
	t.Helper()
	l, err := fwk.NewListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	state := fwk.NewCycleState(nodes).SetListers(l)
	fl := &filter.DynamicResources{}
	if _, s := fl.PreFilter(ctx, state, pod, nodes); !s.IsSuccess() && !s.IsSkip() {
		t.Fatalf("PreFilter: %v", s)
	}
	for _, ni := range nodes {
		fl.Filter(ctx, state, pod, ni)
	}
	for _, ni := range nodes {
		s, st := (&DynamicResources{}).Score(ctx, state, pod, ni)
		if st != nil {
			t.Fatalf("Score(%s): %v", ni.Name(), st)
		}
		raw = append(raw, s)
	}
	normalized = slices.Clone(raw)
	if st := (&DynamicResources{}).NormalizeScore(ctx, state, pod, nodes, normalized); st != nil {
		t.Fatalf("NormalizeScore: %v", st)
	}
	return raw, normalized
}

func TestDynamicResourcesScore(t *testing.T) {
	t.Parallel()
	nodes := []*nodeinfo.NodeInfo{
		nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "big"}}),
		nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "small"}}),
		nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "none"}}),
	}
	cluster := []runtime.Object{
		draClass("big", `device.attributes["gpu.example.com"].model == "h100"`),
		draClass("any", `device.driver == "gpu.example.com"`),
		draSlice("big", draGPU("gpu-0", "h100"), draGPU("gpu-1", "a100")),
		draSlice("small", draGPU("gpu-0", "a100"), draGPU("gpu-1", "a100")),
	}
	// An allocated claim whose allocation chose its first subrequest,
	// available on every node.
	chosen := draClaim("chosen", draPrefer("gpu"))
	chosen.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu/big", Driver: draDriver, Pool: "elsewhere", Device: "gpu-9"},
	}}}
	tests := []struct {
		name            string
		pod             *v1.Pod
		objs            []runtime.Object
		raw, normalized []int64
	}{
		{"a node where the first subrequest fits outscores one where only the second does", draPod("gpu"), []runtime.Object{draClaim("gpu", draPrefer("gpu"))}, []int64{8, 7, 0}, []int64{100, 87, 0}},
		// big: h100 for a, then a100 for b (7); small: a100 twice.
		{"prioritized requests of one claim add up", draPod("gpu"), []runtime.Object{draClaim("gpu", draPrefer("a"), draPrefer("b"))}, []int64{15, 14, 0}, []int64{100, 93, 0}},
		{"prioritized requests of several claims add up", draPod("one", "two"), []runtime.Object{draClaim("one", draPrefer("gpu")), draClaim("two", draExactly("gpu"))}, []int64{8, 7, 0}, []int64{100, 87, 0}},
		{"exact requests score nothing", draPod("gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu"))}, []int64{0, 0, 0}, []int64{0, 0, 0}},
		{"a pod without claims scores 0 everywhere", draPod(), nil, []int64{0, 0, 0}, []int64{0, 0, 0}},
		{"a pod whose claims are all allocated scores 0 everywhere", draPod("chosen"), []runtime.Object{chosen}, []int64{0, 0, 0}, []int64{0, 0, 0}},
		{"an allocated claim's choice counts beside a claim allocated now", draPod("chosen", "gpu"), []runtime.Object{chosen, draClaim("gpu", draPrefer("gpu"))}, []int64{16, 15, 0}, []int64{100, 93, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw, normalized := draScores(t, tc.pod, nodes, append(slices.Clone(cluster), tc.objs...)...)
			if !slices.Equal(raw, tc.raw) || !slices.Equal(normalized, tc.normalized) {
				t.Errorf("scores = %v normalized to %v, want %v normalized to %v", raw, normalized, tc.raw, tc.normalized)
			}
		})
	}
}

func TestDynamicResourcesScoreWithoutFilterState(t *testing.T) {
	t.Parallel()
	ni := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	tests := []struct {
		name  string
		state *fwk.CycleState
	}{
		{"a nil state scores 0", nil},
		{"a state PreFilter never wrote to scores 0", fwk.NewCycleState([]*nodeinfo.NodeInfo{ni})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, s := (&DynamicResources{}).Score(context.Background(), tc.state, draPod("gpu"), ni)
			if got != 0 || s != nil {
				t.Errorf("Score = %d, %v; want 0, nil", got, s)
			}
		})
	}
}

func TestDynamicResourcesNormalizeScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		raw, wants []int64
	}{
		{"the best node gets 100 and the others their share, rounded down", []int64{8, 7}, []int64{100, 87}},
		{"all zero stays zero", []int64{0, 0}, []int64{0, 0}},
		{"a zero beside a positive score stays zero", []int64{16, 0, 8}, []int64{100, 0, 50}},
		{"no nodes is fine", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := slices.Clone(tc.raw)
			if s := (&DynamicResources{}).NormalizeScore(context.Background(), nil, &v1.Pod{}, nil, got); s != nil {
				t.Fatal(s)
			}
			if !slices.Equal(got, tc.wants) {
				t.Errorf("NormalizeScore(%v) = %v, want %v", tc.raw, got, tc.wants)
			}
		})
	}
}

// Through a framework, the prioritized-list score decides between two
// feasible nodes.
func TestDynamicResourcesScorePicksTheNodeWithTheFirstChoice(t *testing.T) {
	t.Parallel()
	objs := []runtime.Object{
		draClass("big", `device.attributes["gpu.example.com"].model == "h100"`),
		draClass("any", `device.driver == "gpu.example.com"`),
		draSlice("big", draGPU("gpu-0", "h100")),
		draSlice("small", draGPU("gpu-0", "a100")),
		draClaim("gpu", draPrefer("gpu")),
	}
	tests := []struct {
		name  string
		order []string
	}{
		{"with the preferred node first", []string{"big", "small"}},
		{"with the preferred node last", []string{"small", "big"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fw, err := framework.New(
				framework.WithPlugin(&filter.DynamicResources{}, 0),
				framework.WithPlugin(&DynamicResources{}, 1),
				framework.WithObjects(objs...),
			)
			if err != nil {
				t.Fatal(err)
			}
			var nodes []*nodeinfo.NodeInfo
			for _, n := range tc.order {
				nodes = append(nodes, nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}))
			}
			res, err := fw.Schedule(context.Background(), draPod("gpu"), nodes)
			if err != nil {
				t.Fatal(err)
			}
			if res.SuggestedHost != "big" || len(filter.Claims(res)) != 1 || filter.Claims(res)[0].Status.Allocation.Devices.Results[0].Request != "gpu/big" {
				t.Errorf("placed on %s with claims %+v, want on big with subrequest gpu/big", res.SuggestedHost, filter.Claims(res))
			}
			scores := map[string]int64{}
			for _, ns := range res.NodeScores() {
				scores[ns.Name] = ns.TotalScore
			}
			if scores["big"] != 100 || scores["small"] != 87 {
				t.Errorf("node scores = %v, want big 100, small 87", scores)
			}
		})
	}
}

// TestDynamicResourcesIsNodeLocalOnlyForPodsThatCannotHaveDevices: the
// framework remembers node-local scores per node generation, which a
// claim's allocation does not change; so DynamicResources is node-local
// (scoring 0 everywhere) only for a pod that has no claims and asks for
// no resource a DeviceClass could provide.
func TestDynamicResourcesIsNodeLocalOnlyForPodsThatCannotHaveDevices(t *testing.T) {
	t.Parallel()
	var pl fwk.Plugin = &DynamicResources{}
	nl, ok := pl.(fwk.NodeLocalPlugin)
	if !ok {
		t.Fatal("DynamicResources does not say for which pods it is node-local")
	}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}},
	}}}}
	claimed := plain.DeepCopy()
	claimed.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new("gpu")}}
	extended := plain.DeepCopy()
	extended.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"a pod asking for CPU alone is node-local", plain, true},
		{"a pod with a claim is not", claimed, false},
		{"a pod asking for an extended resource is not", extended, false},
	} {
		if got := nl.NodeLocal(tc.pod); got != tc.want {
			t.Errorf("%s: node-local %v", tc.name, got)
		}
	}
}
