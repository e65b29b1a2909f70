package kubesched_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func exampleNode(name, cpu string, taints ...v1.Taint) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.NodeSpec{Taints: taints},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse("8Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}},
	}
}

func examplePod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      "app",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

// The default profile prefers the node with the most free resources.
func ExampleSchedule() {
	busy := examplePod("busy", "3")
	busy.Spec.NodeName = "small"
	nodes := nodeinfo.Build(
		[]*v1.Node{exampleNode("small", "4"), exampleNode("large", "16")},
		[]*v1.Pod{busy},
	)
	res, err := kubesched.Schedule(context.Background(), examplePod("web", "500m"), nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost)
	// Output: large
}

// When no node fits, the error is kube-scheduler's FitError, with the
// reasons counted per node.
func ExampleSchedule_unschedulable() {
	nodes := nodeinfo.Build([]*v1.Node{
		exampleNode("a", "2"),
		exampleNode("b", "2"),
		exampleNode("infra", "64", v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}),
	}, nil)
	_, err := kubesched.Schedule(context.Background(), examplePod("big", "8"), nodes)
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		fmt.Println(fitErr)
		fmt.Println(fitErr.Diagnosis.NodeStatus("infra").Plugin())
	}
	// Output:
	// 0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.
	// TaintToleration
}

// preferNamed is a user's own score plugin: it prefers one node by name.
type preferNamed string

func (p preferNamed) Name() string { return "PreferNamed" }

func (p preferNamed) Score(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	if ni.Node().Name == string(p) {
		return fwk.MaxNodeScore, nil
	}
	return 0, nil
}

// A user's plugin joins the default profile with a weight; a seeded random
// source makes tie-breaks reproducible.
func ExampleDefaultFramework() {
	f, err := kubesched.DefaultFramework(
		framework.WithPlugin(preferNamed("b"), 5),
		framework.WithRandSource(rand.NewPCG(1, 1)),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes := nodeinfo.Build([]*v1.Node{exampleNode("a", "4"), exampleNode("b", "4"), exampleNode("c", "4")}, nil)
	res, err := f.Schedule(context.Background(), examplePod("web", "100m"), nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ns := range res.NodeScores() {
		if ns.Name == res.SuggestedHost {
			for _, s := range ns.Scores {
				fmt.Printf("%s=%d ", s.Name, s.Score)
			}
		}
	}
	fmt.Println("->", res.SuggestedHost)
	// Output: TaintToleration=300 NodeResourcesFit=97 VolumeBinding=0 DynamicResources=0 NodeResourcesBalancedAllocation=74 ImageLocality=0 PreferNamed=500 -> b
}
