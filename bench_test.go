package kubesched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
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

// BenchmarkPlacingClaimingPods measures a simulation's loop: pods that
// each claim one of a node's 8 GPUs are placed one after another through a
// cache, each placement assumed with its claim, on a cluster of 5000
// nodes, at kube-scheduler's adaptive percentage and at 100. Every
// placement takes a device, so each decision follows a change.
func BenchmarkPlacingClaimingPods(b *testing.B) {
	const numNodes = 5000
	for _, pct := range []int32{0, 100} {
		b.Run(fmt.Sprintf("%dnodes/pct%d", numNodes, pct), func(b *testing.B) {
			placeClaimingPods(b, numNodes, pct)
		})
	}
}

// placeClaimingPods is BenchmarkPlacingClaimingPods' loop on numNodes
// nodes at percentage pct, with objs in the cluster besides.
func placeClaimingPods(b *testing.B, numNodes int, pct int32, objs ...runtime.Object) {
	const gpus = 8
	ctx := context.Background()
	c, err := cache.New()
	if err != nil {
		b.Fatal(err)
	}
	slices := addGPUNodes(b, c, numNodes, gpus)
	_, class := gpuCluster()
	listers, err := fwk.NewListers(append(append([]runtime.Object{class[1]}, slices...), objs...)...)
	if err != nil {
		b.Fatal(err)
	}
	listers.ResourceClaims = c.ResourceClaims()
	fw, err := kubesched.DefaultFramework(framework.WithListers(listers), framework.WithPercentageOfNodesToScore(pct))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		pod, claim := gpuPod(fmt.Sprintf("pod-%d", i), fmt.Sprintf("claim-%d", i))
		pod.UID = types.UID(fmt.Sprintf("uid-pod-%d", i))
		i++
		if err := c.AddClaim(claim); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := fw.ScheduleSnapshot(ctx, pod, c.Snapshot())
		if err != nil {
			b.Fatal(err)
		}
		pod.Spec.NodeName = res.SuggestedHost
		if err := c.AssumePod(pod, filter.Claims(res)...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPreemption measures one decision for the Preemption workload's
// pod, which fits no node: every cycle runs DefaultPreemption's dry run
// over the candidate nodes, cloning the cycle's state for each, as
// cmd/sidebyside's Preemption rows do.
func BenchmarkPreemption(b *testing.B) {
	for _, n := range []int{5000, 15000} {
		b.Run(fmt.Sprintf("%dnodes", n), func(b *testing.B) {
			nodes := testcluster.Nodes(n, testcluster.Preemption)
			pods := testcluster.PreemptionPods(nodes)
			pod := testcluster.Pod("incoming", testcluster.Preemption)
			f, err := kubesched.DefaultFramework(framework.WithObjects(testcluster.Objects(nodes, pods, pod.Name, testcluster.Preemption)...))
			if err != nil {
				b.Fatal(err)
			}
			snap := snapshot(b, nodes, pods)
			_, err = f.ScheduleSnapshot(context.Background(), pod, snap)
			var fe *framework.FitError
			if !errors.As(err, &fe) || fe.Preemption == nil {
				b.Fatalf("setup: %v, want a FitError with a preemption", err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.ScheduleSnapshot(context.Background(), pod, snap); !errors.As(err, &fe) {
					b.Fatal(err)
				}
			}
		})
	}
}
