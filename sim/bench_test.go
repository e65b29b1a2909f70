package sim_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/sim"
)

// BenchmarkPlace places pods one after the other, each committed, on
// scheduler_perf-shaped clusters: the loop of a simulation.
func BenchmarkPlace(b *testing.B) {
	for _, workload := range []string{testcluster.Basic, testcluster.TopologySpreading, testcluster.PodAntiAffinity} {
		for _, n := range []int{5000} {
			b.Run(fmt.Sprintf("%s/%d", workload, n), func(b *testing.B) {
				nodes := testcluster.Nodes(n, workload)
				existing := testcluster.ExistingPods(n/5, nodes, workload)
				objs := testcluster.Objects(nodes, existing, "", workload)
				fw, err := kubesched.DefaultFramework()
				if err != nil {
					b.Fatal(err)
				}
				c, err := sim.New(fw, nodes, existing, objs...)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					refill(b, c, i)
					if _, err := c.Place(ctx, testcluster.Pod(fmt.Sprintf("p-%d", i), workload)); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkPlaceNewShapes places plain pods on 5000 nodes as
// BenchmarkPlace/Basic does, but no two of any 1000 in a row alike (their
// cpu requests differ), so the framework never finds a pod's shape among
// those it remembers: the cost of a first pod of its kind.
func BenchmarkPlaceNewShapes(b *testing.B) {
	nodes := testcluster.Nodes(5000, testcluster.Basic)
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		b.Fatal(err)
	}
	c, err := sim.New(fw, nodes, testcluster.ExistingPods(1000, nodes, testcluster.Basic))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := testcluster.Pod(fmt.Sprintf("p-%d", i), testcluster.Basic)
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(1+i%1000), resource.DecimalSI)
		if _, err := c.Place(ctx, p); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPlaceReplicas places replicas of one ReplicaSet, which
// PodTopologySpread's default constraints spread over hosts and zones,
// on 5000 nodes running 10,000 pods, half of them the ReplicaSet's:
// kube-scheduler's default percentage, and every node scored.
func BenchmarkPlaceReplicas(b *testing.B) {
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: new(true)}
	replica := func(name string) *v1.Pod {
		p := testcluster.Pod(name, testcluster.Basic)
		p.Labels = map[string]string{"app": "web"}
		p.OwnerReferences = []metav1.OwnerReference{owner}
		return p
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	for _, mode := range []struct {
		name     string
		pct      int32
		firstFit bool
	}{{"percentage=0", 0, false}, {"percentage=100", 100, false}, {"firstfit", 0, true}} {
		pct := mode.pct
		b.Run(mode.name, func(b *testing.B) {
			nodes := testcluster.Nodes(5000, testcluster.Basic)
			running := testcluster.ExistingPods(10000, nodes, testcluster.Basic)
			for i := 0; i < len(running); i += 2 {
				p := replica(running[i].Name)
				p.Spec.NodeName = running[i].Spec.NodeName
				running[i] = p
			}
			fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(pct))
			if err != nil {
				b.Fatal(err)
			}
			c, err := sim.New(fw, nodes, running, rs)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				refill(b, c, i)
				var err error
				if mode.firstFit {
					_, err = c.PlaceFirstFit(ctx, replica(fmt.Sprintf("web-%d", i)))
				} else {
					_, err = c.Place(ctx, replica(fmt.Sprintf("web-%d", i)))
				}
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// basicCluster is 5000 plain nodes with 1000 plain pods.
func basicCluster(b *testing.B) *sim.Cluster {
	nodes := testcluster.Nodes(5000, testcluster.Basic)
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		b.Fatal(err)
	}
	c, err := sim.New(fw, nodes, testcluster.ExistingPods(1000, nodes, testcluster.Basic))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkPlaceFirstFit is cluster-autoscaler's first-fit loop.
func BenchmarkPlaceFirstFit(b *testing.B) {
	c := basicCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		refill(b, c, i)
		if _, err := c.PlaceFirstFit(ctx, testcluster.Pod(fmt.Sprintf("p-%d", i), testcluster.Basic)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkForkRevert forks, places ten pods and reverts: the cost is the
// ten placements, whatever the cluster's size.
func BenchmarkForkRevert(b *testing.B) {
	c := basicCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.Fork()
		for i := range 10 {
			if _, err := c.PlaceFirstFit(ctx, testcluster.Pod(fmt.Sprintf("p-%d", i), testcluster.Basic)); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Revert(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew loads clusters of ten plain pods per node, up to 100,000
// nodes and 1,000,000 pods (run it alone: -bench New -benchtime 1x).
func BenchmarkNew(b *testing.B) {
	for _, n := range []int{5000, 15000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			nodes := testcluster.Nodes(n, testcluster.Basic)
			pods := testcluster.ExistingPods(10*n, nodes, testcluster.Basic)
			fw, err := kubesched.DefaultFramework()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				c, err := sim.New(fw, nodes, pods)
				if err != nil {
					b.Fatal(err)
				}
				_ = c.Snapshot()
			}
		})
	}
}

// BenchmarkAtScale places pods, best fit and first fit, on clusters of
// ten plain pods per node, up to 100,000 nodes (loading takes seconds:
// run it alone, -bench AtScale).
func BenchmarkAtScale(b *testing.B) {
	for _, n := range []int{5000, 15000, 100000} {
		nodes := testcluster.Nodes(n, testcluster.Basic)
		fw, err := kubesched.DefaultFramework()
		if err != nil {
			b.Fatal(err)
		}
		c, err := sim.New(fw, nodes, testcluster.ExistingPods(10*n, nodes, testcluster.Basic))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for _, firstFit := range []bool{false, true} {
			name := fmt.Sprintf("Place/%d", n)
			if firstFit {
				name = fmt.Sprintf("PlaceFirstFit/%d", n)
			}
			b.Run(name, func(b *testing.B) {
				// Refilled, so that first fit, placing a hundred thousand
				// pods a second, never fills the cluster.
				defer func() { _ = c.Revert() }()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					refill(b, c, i)
					p := testcluster.Pod(fmt.Sprintf("p-%d", i), testcluster.Basic)
					var err error
					if firstFit {
						_, err = c.PlaceFirstFit(ctx, p)
					} else {
						_, err = c.Place(ctx, p)
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// refillEvery is how many placements a benchmark makes on one fork of
// its cluster before reverting it, so that a fast benchmark, running
// many placements, never fills the cluster (hostname anti-affinity
// takes a node per pod).
const refillEvery = 1000

// refill forks c before the i-th placement when i is a multiple of
// refillEvery, reverting the previous fork first. The reverts cost in
// proportion to the placements undone, a small share of the time.
func refill(b *testing.B, c *sim.Cluster, i int) {
	if i%refillEvery != 0 {
		return
	}
	if i > 0 {
		if err := c.Revert(); err != nil {
			b.Fatal(err)
		}
	}
	c.Fork()
}
