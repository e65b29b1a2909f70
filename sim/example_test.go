package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

// An autoscaler's question: would two more nodes of a template make room
// for the pending pods, and where would they go?
func Example() {
	// Seeded, so that ties between equal nodes break the same way every
	// run.
	fw, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(1, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}
	cluster, err := sim.New(fw, []*v1.Node{node("node-1", "2")}, []*v1.Pod{on(pod("running", "2"), "node-1")})
	if err != nil {
		fmt.Println(err)
		return
	}
	pending := []*v1.Pod{pod("web-1", "1500m"), pod("web-2", "1500m"), pod("web-3", "1500m")}

	cluster.Fork()
	for _, name := range []string{"template-1", "template-2"} {
		if err := cluster.AddNode(node(name, "2")); err != nil {
			fmt.Println(err)
			return
		}
	}
	results, err := cluster.PlaceAll(context.Background(), pending)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, res := range results {
		if res == nil {
			fmt.Println(pending[i].Name, "fits nowhere")
			continue
		}
		fmt.Println(pending[i].Name, "->", res.SuggestedHost)
	}
	if err := cluster.Revert(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(cluster.Nodes()), "node after Revert")
	// Output:
	// web-1 -> template-1
	// web-2 -> template-2
	// web-3 fits nowhere
	// 1 node after Revert
}

// Placing a queue with a report after each pod, and for a pod that fits
// nowhere, why, on the cluster as that pod found it.
func ExampleAfterEach() {
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		fmt.Println(err)
		return
	}
	cluster, err := sim.New(fw, []*v1.Node{node("node-1", "2"), node("node-2", "1")}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	pending := []*v1.Pod{pod("big", "2"), pod("small", "1"), pod("late", "1")}
	report := sim.AfterEach(func(i int, res *framework.Result, err error) {
		if res != nil {
			fmt.Printf("%d/%d %s -> %s\n", i+1, len(pending), pending[i].Name, res.SuggestedHost)
			return
		}
		fmt.Printf("%d/%d %s fits nowhere\n", i+1, len(pending), pending[i].Name)
		e, err := cluster.Explain(ctx, pending[i])
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, n := range e.Closest(1) {
			for _, v := range n.Filters {
				for _, d := range v.Details {
					fmt.Printf("  closest, %s: %s\n", n.Name, d.Message)
				}
			}
		}
	})
	if _, err := cluster.PlaceAll(ctx, pending, report); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1/3 big -> node-1
	// 2/3 small -> node-2
	// 3/3 late fits nowhere
	//   closest, node-1: cpu: the pod requests 1, the node has 2 allocatable of which its pods request 2: 1 short
}
