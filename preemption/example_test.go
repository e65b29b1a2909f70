package preemption_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

func node(name, cpu string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse("8Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}},
	}
}

func pod(name, nodeName, cpu string, priority int32, started time.Time) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{
			NodeName: nodeName,
			Priority: &priority,
			Containers: []v1.Container{{
				Name:      "app",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
			}},
		},
		Status: v1.PodStatus{StartTime: &metav1.Time{Time: started}},
	}
}

// A high-priority pod on a full cluster: the default profile's
// DefaultPreemption names the node to nominate it to and the pods to
// evict there. The node whose victims matter least wins: here the one
// whose most important victim has the lower priority.
func Example() {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nodes := nodeinfo.Build(
		[]*v1.Node{node("node-a", "4"), node("node-b", "4")},
		[]*v1.Pod{
			pod("batch-1", "node-a", "2", 0, t),
			pod("batch-2", "node-a", "2", 0, t.Add(time.Hour)),
			pod("web-1", "node-b", "2", 100, t),
			pod("web-2", "node-b", "2", 100, t),
		},
	)
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = fw.Schedule(context.Background(), pod("critical", "", "3", 1000, t), nodes)
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) || fitErr.Preemption == nil {
		fmt.Println("no preemption:", err)
		return
	}
	fmt.Println(err)
	fmt.Println("nominate to", fitErr.Preemption.NominatedNodeName)
	for _, victim := range fitErr.Preemption.Victims {
		fmt.Println("evict", victim.Name)
	}
	// Output:
	// 0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node node-a, preempting 2 victims
	// nominate to node-a
	// evict batch-1
	// evict batch-2
}
