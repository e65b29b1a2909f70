package names_test

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// A caller tells apart the nodes that want a toleration from those that
// want room by the name of the plugin that rejected each.
func Example() {
	node := func(name, cpu string, taints ...v1.Taint) *v1.Node {
		return &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1.NodeSpec{Taints: taints},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU:  resource.MustParse(cpu),
				v1.ResourcePods: resource.MustParse("110"),
			}},
		}
	}
	nodes := nodeinfo.Build([]*v1.Node{
		node("small", "1"),
		node("gpu", "8", v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}),
	}, nil)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      "web",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}},
		}}},
	}

	_, err := kubesched.Schedule(context.Background(), pod, nodes)
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) {
		fmt.Println("unexpected:", err)
		return
	}
	for _, name := range []string{"small", "gpu"} {
		switch fitErr.Diagnosis.NodeStatus(name).Plugin() {
		case names.TaintToleration:
			fmt.Println(name, "needs a toleration")
		case names.NodeResourcesFit:
			fmt.Println(name, "needs room")
		}
	}
	// Output:
	// small needs room
	// gpu needs a toleration
}
