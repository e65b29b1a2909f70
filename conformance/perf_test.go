package conformance

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// BenchmarkSideBySide times one scheduling decision by kubesched and by
// upstream's framework, over every node, on scheduler_perf-shaped clusters.
// Compare the pods/s of a kubesched and an upstream run of the same size.
func BenchmarkSideBySide(b *testing.B) {
	for _, numNodes := range []int{500, 5000} {
		for _, w := range PerfWorkloads(numNodes, 1000) {
			b.Run(fmt.Sprintf("%dnodes/%s/kubesched", numNodes, w.Name), func(b *testing.B) {
				benchmarkKubesched(b, w)
			})
			b.Run(fmt.Sprintf("%dnodes/%s/upstream", numNodes, w.Name), func(b *testing.B) {
				benchmarkUpstream(b, w)
			})
		}
	}
}

func benchmarkKubesched(b *testing.B, w PerfWorkload) {
	ctx := context.Background()
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
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

func benchmarkUpstream(b *testing.B, w PerfWorkload) {
	ctx := context.Background()
	o, err := NewOracle()
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	o.SetCluster(w.Nodes, w.Pods)
	if _, err := o.SelectHost(ctx, w.Pod); err != nil {
		b.Fatalf("upstream: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := o.SelectHost(ctx, w.Pod); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}
