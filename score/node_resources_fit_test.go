package score_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/testbuild"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

// fitNode returns a node with allocatable cpu, memory and 110 pods, plus
// the extra name, quantity pairs, running the given pods.
func fitNode(cpu, mem string, extra []string, running ...*v1.Pod) *nodeinfo.NodeInfo {
	return testbuild.NodeWith(testbuild.List(append([]string{"cpu", cpu, "memory", mem, "pods", "110"}, extra...)...), running...)
}

// resourceScorer is either resource-allocation plugin.
type resourceScorer interface {
	fwk.PreScorePlugin
	fwk.ScorePlugin
}

// scoreOne runs PreScore then Score, as the framework does; with no
// state, Score alone. A PreScore Skip is returned as the status.
func scoreOne(pl resourceScorer, pod *v1.Pod, ni *nodeinfo.NodeInfo, withState bool) (int64, *fwk.Status) {
	ctx := context.Background()
	var state *fwk.CycleState
	if withState {
		state = fwk.NewCycleState([]*nodeinfo.NodeInfo{ni})
		if s := pl.PreScore(ctx, state, pod, state.AllNodes()); s != nil {
			return 0, s
		}
	}
	return pl.Score(ctx, state, pod, ni)
}

func TestNodeResourcesFitScore(t *testing.T) {
	t.Parallel()
	strategy := func(typ configv1.ScoringStrategyType, resources ...configv1.ResourceSpec) *configv1.NodeResourcesFitArgs {
		return &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: typ, Resources: resources}}
	}
	ratio := func(shape ...configv1.UtilizationShapePoint) *configv1.NodeResourcesFitArgs {
		return &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: shape}}}
	}
	// Node: 4 cpu, 8Gi memory.
	empty := func() *nodeinfo.NodeInfo { return fitNode("4", "8Gi", nil) }
	quarterUsed := func() *nodeinfo.NodeInfo {
		return fitNode("4", "8Gi", nil, testbuild.Pod("cpu", "1", "memory", "2Gi").Pod)
	}
	tests := []struct {
		name string
		args *configv1.NodeResourcesFitArgs
		pod  *v1.Pod
		node *nodeinfo.NodeInfo
		want int64
	}{
		{
			// cpu (4000-1000)*100/4000 = 75, memory (8Gi-2Gi)*100/8Gi = 75.
			name: "least allocated scores the free share of cpu and memory, averaged",
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: empty(), want: 75,
		},
		{
			// (4000-2000)*100/4000 = 50 for both.
			name: "least allocated counts running pods' requests as used",
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: quarterUsed(), want: 50,
		},
		{
			// cpu (4000-100)*100/4000 = 97.5, memory (8192Mi-200Mi)*100/8192Mi = 97.56: both 97.
			name: "containers without requests count as 100m cpu and 200Mi memory",
			pod:  testbuild.Pod().Pod, node: empty(), want: 97,
		},
		{
			// cpu (4000-1100)*100/4000 = 72.5, memory (8192Mi-2248Mi)*100/8192Mi = 72.56.
			name: "running pods without requests count with the same defaults",
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: fitNode("4", "8Gi", nil, testbuild.Pod().Pod), want: 72,
		},
		{
			// cpu over-committed: 0; memory 75; (0+75)/2 = 37.5.
			name: "least allocated scores an over-committed resource 0",
			pod:  testbuild.Pod("cpu", "5", "memory", "2Gi").Pod, node: empty(), want: 37,
		},
		{
			// cpu 75*3, memory (8-6)/8 = 25*1: 250/4 = 62.5.
			name: "weights average the resources, rounding down",
			args: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "cpu", Weight: 3}, configv1.ResourceSpec{Name: "memory", Weight: 1}),
			pod:  testbuild.Pod("cpu", "1", "memory", "6Gi").Pod, node: empty(), want: 62,
		},
		{
			name: "a resource the node has none of is left out",
			args: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "cpu"}, configv1.ResourceSpec{Name: "memory"}, configv1.ResourceSpec{Name: "example.com/gpu", Weight: 5}),
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi", "example.com/gpu", "1").Pod, node: empty(), want: 75,
		},
		{
			// Counted, the gpu would score 100 and lift the mean to 87.
			name: "an extended resource the pod does not request is left out",
			args: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "cpu"}, configv1.ResourceSpec{Name: "memory"}, configv1.ResourceSpec{Name: "example.com/gpu", Weight: 2}),
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: fitNode("4", "8Gi", []string{"example.com/gpu", "8"}), want: 75,
		},
		{
			// The running pod counts as 100m and 200Mi: cpu (4000-1100)*100/4000
			// = 72, memory 72; gpu (8-4)*100/8 = 50 with weight 2: (72+72+2*50)/4 = 61.
			name: "a requested extended resource is scored with its weight",
			args: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "cpu"}, configv1.ResourceSpec{Name: "memory"}, configv1.ResourceSpec{Name: "example.com/gpu", Weight: 2}),
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi", "example.com/gpu", "2").Pod,
			node: fitNode("4", "8Gi", []string{"example.com/gpu", "8"}, testbuild.Pod("example.com/gpu", "2").Pod), want: 61,
		},
		{
			// (100Gi-25Gi)*100/100Gi; the pod's request of 0 still counts.
			name: "ephemeral storage is scored from plain requests even when the pod asks for none",
			args: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "ephemeral-storage"}),
			pod:  testbuild.Pod().Pod, node: testbuild.NodeWith(testbuild.List("ephemeral-storage", "100Gi"), testbuild.Pod("ephemeral-storage", "25Gi").Pod), want: 75,
		},
		{name: "a node with no allocatable scores 0", pod: testbuild.Pod("cpu", "1").Pod, node: testbuild.NodeWith(nil), want: 0},
		{
			// kube-scheduler's NodeResourcesFit scorer never gets the
			// PodLevelResources gate: cpu 500m from the container, 87; memory 75.
			name: "pod-level requests are ignored, as kube-scheduler's scorer ignores them",
			pod:  testbuild.Pod("cpu", "500m", "memory", "2Gi").PodLevel("cpu", "2").Pod, node: empty(), want: 81,
		},
		{
			// cpu 2000 from the init container: 50; memory 2Gi: 75.
			name: "the largest init container sets the request",
			pod:  testbuild.Pod("cpu", "500m", "memory", "2Gi").Init("cpu", "2").Pod, node: empty(), want: 62,
		},
		{
			name: "a sidecar adds to the containers",
			pod:  testbuild.Pod("cpu", "500m", "memory", "1Gi").Sidecar("cpu", "500m", "memory", "1Gi").Pod, node: empty(), want: 75,
		},
		{
			name: "pod overhead adds to the request",
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Overhead("cpu", "1").Pod, node: empty(), want: 62,
		},
		{
			// Nor does it get InPlacePodVerticalScaling: the spec's 1 cpu counts.
			name: "a resized container's status requests are ignored, as kube-scheduler's scorer ignores them",
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Resized("cpu", "2").Pod, node: empty(), want: 75,
		},
		{
			// 2000*100/4000 = 50 for both.
			name: "most allocated scores the used share",
			args: strategy(configv1.MostAllocated),
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: quarterUsed(), want: 50,
		},
		{
			// cpu capped at 100, memory 25: 62.5.
			name: "most allocated caps an over-committed resource at 100",
			args: strategy(configv1.MostAllocated),
			pod:  testbuild.Pod("cpu", "5", "memory", "2Gi").Pod, node: empty(), want: 62,
		},
		{
			// 100*100/4000 = 2.5 and 200Mi*100/8Gi = 2.44.
			name: "most allocated counts the defaults for unset requests",
			args: strategy(configv1.MostAllocated),
			pod:  testbuild.Pod().Pod, node: empty(), want: 2,
		},
		{
			// cpu 75*1, memory 25*3: 150/4 = 37.5.
			name: "most allocated averages by weight",
			args: strategy(configv1.MostAllocated, configv1.ResourceSpec{Name: "cpu", Weight: 1}, configv1.ResourceSpec{Name: "memory", Weight: 3}),
			pod:  testbuild.Pod("cpu", "3", "memory", "2Gi").Pod, node: empty(), want: 37,
		},
		{
			// Utilization 25% on both; shape 0->0, 100->100 gives 25.
			name: "requested to capacity ratio maps utilization through the shape",
			args: ratio(configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10}),
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: empty(), want: 25,
		},
		{
			// 100 + (0-100)*25/100 = 75.
			name: "a falling shape favours empty nodes",
			args: ratio(configv1.UtilizationShapePoint{Utilization: 0, Score: 10}, configv1.UtilizationShapePoint{Utilization: 100, Score: 0}),
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: empty(), want: 75,
		},
		{
			// cpu 50%: 50. memory 1Mi*100/8Gi = 0%: 0, left out rather than averaged in.
			name: "resources scoring 0 on the shape are left out of the average",
			args: ratio(configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10}),
			pod:  testbuild.Pod("cpu", "2", "memory", "1Mi").Pod, node: empty(), want: 50,
		},
		{
			// cpu 25, memory 50 with weight 2: (25+100)/3 = 41.67.
			name: "the shape average is rounded to nearest",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
				Type:                     configv1.RequestedToCapacityRatio,
				Resources:                []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 2}},
				RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}},
			}},
			pod: testbuild.Pod("cpu", "1", "memory", "4Gi").Pod, node: empty(), want: 42,
		},
		{
			// cpu over capacity reads as 100%: 100; memory 25: 62.5 rounds half away from zero.
			name: "utilization above capacity reads as 100 percent",
			args: ratio(configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10}),
			pod:  testbuild.Pod("cpu", "5", "memory", "2Gi").Pod, node: empty(), want: 63,
		},
		{
			// Shape 0->0, 30->50, 100->100. cpu 25%: 50*25/30 = 41.67 -> 41;
			// memory 50%: 50 + 50*20/70 = 64.29 -> 64; (41+64)/2 = 52.5 -> 53.
			name: "between shape points the score is interpolated and truncated",
			args: ratio(configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 30, Score: 5}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10}),
			pod:  testbuild.Pod("cpu", "1", "memory", "4Gi").Pod, node: empty(), want: 53,
		},
	}
	for _, tc := range tests {
		for _, withState := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s (PreScore run: %v)", tc.name, withState), func(t *testing.T) {
				t.Parallel()
				pl, err := score.NewNodeResourcesFit(tc.args)
				if err != nil {
					t.Fatal(err)
				}
				got, s := scoreOne(pl, tc.pod, tc.node, withState)
				if s != nil || got != tc.want {
					t.Errorf("Score = %d, %v; want %d", got, s, tc.want)
				}
			})
		}
	}
}

func TestNodeResourcesFitZeroValueIsLeastAllocatedOverCPUAndMemory(t *testing.T) {
	t.Parallel()
	pod := testbuild.Pod("cpu", "3", "memory", "1Gi").Pod
	node := fitNode("4", "8Gi", nil)
	explicit, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type:      configv1.LeastAllocated,
		Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// cpu 25, memory 87.5 -> 87: 56.
	for _, pl := range []*score.NodeResourcesFit{{}, explicit} {
		if got, s := scoreOne(pl, pod, node, true); got != 56 || s != nil {
			t.Errorf("Score = %d, %v; want 56", got, s)
		}
	}
}

func TestNodeResourcesFitPreScoreNeverSkips(t *testing.T) {
	t.Parallel()
	pl := &score.NodeResourcesFit{}
	for _, pod := range []*v1.Pod{testbuild.Pod().Pod, testbuild.Pod("cpu", "1").Pod} {
		if s := pl.PreScore(context.Background(), fwk.NewCycleState(nil), pod, nil); s != nil {
			t.Errorf("PreScore = %v, want nil", s)
		}
	}
}

// TestScoreStateFromAnotherConfigurationIsNotTrusted covers state written
// by a plugin scoring other resources: Score recomputes rather than index
// out of range.
func TestScoreStateFromAnotherConfigurationIsNotTrusted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	node := fitNode("4", "8Gi", []string{"example.com/gpu", "8"})
	pod := testbuild.Pod("cpu", "1", "memory", "2Gi", "example.com/gpu", "2").Pod
	state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node})
	if s := (&score.NodeResourcesFit{}).PreScore(ctx, state, pod, state.AllNodes()); s != nil {
		t.Fatal(s)
	}
	three, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type:      configv1.LeastAllocated,
		Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "example.com/gpu"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// 75 for each of the three.
	if got, s := three.Score(ctx, state, pod, node); got != 75 || s != nil {
		t.Errorf("Score = %d, %v; want 75", got, s)
	}
}

func TestNewNodeResourcesFitRejectsBadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args *configv1.NodeResourcesFitArgs
		want string
	}{
		{
			name: "a weight above 100",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 101}}}},
			want: "resource weight of cpu not in valid range (0, 100]",
		},
		{name: "an unknown strategy", args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: "Spread"}}, want: `Unsupported value: "Spread"`},
		{
			name: "RequestedToCapacityRatio without a shape",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio}},
			want: "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio",
		},
		{
			name: "a shape in decreasing utilization order",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 80, Score: 1}, {Utilization: 20, Score: 5}}}}},
			want: "values must be sorted in increasing order",
		},
		{
			name: "a shape score above 10",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 100}}}}},
			want: "score: Invalid value: 100: not in valid range [0, 10]",
		},
		{
			name: "a shape with LeastAllocated",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 1}}}}},
			want: "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
		},
		{name: "an ignored resource group with a slash", args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"a/b"}}, want: "can't contain '/'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := score.NewNodeResourcesFit(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewNodeResourcesFit = %v, %v; want error containing %q", pl, err, tc.want)
			}
		})
	}
}

func TestResourceScoresOfBadInputAreErrorsNotPanics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, pl := range []resourceScorer{&score.NodeResourcesFit{}, &score.NodeResourcesBalancedAllocation{}} {
		for what, ni := range map[string]*nodeinfo.NodeInfo{"nil NodeInfo": nil, "NodeInfo without node": nodeinfo.New(nil)} {
			if _, s := pl.Score(ctx, nil, testbuild.Pod("cpu", "1").Pod, ni); s.Code() != fwk.Error {
				t.Errorf("%s: Score on a %s = %v, want Error", pl.Name(), what, s)
			}
		}
		if s := pl.PreScore(ctx, fwk.NewCycleState(nil), nil, nil); s.Code() != fwk.Error {
			t.Errorf("%s: PreScore of a nil pod = %v, want Error", pl.Name(), s)
		}
		if _, s := pl.Score(ctx, nil, nil, fitNode("4", "8Gi", nil)); s.Code() != fwk.Error {
			t.Errorf("%s: Score of a nil pod = %v, want Error", pl.Name(), s)
		}
	}
}

// TestResourceScoresDoNotAllocate checks the per-node cost once PreScore
// has run.
func TestResourceScoresDoNotAllocate(t *testing.T) {
	ctx := context.Background()
	pod := testbuild.Pod("cpu", "1", "memory", "2Gi", "example.com/gpu", "1").Pod
	node := fitNode("4", "8Gi", []string{"example.com/gpu", "8"})
	ratio, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type:                     configv1.RequestedToCapacityRatio,
		Resources:                []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "example.com/gpu"}},
		RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range []resourceScorer{&score.NodeResourcesFit{}, ratio, &score.NodeResourcesBalancedAllocation{}} {
		state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node})
		if s := pl.PreScore(ctx, state, pod, state.AllNodes()); s != nil {
			t.Fatal(s)
		}
		if allocs := testing.AllocsPerRun(100, func() { _, _ = pl.Score(ctx, state, pod, node) }); allocs != 0 {
			t.Errorf("%s: Score allocates %.0f times, want 0", pl.Name(), allocs)
		}
	}
}

func BenchmarkNodeResourcesFitScore(b *testing.B) {
	running := make([]*v1.Pod, 50)
	for i := range running {
		running[i] = testbuild.Pod("cpu", "50m", "memory", "100Mi").Pod
	}
	node := fitNode("8", "32Gi", []string{"example.com/gpu", "4"}, running...)
	pod := testbuild.Pod("cpu", "1", "memory", "1Gi").Pod
	shape := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 50, Score: 8}, {Utilization: 100, Score: 10}}
	for _, bc := range []struct {
		name     string
		strategy *configv1.ScoringStrategy
	}{
		{"LeastAllocated", &configv1.ScoringStrategy{Type: configv1.LeastAllocated}},
		{"MostAllocated", &configv1.ScoringStrategy{Type: configv1.MostAllocated}},
		{"RequestedToCapacityRatio", &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: shape}}},
	} {
		pl, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: bc.strategy})
		if err != nil {
			b.Fatal(err)
		}
		benchmarkResourceScore(b, bc.name, pl, pod, node)
	}
}

func benchmarkResourceScore(b *testing.B, name string, pl resourceScorer, pod *v1.Pod, node *nodeinfo.NodeInfo) {
	ctx := context.Background()
	state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node})
	if s := pl.PreScore(ctx, state, pod, state.AllNodes()); s != nil {
		b.Fatal(s)
	}
	if _, s := pl.Score(ctx, state, pod, node); s != nil {
		b.Fatal(s)
	}
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = pl.Score(ctx, state, pod, node)
		}
	})
}

func ExampleNewNodeResourcesFit() {
	// Bin packing: prefer the fullest node, counting cpu three times as much as memory.
	pl, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type:      configv1.MostAllocated,
		Resources: []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 3}, {Name: string(v1.ResourceMemory), Weight: 1}},
	}})
	if err != nil {
		panic(err)
	}
	node := nodeinfo.New(&v1.Node{Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("8Gi"),
	}}})
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("2"),
			v1.ResourceMemory: resource.MustParse("2Gi"),
		}},
	}}}}
	s, _ := pl.Score(context.Background(), nil, pod, node)
	// cpu 2000*100/4000 = 50, memory 2Gi*100/8Gi = 25: (3*50 + 25)/4 = 43.
	fmt.Println(s)

	_, err = score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio}})
	fmt.Println(err)
	// Output:
	// 43
	// scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio
}

func TestScoringADRABackedExtendedResourceCountsTheClassDevices(t *testing.T) {
	t.Parallel()
	gpu := "example.com/gpu"
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		ExtendedResourceName: &gpu,
		Selectors:            []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
	}}
	slice := func(name, driver, pool string, generation int64, devices int, place func(*resourceapi.ResourceSliceSpec)) *resourceapi.ResourceSlice {
		s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.ResourceSliceSpec{
			Driver: driver, Pool: resourceapi.ResourcePool{Name: pool, Generation: generation, ResourceSliceCount: 1},
		}}
		for i := range devices {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprint("dev-", i)})
		}
		place(&s.Spec)
		return s
	}
	on := func(node string) func(*resourceapi.ResourceSliceSpec) {
		return func(s *resourceapi.ResourceSliceSpec) { s.NodeName = &node }
	}
	labelled := func(s *resourceapi.ResourceSliceSpec) {
		s.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "gpu", Operator: v1.NodeSelectorOpIn, Values: []string{"yes"}},
		}}}}
	}
	holder := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "holder", Namespace: "default"}, Status: resourceapi.ResourceClaimStatus{
		Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: "a", Device: "dev-0"},
		}}},
	}}
	objects := []runtime.Object{class, holder,
		slice("a-gpus", "gpu.example.com", "a", 1, 4, on("a")),
		slice("a-nics", "nic.example.com", "a-nics", 1, 3, on("a")),
		slice("e-old", "gpu.example.com", "e", 1, 2, on("e")),
		slice("e-new", "gpu.example.com", "e", 2, 2, on("e")),
		slice("f-gpus", "gpu.example.com", "f", 1, 1, labelled),
	}
	pl, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type:      configv1.MostAllocated,
		Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: gpu, Weight: 3}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	pod := testbuild.Pod("cpu", "1", gpu, "1").Pod
	named := func(name string, ni *nodeinfo.NodeInfo) *nodeinfo.NodeInfo {
		n := ni.Node().DeepCopy()
		n.Name = name
		if name == "f" {
			n.Labels = map[string]string{"gpu": "yes"}
		}
		return nodeinfo.New(n)
	}
	// cpu scores 1000m * 100 / allocatable with weight 1; the GPU
	// (requested + allocated) * 100 / devices with weight 3.
	tests := []struct {
		name string
		node *nodeinfo.NodeInfo
		want int64
	}{
		{"the class's four GPUs, one allocated, count; the NICs it does not select do not", named("a", fitNode("4", "16Gi", nil)), (25 + 3*50) / 4},
		{"a device plugin's GPUs count as allocatable, as before", named("b", fitNode("4", "16Gi", []string{gpu, "4"})), (25 + 3*25) / 4},
		{"a node with neither leaves the GPU out", named("c", fitNode("2", "16Gi", nil)), 50},
		{"an obsolete generation of a pool still counts, as upstream counts it", named("e", fitNode("4", "16Gi", nil)), (25 + 3*25) / 4},
		{"a slice reaches the nodes its selector selects", named("f", fitNode("4", "16Gi", nil)), (25 + 3*100) / 4},
		{"and not the others", named("g", fitNode("4", "16Gi", nil)), 25},
	}
	l, err := fwk.NewListers(objects...)
	if err != nil {
		t.Fatal(err)
	}
	state := fwk.NewCycleState(nil).SetListers(l)
	if st := pl.PreScore(context.Background(), state, pod, nil); st != nil {
		t.Fatal(st)
	}
	for _, tc := range tests {
		got, st := pl.Score(context.Background(), state, pod, tc.node)
		if st != nil || got != tc.want {
			t.Errorf("%s: Score = %d, %v; want %d", tc.name, got, st, tc.want)
		}
		// Without PreScore's state, Score counts the devices itself.
		if got, _ := pl.Score(context.Background(), fwk.NewCycleState(nil).SetListers(l), pod, tc.node); got != tc.want {
			t.Errorf("%s, without PreScore: Score = %d, want %d", tc.name, got, tc.want)
		}
	}
}
