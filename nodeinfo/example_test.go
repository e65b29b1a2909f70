package nodeinfo_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Build attaches pods to their nodes and totals what they request.
func ExampleBuild() {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"),
		}},
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{
			Name:      "web",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")}},
		}}},
	}
	infos := nodeinfo.Build([]*v1.Node{node}, []*v1.Pod{pod})
	ni := infos[0]
	fmt.Printf("%s: %d pod(s), cpu %dm of %dm requested\n", ni.Name(), len(ni.Pods()), ni.Requested().MilliCPU, ni.Allocatable().MilliCPU)
	// Output: n1: 1 pod(s), cpu 1500m of 4000m requested
}
