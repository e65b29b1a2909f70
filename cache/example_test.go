package cache_test

import (
	"context"
	"fmt"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
)

// Informer events go into the cache; each scheduling cycle schedules on a
// snapshot, then assumes the pod on the chosen node until the binding
// is confirmed.
func Example() {
	c, _ := cache.New()
	c.AddNode(testNode("small", 1000))
	c.AddNode(testNode("large", 4000))
	c.AddPod(testPod("running", "large"))

	pod := testPod("web", "")
	res, err := kubesched.Schedule(context.Background(), pod, c.Snapshot().Nodes())
	if err != nil {
		fmt.Println(err)
		return
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.SuggestedHost
	c.AssumePod(assumed)
	// ... bind through the API, then:
	c.FinishBinding(assumed)

	large, _ := c.Snapshot().Get("large")
	fmt.Printf("%s: %d pods, %dm cpu requested\n", res.SuggestedHost, len(large.Pods()), large.Requested().MilliCPU)
	// Output: large: 2 pods, 200m cpu requested
}
