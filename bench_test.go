package kubesched_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// BenchmarkSchedule measures one scheduling decision with every node
// filtered and scored (percentageOfNodesToScore 100), on clusters shaped
// like kube-scheduler's scheduler_perf: 4 CPU / 32Gi / 110-pod nodes over 3
// zones, one existing 100m/500Mi pod per 5 nodes. Each decision is timed
// twice: Schedule over a plain slice, which it checks in full every call,
// and ScheduleSnapshot over a cache.Snapshot of the same cluster. The
// Pinned workload's pod (a DaemonSet pod) is narrowed to one node by its
// PreFilterResult, so over a snapshot its cost should not grow with the
// cluster. The DRA workload's pod allocates a GPU on every node.
func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{500, 5000, 15000} {
		for _, workload := range testcluster.Workloads {
			nodes := testcluster.Nodes(n, workload)
			pods := testcluster.ExistingPods(n/5, nodes, workload)
			infos := nodeinfo.Build(nodes, pods)
			snap := snapshot(b, nodes, pods)
			pod := testcluster.Pod("incoming", workload)
			f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100),
				framework.WithObjects(testcluster.Objects(nodes, pods, pod.Name, workload)...))
			if err != nil {
				b.Fatal(err)
			}
			calls := []struct {
				name     string
				schedule func() (*framework.Result, error)
			}{
				{"Schedule", func() (*framework.Result, error) { return f.Schedule(context.Background(), pod, infos) }},
				{"ScheduleSnapshot", func() (*framework.Result, error) { return f.ScheduleSnapshot(context.Background(), pod, snap) }},
			}
			for _, call := range calls {
				b.Run(fmt.Sprintf("%dnodes/%s/%s", n, workload, call.name), func(b *testing.B) {
					res, err := call.schedule()
					if err != nil {
						b.Fatal(err)
					}
					// Pinned's PreFilterResult leaves its one node to filter.
					wantEvaluated := n
					if workload == testcluster.Pinned {
						wantEvaluated = 1
					}
					if res.FeasibleNodes == 0 || res.EvaluatedNodes != wantEvaluated {
						b.Fatalf("setup: %d feasible of %d evaluated, want %d evaluated", res.FeasibleNodes, res.EvaluatedNodes, wantEvaluated)
					}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if _, err := call.schedule(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// snapshot returns a cache's snapshot of nodes and pods.
func snapshot(tb testing.TB, nodes []*v1.Node, pods []*v1.Pod) *cache.Snapshot {
	tb.Helper()
	c, err := cache.New()
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range nodes {
		if _, err := c.AddNode(n); err != nil {
			tb.Fatal(err)
		}
	}
	for _, p := range pods {
		if err := c.AddPod(p); err != nil {
			tb.Fatal(err)
		}
	}
	return c.Snapshot()
}
