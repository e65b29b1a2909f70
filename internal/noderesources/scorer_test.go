package noderesources

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestShapeScore(t *testing.T) {
	t.Parallel()
	// Scores already scaled to 0-100: the shape 0%->0, 30%->50, 100%->100.
	shape := []shapePoint{{0, 0}, {30, 50}, {100, 100}}
	// Starting at 50%: flat below the first point.
	late := []shapePoint{{50, 20}, {100, 100}}
	tests := []struct {
		name  string
		shape Shape
		p     int64
		want  int64
	}{
		{name: "a point's own utilization gives its score", shape: shape, p: 30, want: 50},
		{name: "between points the line is interpolated and truncated", shape: shape, p: 25, want: 41}, // 0 + 50*25/30 = 41.67
		{name: "the second segment is interpolated from its start", shape: shape, p: 50, want: 64},     // 50 + 50*20/70 = 64.29
		{name: "the last point's utilization gives its score", shape: shape, p: 100, want: 100},
		{name: "below the first point the score is the first point's", shape: late, p: 10, want: 20},
		{name: "above the last point the score is the last point's", shape: []shapePoint{{0, 0}, {60, 80}}, p: 90, want: 80},
		{name: "a decreasing shape interpolates downwards", shape: []shapePoint{{0, 100}, {100, 0}}, p: 33, want: 67}, // 100 + (-100)*33/100 = 67
		{name: "a single point is a constant", shape: []shapePoint{{40, 70}}, p: 99, want: 70},
		{name: "a negative utilization reads as below the first point", shape: late, p: -7, want: 20},
		{name: "a falling segment after a rising one truncates toward zero", shape: []shapePoint{{20, 20}, {40, 80}, {60, 30}}, p: 41, want: 78}, // 80 + (-50)*1/20 = 77.5
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.shape.Score(tc.p); got != tc.want {
				t.Errorf("Score(%v, %d) = %d, want %d", tc.shape, tc.p, got, tc.want)
			}
		})
	}
}

func TestBalance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                   string
		requested, allocatable []int64
		want                   int64
	}{
		{name: "equal fractions are perfectly balanced", requested: []int64{1, 2}, allocatable: []int64{4, 8}, want: 100},
		{name: "two resources use half the difference", requested: []int64{3, 0}, allocatable: []int64{4, 8}, want: 62},              // std |.75-0|/2 = .375
		{name: "fractions are capped at 1", requested: []int64{8, 0}, allocatable: []int64{4, 8}, want: 50},                          // std |1-0|/2
		{name: "resources with zero allocatable are left out", requested: []int64{3, 5, 0}, allocatable: []int64{4, 0, 8}, want: 62}, // as two resources
		{name: "one resource is always balanced", requested: []int64{3, 0}, allocatable: []int64{4, 0}, want: 100},
		{name: "no resources is balanced", requested: []int64{0, 0}, allocatable: []int64{0, 0}, want: 100},
		// fractions .25 .25 .5, mean 1/3: variance (1/144+1/144+4/144)/3 = 1/72, std .1179.
		{name: "three resources use the population standard deviation", requested: []int64{1, 2, 2}, allocatable: []int64{4, 8, 4}, want: 88},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := balance(tc.requested, tc.allocatable); got != tc.want {
				t.Errorf("balance(%v, %v) = %d, want %d", tc.requested, tc.allocatable, got, tc.want)
			}
		})
	}
}

func TestPerResourceScores(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		score                     func(requested, capacity int64) int64
		requested, capacity, want int64
	}{
		{name: "least: the free share, truncated", score: leastRequestedScore, requested: 1, capacity: 3, want: 66},
		{name: "least: over-committed scores 0", score: leastRequestedScore, requested: 5, capacity: 4, want: 0},
		{name: "least: zero capacity scores 0", score: leastRequestedScore, requested: 0, capacity: 0, want: 0},
		{name: "most: the used share, truncated", score: mostRequestedScore, requested: 2, capacity: 3, want: 66},
		{name: "most: over-committed is capped at 100", score: mostRequestedScore, requested: 5, capacity: 4, want: 100},
		{name: "most: zero capacity scores 0", score: mostRequestedScore, requested: 1, capacity: 0, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.score(tc.requested, tc.capacity); got != tc.want {
				t.Errorf("score(%d, %d) = %d, want %d", tc.requested, tc.capacity, got, tc.want)
			}
		})
	}
}

func TestAllZero(t *testing.T) {
	t.Parallel()
	if !AllZero(nil) || !AllZero([]int64{0, 0}) || AllZero([]int64{0, 1}) {
		t.Error("AllZero should be true exactly for vectors of zeros")
	}
}

// TestScorerWithManyResources covers more resources than Score keeps on
// the stack.
func TestScorerWithManyResources(t *testing.T) {
	t.Parallel()
	alloc := v1.ResourceList{}
	requests := v1.ResourceList{}
	var specs []configv1.ResourceSpec
	for i := range 10 {
		name := v1.ResourceName(fmt.Sprintf("example.com/r%d", i))
		alloc[name] = resource.MustParse("4")
		requests[name] = resource.MustParse("1")
		specs = append(specs, configv1.ResourceSpec{Name: string(name), Weight: 1})
	}
	s := NewFitScorer(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: specs}})
	ni := nodeinfo.New(&v1.Node{Status: v1.NodeStatus{Allocatable: alloc}})
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: requests}}}}}
	// Every resource: (4-1)*100/4 = 75.
	if got := s.Score(s.PodRequests(pod), ni); got != 75 {
		t.Errorf("Score = %d, want 75", got)
	}
}

// TestPodRequestsOfOnePlainContainerAsComponentHelpersWorksThemOut: the
// shortcut for a pod of one plain container gives what component-helpers'
// PodRequests gives, for both scorers (the fit scorer puts in default
// requests for missing cpu and memory), and every other kind of pod goes
// through PodRequests.
func TestPodRequestsOfOnePlainContainerAsComponentHelpersWorksThemOut(t *testing.T) {
	t.Parallel()
	requests := testcluster.Requests
	container := func(r v1.ResourceRequirements) v1.Container { return v1.Container{Name: "c", Resources: r} }
	plain := func(r v1.ResourceRequirements) v1.Pod {
		return v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container(r)}}}
	}
	resizing := plain(requests("cpu", "250m"))
	resizing.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}
	resizing.Status.Resize = v1.PodResizeStatusInProgress
	allocated := plain(requests("cpu", "250m"))
	allocated.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}
	withInit := plain(requests("cpu", "250m"))
	withInit.Spec.InitContainers = []v1.Container{container(requests("cpu", "2"))}
	withOverhead := plain(requests("cpu", "250m"))
	withOverhead.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m")}
	podLevel := plain(requests("cpu", "250m"))
	podLevel.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}}
	two := plain(requests("cpu", "250m"))
	two.Spec.Containers = append(two.Spec.Containers, container(requests("memory", "1Gi")))
	tests := []struct {
		name  string
		pod   v1.Pod
		plain bool
	}{
		{"cpu, memory and an extended resource", plain(requests("cpu", "250m", "memory", "1Gi", "example.com/gpu", "2")), true},
		{"nothing requested", plain(v1.ResourceRequirements{}), true},
		{"cpu alone", plain(requests("cpu", "1500m")), true},
		{"memory alone", plain(requests("memory", "300Mi")), true},
		{"zero cpu and memory written out", plain(requests("cpu", "0", "memory", "0")), true},
		{"limits alone", plain(v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}), true},
		{"a fraction of a millicore", plain(requests("cpu", "0.0001", "memory", "1.5")), true},
		{"a container being resized", resizing, false},
		{"a container whose status shows more allocated", allocated, false},
		{"an init container", withInit, false},
		{"overhead", withOverhead, false},
		{"pod-level resources", podLevel, false},
		{"two containers", two, false},
	}
	resources := []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "example.com/gpu", Weight: 3}}
	scorers := map[string]*Scorer{
		"fit":      NewFitScorer(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: resources}}),
		"balanced": NewBalancedScorer(&configv1.NodeResourcesBalancedAllocationArgs{Resources: resources}),
	}
	for name, s := range scorers {
		for _, tc := range tests {
			if got := plainContainer(&tc.pod) != nil; got != tc.plain {
				t.Errorf("%s: taken for one plain container: %v, want %v", tc.name, got, tc.plain)
			}
			if got, want := s.PodRequests(&tc.pod), s.podRequests(&tc.pod); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s scorer, %s: requests %v, component-helpers %v", name, tc.name, got, want)
			}
		}
	}
}
