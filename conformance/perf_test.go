package conformance

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// BenchmarkSideBySide times one scheduling decision by kubesched and by
// kube-scheduler's own SchedulePod ([Upstream]) on scheduler_perf-shaped
// clusters, both with every node filtered and scored (pct=100) and with
// kube-scheduler's default adaptive percentageOfNodesToScore
// (pct=adaptive). Compare the pods/s of a kubesched and an upstream run of
// the same size and setting.
func BenchmarkSideBySide(b *testing.B) {
	for _, numNodes := range []int{500, 5000} {
		// One pod per 5 nodes: as many again would leave PodAntiAffinity's
		// pod no node.
		for _, w := range PerfWorkloads(numNodes, numNodes/5) {
			for _, pct := range []struct {
				name string
				// ours is kubesched's setting, where 0 is adaptive;
				// theirs is upstream's, where nil leaves its default.
				ours   int32
				theirs *int32
			}{
				{name: "100", ours: 100, theirs: ptr.To[int32](100)},
				{name: "adaptive", ours: 0, theirs: nil},
			} {
				b.Run(fmt.Sprintf("%dnodes/%s/pct=%s/kubesched", numNodes, w.Name, pct.name), func(b *testing.B) {
					benchmarkKubesched(b, w, pct.ours)
				})
				b.Run(fmt.Sprintf("%dnodes/%s/pct=%s/upstream", numNodes, w.Name, pct.name), func(b *testing.B) {
					benchmarkUpstream(b, w, pct.theirs)
				})
			}
		}
	}
}

func benchmarkKubesched(b *testing.B, w PerfWorkload, percentage int32) {
	ctx := context.Background()
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(percentage))
	if err != nil {
		b.Fatal(err)
	}
	nodes := nodeinfo.Build(w.Nodes, w.Pods)
	if _, err := fw.Schedule(ctx, w.Pod, nodes); err != nil {
		b.Fatalf("kubesched: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := fw.Schedule(ctx, w.Pod, nodes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

func benchmarkUpstream(b *testing.B, w PerfWorkload, percentage *int32) {
	ctx := context.Background()
	u, err := NewUpstream(percentage)
	if err != nil {
		b.Fatal(err)
	}
	defer u.Close()
	if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
		b.Fatal(err)
	}
	if _, err := u.Schedule(ctx, w.Pod); err != nil {
		b.Fatalf("upstream: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := u.Schedule(ctx, w.Pod); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}
