package kubesched_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// BenchmarkSchedule measures one scheduling decision with every node
// filtered and scored (percentageOfNodesToScore 100), on clusters shaped
// like kube-scheduler's scheduler_perf: 4 CPU / 32Gi / 110-pod nodes over 3
// zones, one existing 100m/500Mi pod per 5 nodes. The Pinned workload's
// pod is narrowed to one node by its PreFilterResult, so it times what a
// decision costs beyond filtering and scoring.
func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{500, 5000, 15000} {
		for _, workload := range testcluster.Workloads {
			b.Run(fmt.Sprintf("%dnodes/%s", n, workload), func(b *testing.B) {
				nodes := testcluster.Nodes(n, workload)
				infos := nodeinfo.Build(nodes, testcluster.ExistingPods(n/5, nodes, workload))
				pod := testcluster.Pod("incoming", workload)
				f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
				if err != nil {
					b.Fatal(err)
				}
				res, err := f.Schedule(context.Background(), pod, infos)
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
					if _, err := f.Schedule(context.Background(), pod, infos); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
