package filter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/testbuild"
	"github.com/kubesched/kubesched/nodeinfo"
)

// fitNode returns a node with the given allocatable cpu, memory and pod
// count, running the given pods.
func fitNode(cpu, mem string, pods int64, running ...*v1.Pod) *nodeinfo.NodeInfo {
	return testbuild.NodeWith(testbuild.List("cpu", cpu, "memory", mem, "pods", fmt.Sprint(pods)), running...)
}

// fitFilter runs PreFilter then Filter, as the framework does; with no
// state, Filter alone.
func fitFilter(pl *filter.NodeResourcesFit, pod *v1.Pod, ni *nodeinfo.NodeInfo, withState bool) *fwk.Status {
	ctx := context.Background()
	var state *fwk.CycleState
	if withState {
		state = fwk.NewCycleState([]*nodeinfo.NodeInfo{ni})
		if _, s := pl.PreFilter(ctx, state, pod, state.AllNodes()); s != nil {
			return s
		}
	}
	return pl.Filter(ctx, state, pod, ni)
}

func TestNodeResourcesFitFilter(t *testing.T) {
	t.Parallel()
	const (
		unsched      = fwk.Unschedulable
		unresolvable = fwk.UnschedulableAndUnresolvable
	)
	empty := func() *nodeinfo.NodeInfo { return fitNode("4", "8Gi", 10) }
	// busy has 1 cpu and 2Gi memory free.
	busy := func() *nodeinfo.NodeInfo {
		return fitNode("4", "8Gi", 10, testbuild.Pod("cpu", "3", "memory", "6Gi").Pod)
	}
	withGPUs := func(gpus string, running ...*v1.Pod) *nodeinfo.NodeInfo {
		return testbuild.NodeWith(testbuild.List("cpu", "4", "memory", "8Gi", "pods", "10", "example.com/gpu", gpus), running...)
	}
	tests := []struct {
		name        string
		args        *configv1.NodeResourcesFitArgs
		pod         *v1.Pod
		node        *nodeinfo.NodeInfo
		wantCode    fwk.Code
		wantReasons []string
	}{
		{name: "pod requesting nothing fits an empty node", pod: testbuild.Pod().Pod, node: empty()},
		{name: "pod requesting exactly the free cpu and memory fits", pod: testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: busy()},
		{
			name: "pod requesting more cpu than free is rejected with Insufficient cpu",
			pod:  testbuild.Pod("cpu", "2").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{filter.ErrReasonInsufficientCPU},
		},
		{
			name: "pod requesting more cpu than the node has is rejected as unresolvable",
			pod:  testbuild.Pod("cpu", "5").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient cpu"},
		},
		{
			name: "pod requesting more memory than free is rejected with Insufficient memory",
			pod:  testbuild.Pod("memory", "3Gi").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{filter.ErrReasonInsufficientMemory},
		},
		{
			name: "cpu and memory shortages give both reasons, cpu first",
			pod:  testbuild.Pod("cpu", "2", "memory", "3Gi").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu", "Insufficient memory"},
		},
		{
			name: "pod requesting all of a busy node's cpu is Unschedulable, not unresolvable",
			pod:  testbuild.Pod("cpu", "4").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
		{
			name: "one unresolvable shortage makes the whole rejection unresolvable",
			pod:  testbuild.Pod("cpu", "2", "memory", "9Gi").Pod, node: busy(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient cpu", "Insufficient memory"},
		},
		{
			name: "a node with no free pod slot rejects even a pod requesting nothing",
			pod:  testbuild.Pod().Pod, node: fitNode("4", "8Gi", 1, testbuild.Pod().Pod),
			wantCode: unsched, wantReasons: []string{filter.ErrReasonTooManyPods},
		},
		{
			name: "a node allowing no pods at all is still only Unschedulable",
			pod:  testbuild.Pod("cpu", "1").Pod, node: fitNode("4", "8Gi", 0),
			wantCode: unsched, wantReasons: []string{"Too many pods"},
		},
		{
			name: "too many pods is reported before resource shortages",
			pod:  testbuild.Pod("cpu", "2").Pod, node: fitNode("4", "8Gi", 1, testbuild.Pod("cpu", "3").Pod),
			wantCode: unsched, wantReasons: []string{"Too many pods", "Insufficient cpu"},
		},
		{
			name:     "pod requesting more ephemeral storage than free is rejected with Insufficient ephemeral-storage",
			pod:      testbuild.Pod("ephemeral-storage", "3Gi").Pod,
			node:     testbuild.NodeWith(testbuild.List("ephemeral-storage", "10Gi", "pods", "10"), testbuild.Pod("ephemeral-storage", "8Gi").Pod),
			wantCode: unsched, wantReasons: []string{filter.ErrReasonInsufficientEphemeralStorage},
		},
		{
			name: "an extended resource the node lacks is unresolvable",
			pod:  testbuild.Pod("example.com/gpu", "1").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient example.com/gpu"},
		},
		{
			name: "an extended resource used up by running pods is Unschedulable",
			pod:  testbuild.Pod("example.com/gpu", "1").Pod, node: withGPUs("2", testbuild.Pod("example.com/gpu", "2").Pod),
			wantCode: unsched, wantReasons: []string{"Insufficient example.com/gpu"},
		},
		{name: "an extended resource with room fits", pod: testbuild.Pod("example.com/gpu", "1").Pod, node: withGPUs("2", testbuild.Pod("example.com/gpu", "1").Pod)},
		{name: "an extended resource request of zero is not checked", pod: testbuild.Pod("example.com/gpu", "0").Pod, node: empty()},
		{
			name: "hugepages are checked like extended resources",
			pod:  testbuild.Pod("hugepages-2Mi", "6Mi").Pod, node: testbuild.NodeWith(testbuild.List("hugepages-2Mi", "4Mi", "pods", "10")),
			wantCode: unresolvable, wantReasons: []string{"Insufficient hugepages-2Mi"},
		},
		{
			name: "kubernetes.io-prefixed resources are checked",
			pod:  testbuild.Pod("kubernetes.io/something", "1").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient kubernetes.io/something"},
		},
		{name: "an unprefixed unknown resource is not checked", pod: testbuild.Pod("foo", "1").Pod, node: empty()},
		{
			name: "scalar shortages follow the native ones, in name order",
			pod:  testbuild.Pod("example.com/b", "1", "cpu", "5", "example.com/a", "1").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient cpu", "Insufficient example.com/a", "Insufficient example.com/b"},
		},
		{
			name: "the largest init container sets the request when above the containers",
			pod:  testbuild.Pod("cpu", "500m").Init("cpu", "2").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
		{name: "init containers count as their largest, not their sum", pod: testbuild.Pod("cpu", "500m").Init("cpu", "1").Init("cpu", "1").Pod, node: busy()},
		{
			name: "a sidecar runs alongside the containers",
			pod:  testbuild.Pod("cpu", "500m").Sidecar("cpu", "750m").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
		{
			// Init step: 500m sidecar + 750m = 1250m, more than the 1 cpu free.
			name: "a sidecar started before an init container adds to that init step",
			pod:  testbuild.Pod("cpu", "250m").Sidecar("cpu", "500m").Init("cpu", "750m").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
		{
			// Init step 750m; running 250m + 500m sidecar = 750m.
			name: "a sidecar started after an init container does not add to it",
			pod:  testbuild.Pod("cpu", "250m").Init("cpu", "750m").Sidecar("cpu", "500m").Pod, node: busy(),
		},
		{
			name: "pod overhead is added to the request",
			pod:  testbuild.Pod("cpu", "1").Overhead("cpu", "100m").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
		{
			name: "pod-level requests replace the containers' sum when larger",
			pod:  testbuild.Pod("cpu", "500m").PodLevel("cpu", "2").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
		{name: "pod-level requests replace the containers' sum when smaller", pod: testbuild.Pod("cpu", "1500m").PodLevel("cpu", "1").Pod, node: busy()},
		{name: "a pending pod's status requests are ignored", pod: testbuild.Pod("cpu", "1").Resized("cpu", "2").Pod, node: busy()},
		{
			name: "a node without allocatable rejects as unresolvable, pods first",
			pod:  testbuild.Pod("cpu", "1", "memory", "1Gi").Pod, node: testbuild.NodeWith(nil),
			wantCode: unresolvable, wantReasons: []string{"Too many pods", "Insufficient cpu", "Insufficient memory"},
		},
		{
			name: "negative requests count as zero even on an over-committed node",
			pod:  testbuild.Pod("cpu", "-1", "example.com/gpu", "-1").Pod,
			node: withGPUs("1", testbuild.Pod("cpu", "5", "example.com/gpu", "2").Pod),
		},
		{
			name: "a zero extended request fits even an over-committed node",
			pod:  testbuild.Pod("example.com/gpu", "0").Pod, node: withGPUs("1", testbuild.Pod("example.com/gpu", "2").Pod),
		},
		{name: "a cpu request too large for int64 reads as 0, as in kube-scheduler", pod: testbuild.Pod("cpu", "1e30").Pod, node: empty()},
		{
			name: "an ignored extended resource is not checked",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/gpu"}},
			pod:  testbuild.Pod("example.com/gpu", "1").Pod, node: empty(),
		},
		{
			name: "an ignored resource group skips its extended resources only",
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com"}},
			pod:  testbuild.Pod("example.com/a", "1", "example.com/b", "1", "other.io/c", "1").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient other.io/c"},
		},
		{
			name: "hugepages are checked even when listed as ignored",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"hugepages-2Mi"}},
			pod:  testbuild.Pod("hugepages-2Mi", "2Mi").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient hugepages-2Mi"},
		},
		{
			name: "kubernetes.io resources are checked even when their group is ignored",
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"kubernetes.io"}},
			pod:  testbuild.Pod("kubernetes.io/something", "1").Pod, node: empty(),
			wantCode: unresolvable, wantReasons: []string{"Insufficient kubernetes.io/something"},
		},
		{
			name: "ignored resources do not hide cpu",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"cpu"}},
			pod:  testbuild.Pod("cpu", "2").Pod, node: busy(),
			wantCode: unsched, wantReasons: []string{"Insufficient cpu"},
		},
	}
	for _, tc := range tests {
		for _, withState := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s (PreFilter run: %v)", tc.name, withState), func(t *testing.T) {
				t.Parallel()
				pl, err := filter.NewNodeResourcesFit(tc.args)
				if err != nil {
					t.Fatal(err)
				}
				got := fitFilter(pl, tc.pod, tc.node, withState)
				if got.Code() != tc.wantCode || !slices.Equal(got.Reasons(), tc.wantReasons) {
					t.Errorf("Filter = %v, want %v %q", got, tc.wantCode, tc.wantReasons)
				}
				if got != nil && got.Plugin() != "NodeResourcesFit" {
					t.Errorf("status plugin = %q, want NodeResourcesFit", got.Plugin())
				}
				if tc.args != nil && len(tc.args.IgnoredResources)+len(tc.args.IgnoredResourceGroups) > 0 {
					return
				}
				// The zero value and the pure check agree with the configured filter.
				if zero := fitFilter(&filter.NodeResourcesFit{}, tc.pod, tc.node, withState); zero.Code() != got.Code() || !slices.Equal(zero.Reasons(), got.Reasons()) {
					t.Errorf("zero-value Filter = %v, want %v", zero, got)
				}
				var reasons []string
				for _, r := range filter.InsufficientResources(tc.pod, tc.node) {
					reasons = append(reasons, r.Reason)
				}
				if !slices.Equal(reasons, tc.wantReasons) {
					t.Errorf("InsufficientResources reasons = %q, want %q", reasons, tc.wantReasons)
				}
			})
		}
	}
}

func TestInsufficientResourcesDescribesEachShortage(t *testing.T) {
	t.Parallel()
	node := fitNode("4", "8Gi", 1, testbuild.Pod("cpu", "3", "memory", "6Gi").Pod)
	got := filter.InsufficientResources(testbuild.Pod("cpu", "2", "memory", "9Gi", "example.com/gpu", "1").Pod, node)
	want := []filter.InsufficientResource{
		{ResourceName: "pods", Reason: "Too many pods", Requested: 1, Used: 1, Capacity: 1},
		{ResourceName: "cpu", Reason: "Insufficient cpu", Requested: 2000, Used: 3000, Capacity: 4000},
		{ResourceName: "memory", Reason: "Insufficient memory", Requested: 9 << 30, Used: 6 << 30, Capacity: 8 << 30, Unresolvable: true},
		{ResourceName: "example.com/gpu", Reason: "Insufficient example.com/gpu", Requested: 1, Unresolvable: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("InsufficientResources =\n%+v\nwant\n%+v", got, want)
	}
	if got := filter.InsufficientResources(testbuild.Pod("cpu", "1").Pod, fitNode("4", "8Gi", 10)); len(got) != 0 {
		t.Errorf("InsufficientResources for a fitting pod = %+v, want none", got)
	}
	if got := filter.InsufficientResources(nil, nil); len(got) != 1 || got[0].Reason != "Too many pods" {
		t.Errorf("InsufficientResources(nil, nil) = %+v, want only Too many pods", got)
	}
}

func TestInsufficientResourceReason(t *testing.T) {
	t.Parallel()
	for name, want := range map[v1.ResourceName]string{
		"cpu":               filter.ErrReasonInsufficientCPU,
		"memory":            filter.ErrReasonInsufficientMemory,
		"ephemeral-storage": filter.ErrReasonInsufficientEphemeralStorage,
		"example.com/gpu":   "Insufficient example.com/gpu",
	} {
		if got := filter.InsufficientResourceReason(name); got != want {
			t.Errorf("InsufficientResourceReason(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNewNodeResourcesFitRejectsBadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args *configv1.NodeResourcesFitArgs
		want string
	}{
		{name: "a resource group with a slash", args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com/gpu"}}, want: "resource group name can't contain '/'"},
		{name: "an ignored resource that is not a qualified name", args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"a b"}}, want: `ignoredResources[0]: Invalid value: "a b"`},
		{name: "a bad scoring strategy, as kube-scheduler validates all args", args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: "Random"}}, want: "scoringStrategy.type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := filter.NewNodeResourcesFit(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewNodeResourcesFit = %v, %v; want error containing %q", pl, err, tc.want)
			}
		})
	}
}

func TestNodeResourcesFitBadInputIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pl := &filter.NodeResourcesFit{}
	pod := testbuild.Pod("cpu", "1").Pod
	for what, ni := range map[string]*nodeinfo.NodeInfo{"nil NodeInfo": nil, "NodeInfo without node": nodeinfo.New(nil)} {
		if got := pl.Filter(ctx, nil, pod, ni); got.Code() != fwk.Error {
			t.Errorf("Filter on a %s = %v, want Error", what, got)
		}
	}
	if _, got := pl.PreFilter(ctx, fwk.NewCycleState(nil), nil, nil); got.Code() != fwk.Error {
		t.Errorf("PreFilter of a nil pod = %v, want Error", got)
	}
	if got := pl.Filter(ctx, nil, nil, fitNode("4", "8Gi", 10)); got.Code() != fwk.Error {
		t.Errorf("Filter of a nil pod = %v, want Error", got)
	}
}

// TestNodeResourcesFitFilterDoesNotAllocate checks the per-node cost once
// PreFilter has run: nothing for a fitting node, nor for a node short of
// one resource, whose rejection is shared.
func TestNodeResourcesFitFilterDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	pl := &filter.NodeResourcesFit{}
	for name, tc := range map[string]struct {
		pod  *v1.Pod
		node *nodeinfo.NodeInfo
	}{
		"fitting node":         {testbuild.Pod("cpu", "1", "memory", "1Gi", "example.com/gpu", "1").Pod, testbuild.NodeWith(testbuild.List("cpu", "4", "memory", "8Gi", "pods", "10", "example.com/gpu", "1"))},
		"node short of cpu":    {testbuild.Pod("cpu", "5").Pod, fitNode("4", "8Gi", 10)},
		"node without the gpu": {testbuild.Pod("example.com/gpu", "1").Pod, fitNode("4", "8Gi", 10)},
	} {
		state := fwk.NewCycleState([]*nodeinfo.NodeInfo{tc.node})
		if _, s := pl.PreFilter(ctx, state, tc.pod, state.AllNodes()); s != nil {
			t.Fatal(s)
		}
		want := pl.Filter(ctx, state, tc.pod, tc.node)
		if allocs := testing.AllocsPerRun(100, func() {
			if got := pl.Filter(ctx, state, tc.pod, tc.node); got != want {
				t.Fatalf("%s: Filter = %v, want the shared %v", name, got, want)
			}
		}); allocs != 0 {
			t.Errorf("%s: Filter allocates %.0f times, want 0", name, allocs)
		}
	}
}

func BenchmarkNodeResourcesFitFilter(b *testing.B) {
	ctx := context.Background()
	pl := &filter.NodeResourcesFit{}
	running := make([]*v1.Pod, 50)
	for i := range running {
		running[i] = testbuild.Pod("cpu", "50m", "memory", "100Mi").Pod
	}
	node := testbuild.NodeWith(testbuild.List("cpu", "8", "memory", "32Gi", "pods", "110", "example.com/gpu", "4"), running...)
	for _, bc := range []struct {
		name string
		pod  *v1.Pod
		want fwk.Code
	}{
		{"fits", testbuild.Pod("cpu", "1", "memory", "1Gi", "example.com/gpu", "1").Pod, fwk.Success},
		{"rejected/cpu", testbuild.Pod("cpu", "9").Pod, fwk.UnschedulableAndUnresolvable},
		{"rejected/cpu+memory", testbuild.Pod("cpu", "9", "memory", "64Gi").Pod, fwk.UnschedulableAndUnresolvable},
	} {
		state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node})
		if _, s := pl.PreFilter(ctx, state, bc.pod, state.AllNodes()); s != nil {
			b.Fatal(s)
		}
		if got := pl.Filter(ctx, state, bc.pod, node); got.Code() != bc.want {
			b.Fatalf("%s: Filter = %v, want %v", bc.name, got, bc.want)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pl.Filter(ctx, state, bc.pod, node)
			}
		})
	}
}

func ExampleInsufficientResources() {
	node := &v1.Node{Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("2"),
		v1.ResourceMemory: resource.MustParse("4Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}}}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("3"),
			v1.ResourceMemory: resource.MustParse("1Gi"),
		}},
	}}}}
	for _, r := range filter.InsufficientResources(pod, nodeinfo.New(node)) {
		fmt.Printf("%s: requested %d, used %d, capacity %d, unresolvable %v\n", r.Reason, r.Requested, r.Used, r.Capacity, r.Unresolvable)
	}
	// Output:
	// Insufficient cpu: requested 3000, used 0, capacity 2000, unresolvable true
}

func TestNodeResourcesFitLeavesDRABackedResourcesToDynamicResources(t *testing.T) {
	t.Parallel()
	gpuName := "example.com/gpu"
	classes := []runtime.Object{&resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec:       resourceapi.DeviceClassSpec{ExtendedResourceName: &gpuName},
	}}
	gpuPod := testbuild.Pod("cpu", "1", gpuName, "2").Pod
	implicitPod := testbuild.Pod("cpu", "1", "deviceclass.resource.kubernetes.io/gpu", "1").Pod
	withGPUs := func(n string) *nodeinfo.NodeInfo {
		return testbuild.NodeWith(testbuild.List("cpu", "4", "memory", "4Gi", "pods", "10", gpuName, n))
	}
	tests := []struct {
		name    string
		classes []runtime.Object
		pod     *v1.Pod
		node    *nodeinfo.NodeInfo
		want    []string
	}{
		{"a node without the resource is left to DRA when a class provides it", classes, gpuPod, fitNode("4", "4Gi", 10), nil},
		{"a node without the resource is short of it when no class provides it", nil, gpuPod, fitNode("4", "4Gi", 10), []string{"Insufficient example.com/gpu"}},
		{"a node offering the resource is checked against it", classes, gpuPod, withGPUs("1"), []string{"Insufficient example.com/gpu"}},
		{"a node offering enough of it fits", classes, gpuPod, withGPUs("2"), nil},
		{"a node offering zero of it is left to DRA", classes, gpuPod, withGPUs("0"), nil},
		{"a class's implicit name is left to DRA too", classes, implicitPod, fitNode("4", "4Gi", 10), nil},
		{"other resources are still checked", classes, gpuPod, fitNode("500m", "4Gi", 10), []string{"Insufficient cpu"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l, err := fwk.NewListers(tc.classes...)
			if err != nil {
				t.Fatal(err)
			}
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{tc.node}).SetListers(l)
			var pl filter.NodeResourcesFit
			if _, s := pl.PreFilter(ctx, state, tc.pod, state.AllNodes()); s != nil {
				t.Fatal(s)
			}
			got := pl.Filter(ctx, state, tc.pod, tc.node)
			if !slices.Equal(got.Reasons(), tc.want) {
				t.Errorf("Filter = %v, want reasons %q", got, tc.want)
			}
			// Without PreFilter, Filter reads the same listers.
			if got := pl.Filter(ctx, fwk.NewCycleState(nil).SetListers(l), tc.pod, tc.node); !slices.Equal(got.Reasons(), tc.want) {
				t.Errorf("Filter without PreFilter = %v, want reasons %q", got, tc.want)
			}
		})
	}
	// InsufficientResources has no listers: every resource is checked.
	if got := filter.InsufficientResources(gpuPod, fitNode("4", "4Gi", 10)); len(got) != 1 || got[0].ResourceName != v1.ResourceName(gpuName) {
		t.Errorf("InsufficientResources = %+v, want the GPU short", got)
	}
}

func TestNodeResourcesFitFailingClassListerIsAnError(t *testing.T) {
	t.Parallel()
	state := fwk.NewCycleState(nil).SetListers(fwk.Listers{DeviceClasses: failingClassLister{}})
	pod := testbuild.Pod("example.com/gpu", "1").Pod
	var pl filter.NodeResourcesFit
	if _, s := pl.PreFilter(context.Background(), state, pod, nil); s.Code() != fwk.Error || !strings.Contains(s.Message(), "no classes") {
		t.Errorf("PreFilter = %v, want Error saying no classes", s)
	}
}

type failingClassLister struct{}

func (failingClassLister) List(labels.Selector) ([]*resourceapi.DeviceClass, error) {
	return nil, errors.New("no classes")
}
