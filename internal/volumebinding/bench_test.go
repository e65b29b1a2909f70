package volumebinding_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/volumebinding"
)

// BenchmarkCheck measures one node's Check for a pod with a bound local
// volume and two claims waiting for local volumes, with one free local
// volume per node in the cluster: the per-node cost of Filter.
func BenchmarkCheck(b *testing.B) {
	for _, nodes := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("%dnodes", nodes), func(b *testing.B) {
			objs := []runtime.Object{localClass,
				claim("bound", boundTo("pv-bound")), volume("pv-bound", "local", "1Gi", onHost("n0"), takenBy("bound")),
				claim("c", inClass("local"), requesting("1Gi")), claim("d", inClass("local"), requesting("2Gi")),
			}
			for i := range nodes {
				objs = append(objs, volume(fmt.Sprintf("pv-%d", i), "local", "10Gi", onHost(fmt.Sprintf("n%d", i))))
			}
			l := newClaims(b, podUsing("bound", "c", "d"), objs...)
			n := nodeIn("n0", "")
			// One free volume on n0 for two claims: the second cannot bind.
			if got, status := l.Check(n.name, n.labels, nil); got != volumebinding.BindConflict || status != nil {
				b.Fatalf("Check = %v, %v", got.Reasons(), status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				l.Check(n.name, n.labels, nil)
			}
		})
	}
}

// BenchmarkNewClaims measures PreFilter's work for such a pod.
func BenchmarkNewClaims(b *testing.B) {
	for _, nodes := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("%dvolumes", nodes), func(b *testing.B) {
			objs := []runtime.Object{localClass, claim("c", inClass("local"), requesting("1Gi"))}
			for i := range nodes {
				objs = append(objs, volume(fmt.Sprintf("pv-%d", i), "local", "10Gi", onHost(fmt.Sprintf("n%d", i))))
			}
			l := listers(b, objs...)
			pod := podUsing("c")
			if _, status := volumebinding.NewClaims(l, pod); status != nil {
				b.Fatal(status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				volumebinding.NewClaims(l, pod)
			}
		})
	}
}
