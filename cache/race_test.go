package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
)

func testNode(name string, cpu int64) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{
				v1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
				v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
			},
			Images: []v1.ContainerImage{{Names: []string{"app:v1"}, SizeBytes: 300 << 20}},
		},
	}
}

func testPod(name, nodeName string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{
			Name: "c", Image: "app:v1",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}},
		}}},
	}
}

// TestConcurrentEventsAndSnapshots feeds node and pod events from several
// goroutines while others snapshot and schedule on the snapshots; run
// with -race it checks that snapshots are safe to read while the cache
// changes.
func TestConcurrentEventsAndSnapshots(t *testing.T) {
	t.Parallel()
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	fw, err := kubesched.DefaultFramework(framework.WithParallelism(2))
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 200
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	wg.Go(func() { // nodes come, change and go
		for i := range rounds {
			name := fmt.Sprintf("n%d", i%5)
			if _, err := c.UpdateNode(testNode(name, int64(1000+i%3*1000))); err != nil {
				report(err)
			}
			if i%7 == 6 {
				if err := c.RemoveNode(cache.DeletedFinalStateUnknown{Obj: testNode(name, 0)}); err != nil {
					report(err)
				}
			}
		}
	})
	for w := range 2 { // pods are bound, assumed, forgotten and deleted
		wg.Go(func() {
			for i := range rounds {
				p := testPod(fmt.Sprintf("w%d-p%d", w, i), fmt.Sprintf("n%d", i%5))
				if i%2 == 0 {
					if err := c.AddPod(p); err != nil {
						report(err)
					}
				} else if err := c.AssumePod(p); err != nil {
					report(err)
				}
				if i%3 == 0 {
					if err := c.RemovePod(p); err != nil {
						report(err)
					}
				} else if i%2 == 1 && i%5 == 0 {
					if err := c.ForgetPod(p); err != nil {
						report(err)
					}
				}
			}
		})
	}
	for range 2 { // scheduling cycles read snapshots meanwhile
		wg.Go(func() {
			for i := range rounds {
				snap := c.Snapshot()
				_, err := fw.Schedule(context.Background(), testPod(fmt.Sprintf("incoming-%d", i), ""), snap.Nodes())
				var fitErr *framework.FitError
				if err != nil && !errors.As(err, &fitErr) && !errors.Is(err, framework.ErrNoNodesAvailable) {
					report(err)
				}
				for _, ni := range snap.Nodes() {
					_ = ni.Requested().MilliCPU + int64(len(ni.Pods())) + int64(ni.ImageStates()["app:v1"].NumNodes)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
