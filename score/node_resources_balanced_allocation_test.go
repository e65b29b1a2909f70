package score_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/testbuild"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

// Balance b = 100 * (1 - std of the used fractions), truncated; with two
// resources std = |f1 - f2| / 2. Score = 50 + (50 + b with pod - b without) / 2.
func TestNodeResourcesBalancedAllocationScore(t *testing.T) {
	t.Parallel()
	withGPU := &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "example.com/gpu"}}}
	// Node: 4 cpu, 8Gi memory.
	empty := func() *nodeinfo.NodeInfo { return fitNode("4", "8Gi", nil) }
	tests := []struct {
		name string
		args *configv1.NodeResourcesBalancedAllocationArgs
		pod  *v1.Pod
		node *nodeinfo.NodeInfo
		want int64
	}{
		{
			// With: .25, 0 -> 87. Without: 0, 0 -> 100. 50 + (50+87-100)/2 = 68.
			name: "a cpu-only pod on an empty node unbalances it a little",
			pod:  testbuild.Pod("cpu", "1").Pod, node: empty(), want: 68,
		},
		{
			// With: .75, 0 -> 62. Without: .5, 0 -> 75. 50 + (50+62-75)/2 = 68.
			name: "the score depends on the change in balance, not the balance",
			pod:  testbuild.Pod("cpu", "1").Pod, node: fitNode("4", "8Gi", nil, testbuild.Pod("cpu", "2").Pod), want: 68,
		},
		{
			// With: .5, .5 -> 100. Without: .5, 0 -> 75. 50 + (50+100-75)/2 = 87.
			name: "a pod that evens out the node scores above 75",
			pod:  testbuild.Pod("memory", "4Gi").Pod, node: fitNode("4", "8Gi", nil, testbuild.Pod("cpu", "2").Pod), want: 87,
		},
		{
			// With: 1, .5 -> 75. Without: .5, .5 -> 100. 50 + (50+75-100)/2 = 62.
			name: "a pod that unbalances a balanced node scores below 75",
			pod:  testbuild.Pod("cpu", "2").Pod, node: fitNode("4", "8Gi", nil, testbuild.Pod("cpu", "2", "memory", "4Gi").Pod), want: 62,
		},
		{
			name: "a pod that keeps the balance scores 75",
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod, node: empty(), want: 75,
		},
		{
			// With: 1 (capped), 0 -> 50. Without -> 100. 50 + (50+50-100)/2 = 50.
			name: "used fractions are capped at 1",
			pod:  testbuild.Pod("cpu", "8").Pod, node: empty(), want: 50,
		},
		{
			// With defaults the running pods would use 300m and 600Mi.
			name: "requests are read without defaults, so request-less pods weigh nothing",
			pod:  testbuild.Pod("cpu", "1").Pod, node: fitNode("4", "8Gi", nil, testbuild.Pod().Pod, testbuild.Pod().Pod, testbuild.Pod().Pod), want: 68,
		},
		{
			// With: .25, .25, .5: mean 1/3, std sqrt(1/72) = .118 -> 88.
			// Without -> 100. 50 + (50+88-100)/2 = 69.
			name: "three resources use the standard deviation",
			args: withGPU,
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi", "example.com/gpu", "2").Pod,
			node: fitNode("4", "8Gi", []string{"example.com/gpu", "4"}), want: 69,
		},
		{
			// Counted, the fully used gpu would pull the balance down.
			name: "an extended resource the pod does not request is left out",
			args: withGPU,
			pod:  testbuild.Pod("cpu", "1", "memory", "2Gi").Pod,
			node: fitNode("4", "8Gi", []string{"example.com/gpu", "4"}, testbuild.Pod("example.com/gpu", "4").Pod), want: 75,
		},
		{name: "a node with no allocatable scores 75", pod: testbuild.Pod("cpu", "1").Pod, node: testbuild.NodeWith(nil), want: 75},
		{
			name: "pod-level requests replace the containers' sum",
			pod:  testbuild.Pod("cpu", "500m").PodLevel("cpu", "1").Pod, node: empty(), want: 68,
		},
		{
			// The larger of spec (500m) and status (1) cpu, as in the first case.
			name: "a resized container's status requests count",
			pod:  testbuild.Pod("cpu", "500m").Resized("cpu", "1").Pod, node: empty(), want: 68,
		},
	}
	for _, tc := range tests {
		for _, withState := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s (PreScore run: %v)", tc.name, withState), func(t *testing.T) {
				t.Parallel()
				pl, err := score.NewNodeResourcesBalancedAllocation(tc.args)
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

func TestNodeResourcesBalancedAllocationPreScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		pod      *v1.Pod
		wantSkip bool
	}{
		{name: "a pod requesting nothing is skipped", pod: testbuild.Pod().Pod, wantSkip: true},
		{name: "a pod requesting only resources not scored is skipped", pod: testbuild.Pod("example.com/gpu", "1", "ephemeral-storage", "1Gi").Pod, wantSkip: true},
		{name: "a pod requesting only memory is scored", pod: testbuild.Pod("memory", "1Gi").Pod},
		{name: "a pod whose only request is overhead is scored", pod: testbuild.Pod().Overhead("cpu", "100m").Pod},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl := &score.NodeResourcesBalancedAllocation{}
			s := pl.PreScore(context.Background(), fwk.NewCycleState(nil), tc.pod, nil)
			if s.IsSkip() != tc.wantSkip || (!tc.wantSkip && s != nil) {
				t.Errorf("PreScore = %v, want skip: %v", s, tc.wantSkip)
			}
			// Called without PreScore, Score gives a skipped pod 0.
			if got, s := pl.Score(context.Background(), nil, tc.pod, fitNode("4", "8Gi", nil)); tc.wantSkip && (got != 0 || s != nil) {
				t.Errorf("Score of a skipped pod = %d, %v; want 0", got, s)
			}
		})
	}
}

func TestNewNodeResourcesBalancedAllocationRejectsBadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args *configv1.NodeResourcesBalancedAllocationArgs
		want string
	}{
		{name: "a weight other than 1", args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 2}}}, want: "resources[0].weight: Invalid value: 2: must be 1"},
		{name: "a repeated resource", args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "cpu"}}}, want: `resources[1].name: Duplicate value: "cpu"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := score.NewNodeResourcesBalancedAllocation(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewNodeResourcesBalancedAllocation = %v, %v; want error containing %q", pl, err, tc.want)
			}
		})
	}
}

func BenchmarkNodeResourcesBalancedAllocationScore(b *testing.B) {
	running := make([]*v1.Pod, 50)
	for i := range running {
		running[i] = testbuild.Pod("cpu", "50m", "memory", "100Mi").Pod
	}
	node := fitNode("8", "32Gi", nil, running...)
	benchmarkResourceScore(b, "cpu+memory", &score.NodeResourcesBalancedAllocation{}, testbuild.Pod("cpu", "1", "memory", "1Gi").Pod, node)
}
