package kubesched_test

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// A cluster still on kube-scheduler v1.36 gets v1.36's answer: there a pod
// naming a node is rejected elsewhere by NodeName's Filter, from v1.37 by
// its PreFilter.
func ExampleReleaseFor() {
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("2"), v1.ResourcePods: resource.MustParse("110")}}}
	}
	nodes := nodeinfo.Build([]*v1.Node{node("a"), node("b")}, nil)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "a", Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}}}},
	}
	for _, version := range []string{"1.37", "1.36"} {
		r, err := kubesched.ReleaseFor(version)
		if err != nil {
			fmt.Println(err)
			return
		}
		f, err := r.DefaultFramework(framework.WithoutPreemption())
		if err != nil {
			fmt.Println(err)
			return
		}
		_, err = f.Schedule(context.Background(), pod, nodes)
		var fe *framework.FitError
		if errors.As(err, &fe) {
			fmt.Println(r.Version()+":", fe.Diagnosis.NodeStatus("b").Message())
		}
	}
	// Output:
	// v1.37.2: node(s) didn't satisfy plugin(s) [NodeName]
	// v1.36.3: node(s) didn't match the requested node name
}
