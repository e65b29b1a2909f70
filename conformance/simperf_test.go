package conformance

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

// simPodKind is which of [SimMix]'s kinds a pod is: "plain", "spread"
// (a ReplicaSet's, spread by default constraints) or "anti-affine" (a
// ReplicaSet's, required a node apart from its app).
func simPodKind(p *v1.Pod) string {
	switch {
	case len(p.OwnerReferences) == 0:
		return "plain"
	case p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil:
		return "anti-affine"
	default:
		return "spread"
	}
}

func TestSimWorkloads(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	const numNodes, numRunning, numPending = 40, 80, 50
	workloads := map[string]SimWorkload{}
	for _, name := range SimWorkloadNames {
		workloads[name] = NewSimWorkload(name, numNodes, numRunning, numPending)
	}
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, w SimWorkload)
	}{
		{name: "the same arguments build the same workload", check: func(t *testing.T, w SimWorkload) {
			if again := NewSimWorkload(w.Name, numNodes, numRunning, numPending); !equality.Semantic.DeepEqual(again, w) {
				t.Error("a second build differs from the first")
			}
		}},
		{name: "every workload runs the same pods", check: func(t *testing.T, w SimWorkload) {
			if !equality.Semantic.DeepEqual(w.Pods, workloads[SimMix].Pods) {
				t.Error("the running pods differ from Mix's")
			}
		}},
		{name: "it has as many nodes and pods as asked for", check: func(t *testing.T, w SimWorkload) {
			if len(w.Nodes) != numNodes || len(w.Pods) != numRunning || len(w.Pending) != numPending {
				t.Errorf("%d nodes, %d running and %d pending pods; want %d, %d and %d",
					len(w.Nodes), len(w.Pods), len(w.Pending), numNodes, numRunning, numPending)
			}
		}},
		{name: "every pod has a name and a UID of its own and a creation time", check: func(t *testing.T, w SimWorkload) {
			names, uids := map[string]bool{}, map[string]bool{}
			for _, p := range append(w.Pods[:len(w.Pods):len(w.Pods)], w.Pending...) {
				if names[p.Name] || uids[string(p.UID)] || p.CreationTimestamp.IsZero() {
					t.Errorf("pod %s: its name or UID %s is another pod's too, or it has no creation time", p.Name, p.UID)
				}
				names[p.Name], uids[string(p.UID)] = true, true
			}
		}},
		{name: "running pods are bound to nodes with room for them and pending pods to none", check: func(t *testing.T, w SimWorkload) {
			type use struct {
				milliCPU, memory, pods int64
				apps                   map[string]bool
			}
			used := map[string]*use{}
			for _, n := range w.Nodes {
				used[n.Name] = &use{apps: map[string]bool{}}
			}
			for _, p := range w.Pods {
				u, ok := used[p.Spec.NodeName]
				if !ok {
					t.Fatalf("running pod %s is bound to %q, not a node of the cluster", p.Name, p.Spec.NodeName)
				}
				req := p.Spec.Containers[0].Resources.Requests
				u.milliCPU += req.Cpu().MilliValue()
				u.memory += req.Memory().Value()
				u.pods++
				if simPodKind(p) == "anti-affine" {
					if u.apps[p.Labels["app"]] {
						t.Errorf("running pod %s shares node %s with another pod of its anti-affine app", p.Name, p.Spec.NodeName)
					}
					u.apps[p.Labels["app"]] = true
				}
			}
			for _, n := range w.Nodes {
				a, u := n.Status.Allocatable, used[n.Name]
				if u.milliCPU > a.Cpu().MilliValue() || u.memory > a.Memory().Value() || u.pods > a.Pods().Value() {
					t.Errorf("node %s's pods ask for %dm CPU, %d bytes and %d pods; it has %v", n.Name, u.milliCPU, u.memory, u.pods, a)
				}
			}
			for _, p := range w.Pending {
				if p.Spec.NodeName != "" {
					t.Errorf("pending pod %s is bound to %s", p.Name, p.Spec.NodeName)
				}
			}
		}},
		{name: "a ReplicaSet's pods are its own, by controller reference and selector", check: func(t *testing.T, w SimWorkload) {
			sets := map[string]*appsv1.ReplicaSet{}
			for _, o := range w.Objects {
				if rs, ok := o.(*appsv1.ReplicaSet); ok {
					sets[rs.Name] = rs
				}
			}
			owned := 0
			for _, p := range append(w.Pods[:len(w.Pods):len(w.Pods)], w.Pending...) {
				owner := metav1.GetControllerOf(p)
				if owner == nil {
					continue
				}
				owned++
				rs := sets[owner.Name]
				if rs == nil || owner.UID != rs.UID || owner.APIVersion != "apps/v1" || owner.Kind != "ReplicaSet" {
					t.Fatalf("pod %s's controller is %+v, not one of the ReplicaSets", p.Name, owner)
				}
				selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
				if err != nil || !selector.Matches(labels.Set(p.Labels)) {
					t.Errorf("pod %s's labels %v are not selected by its ReplicaSet's %v (%v)", p.Name, p.Labels, rs.Spec.Selector, err)
				}
			}
			if owned == 0 {
				t.Error("no pod belongs to a ReplicaSet")
			}
		}},
		{name: "Autoscaler's ReplicaSets each have a Service selecting their pods alone, the others none", check: func(t *testing.T, w SimWorkload) {
			var sets, services []string
			for _, o := range w.Objects {
				switch o := o.(type) {
				case *appsv1.ReplicaSet:
					sets = append(sets, o.Name)
				case *v1.Service:
					services = append(services, o.Name)
					for _, p := range append(w.Pods[:len(w.Pods):len(w.Pods)], w.Pending...) {
						owner := metav1.GetControllerOf(p)
						selected := p.Namespace == o.Namespace && labels.SelectorFromSet(o.Spec.Selector).Matches(labels.Set(p.Labels))
						if mine := owner != nil && owner.Name == o.Name; selected != mine {
							t.Fatalf("Service %s selects pod %s: %t; the pod's controller is %+v", o.Name, p.Name, selected, owner)
						}
					}
				default:
					t.Fatalf("an object is a %T, want ReplicaSets and Services only", o)
				}
			}
			want := []string(nil)
			if simWorkloads[w.Name].services {
				want = sets
			}
			if !slices.Equal(services, want) {
				t.Errorf("Services %v, want %v", services, want)
			}
		}},
		{name: "pending pods are of the workload's kinds", check: func(t *testing.T, w SimWorkload) {
			kinds := map[string]int{}
			for _, p := range w.Pending {
				kinds[simPodKind(p)]++
			}
			if mix := simWorkloads[w.Name].mix; mix != nil {
				plain, spread := numPending*mix.plain/100, numPending*(mix.plain+mix.spread)/100
				want := map[string]int{"plain": plain, "spread": spread - plain, "anti-affine": numPending - spread}
				if !reflect.DeepEqual(kinds, want) {
					t.Errorf("pending pods by kind: %v, want %v", kinds, want)
				}
				return
			}
			first := w.Pending[0]
			for _, p := range w.Pending {
				same := p.DeepCopy()
				same.Name, same.UID = first.Name, first.UID
				if !equality.Semantic.DeepEqual(same, first) {
					t.Fatalf("pending pod %s differs from %s by more than its name and UID", p.Name, first.Name)
				}
			}
			if kinds["spread"] != numPending {
				t.Errorf("pending pods by kind: %v, want every one a spreading ReplicaSet's", kinds)
			}
		}},
		{name: "plain pending pods come in the mix's sizes, each of them", check: func(t *testing.T, w SimWorkload) {
			mix := simWorkloads[w.Name].mix
			if mix == nil {
				return
			}
			seen := map[int]bool{}
			for _, p := range w.Pending {
				if simPodKind(p) != "plain" {
					continue
				}
				req := p.Spec.Containers[0].Resources.Requests
				i := slices.IndexFunc(mix.sizes, func(s simSize) bool {
					return s.cpu.Equal(req[v1.ResourceCPU]) && s.memory.Equal(req[v1.ResourceMemory])
				})
				if i < 0 {
					t.Fatalf("plain pending pod %s asks for %v, not one of the mix's sizes", p.Name, req)
				}
				seen[i] = true
			}
			if len(seen) != len(mix.sizes) {
				t.Errorf("plain pending pods come in %d sizes, want the mix's %d", len(seen), len(mix.sizes))
			}
		}},
		{name: "every pending pod fits when placed in order", check: func(t *testing.T, w SimWorkload) {
			fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
			if err != nil {
				t.Fatal(err)
			}
			c, err := sim.New(fw, w.Nodes, w.Pods, w.Objects...)
			if err != nil {
				t.Fatal(err)
			}
			results, err := c.PlaceAll(context.Background(), w.Pending)
			if err != nil {
				t.Fatal(err)
			}
			for i, res := range results {
				if res == nil {
					t.Errorf("pending pod %s fits no node", w.Pending[i].Name)
				}
			}
		}},
	} {
		for _, name := range SimWorkloadNames {
			t.Run(fmt.Sprintf("%s/%s", tc.name, name), func(t *testing.T) {
				t.Parallel()
				tc.check(t, workloads[name])
			})
		}
	}
}

// BenchmarkSimPlace times kubesched's side of simbyside alone: each
// workload's pending pods placed one after another on a fork of 5000
// nodes running 10,000 pods, the fork reverted once they are all placed.
// One op is one pod. It is for profiles (-cpuprofile, -memprofile) and
// allocation counts; ratios to upstream come from cmd/simbyside.
func BenchmarkSimPlace(b *testing.B) {
	const numNodes, numRunning, numPending = 5000, 10000, 5000
	for _, name := range SimWorkloadNames {
		w := NewSimWorkload(name, numNodes, numRunning, numPending)
		for _, mode := range []struct {
			name       string
			percentage int32
			firstFit   bool
		}{
			{name: "best100", percentage: 100},
			{name: "best-adaptive"},
			{name: "firstfit", firstFit: true},
		} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(mode.percentage))
				if err != nil {
					b.Fatal(err)
				}
				c, err := sim.New(fw, w.Nodes, w.Pods, w.Objects...)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				c.Fork()
				next := 0
				b.ReportAllocs()
				for b.Loop() {
					if next == len(w.Pending) {
						b.StopTimer()
						if err := c.Revert(); err != nil {
							b.Fatal(err)
						}
						c.Fork()
						next = 0
						b.StartTimer()
					}
					pod := w.Pending[next]
					next++
					if mode.firstFit {
						_, err = c.PlaceFirstFit(ctx, pod)
					} else {
						_, err = c.Place(ctx, pod)
					}
					if err != nil {
						b.Fatalf("placing %s: %v", pod.Name, err)
					}
				}
			})
		}
	}
}
