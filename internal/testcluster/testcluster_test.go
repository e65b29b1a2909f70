package testcluster

import (
	"cmp"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPinnedNodeIsEveryClustersFirstNode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		workload string
		n        int
	}{
		{name: "a one-node Pinned cluster holds it", workload: Pinned, n: 1},
		{name: "a large Pinned cluster holds it first", workload: Pinned, n: 500},
		{name: "a Basic cluster holds it too", workload: Basic, n: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := Nodes(tc.n, tc.workload)
			if got := nodes[0].Name; got != PinnedNode {
				t.Errorf("first node is %q, want %q", got, PinnedNode)
			}
			if len(nodes[0].Spec.Taints) != 0 {
				t.Errorf("pinned node has taints %v", nodes[0].Spec.Taints)
			}
		})
	}
}

func TestPinnedPod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, p *v1.Pod)
	}{
		{name: "Pinned requires the pinned node by its name field", check: func(t *testing.T, p *v1.Pod) {
			terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			want := v1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{PinnedNode}}
			if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || len(terms[0].MatchFields) != 1 ||
				terms[0].MatchFields[0].Key != want.Key || terms[0].MatchFields[0].Operator != want.Operator ||
				!slices.Equal(terms[0].MatchFields[0].Values, want.Values) {
				t.Errorf("node selector terms = %+v, want one matchFields term %+v", terms, want)
			}
		}},
		{name: "Pinned tolerates the node conditions a DaemonSet pod survives", check: func(t *testing.T, p *v1.Pod) {
			// Names as the DaemonSet controller spells them, so that a
			// renamed constant cannot hide a change.
			want := map[string]v1.TaintEffect{
				"node.kubernetes.io/not-ready":       v1.TaintEffectNoExecute,
				"node.kubernetes.io/unreachable":     v1.TaintEffectNoExecute,
				"node.kubernetes.io/disk-pressure":   v1.TaintEffectNoSchedule,
				"node.kubernetes.io/memory-pressure": v1.TaintEffectNoSchedule,
				"node.kubernetes.io/pid-pressure":    v1.TaintEffectNoSchedule,
				"node.kubernetes.io/unschedulable":   v1.TaintEffectNoSchedule,
			}
			if len(p.Spec.Tolerations) != len(want) {
				t.Errorf("%d tolerations, want %d", len(p.Spec.Tolerations), len(want))
			}
			for _, tol := range p.Spec.Tolerations {
				if effect, ok := want[tol.Key]; !ok || tol.Effect != effect || tol.Operator != v1.TolerationOpExists || tol.Value != "" {
					t.Errorf("unexpected toleration %+v", tol)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, Pod("p", Pinned))
		})
	}
}

func TestExistingPodsOfPinnedArePlain(t *testing.T) {
	t.Parallel()
	nodes := Nodes(4, Pinned)
	for _, p := range ExistingPods(8, nodes, Pinned) {
		if p.Spec.Affinity != nil || len(p.Spec.Tolerations) != 0 || len(p.Labels) != 0 {
			t.Errorf("existing pod %s is not a plain pod: %+v", p.Name, p.Spec)
		}
	}
}

func TestPreemptionPodFitsNoNodeButEvictionsMakeRoom(t *testing.T) {
	t.Parallel()
	nodes := Nodes(2*PreemptionCheapestEvery*PreemptionPatterns+7, Preemption)
	pods := PreemptionPods(nodes)
	pod := Pod("incoming", Preemption)
	want := pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
	byNode := map[string][]*v1.Pod{}
	for _, p := range pods {
		if *p.Spec.Priority >= *pod.Spec.Priority {
			t.Errorf("pod %s has priority %d, not below the preemptor's", p.Name, *p.Spec.Priority)
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	for i, n := range nodes {
		onNode := byNode[n.Name]
		capacity := n.Status.Allocatable.Cpu().MilliValue()
		used := int64(0)
		for _, p := range onNode {
			used += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		}
		if used+want <= capacity {
			t.Errorf("node %s has %dm free, the pod fits", n.Name, capacity-used)
		}
		// Put the pods back most important first, as preemption does;
		// those that leave no room for the pod are the victims. Whatever
		// the order, one to three of them are.
		slices.SortFunc(onNode, func(a, b *v1.Pod) int {
			if c := cmp.Compare(*b.Spec.Priority, *a.Spec.Priority); c != 0 {
				return c
			}
			return a.Status.StartTime.Compare(b.Status.StartTime.Time)
		})
		used, victims := 0, 0
		for _, p := range onNode {
			if cpu := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue(); used+cpu+want <= capacity {
				used += cpu
			} else {
				victims++
			}
		}
		if victims < 1 || victims > 3 {
			t.Errorf("node %s: %d victims, want 1 to 3", n.Name, victims)
		}
		if cheapest := i%PreemptionCheapestEvery == 0; cheapest && (victims != 1 || *onNode[len(onNode)-1].Spec.Priority != 0) {
			t.Errorf("node %s is one of the cheapest, but has %d victims, the last of priority %d", n.Name, victims, *onNode[len(onNode)-1].Spec.Priority)
		}
		if period := PreemptionCheapestEvery * PreemptionPatterns; i >= period {
			// Sorted alike, nodes filled alike hold pods alike but for
			// their names.
			twin := byNode[nodes[i-period].Name]
			if !slices.EqualFunc(onNode, twin, func(a, b *v1.Pod) bool {
				return *a.Spec.Priority == *b.Spec.Priority && a.Status.StartTime.Equal(b.Status.StartTime) &&
					a.Labels["app"] == b.Labels["app"] && a.Spec.Containers[0].Resources.Requests.Cpu().Equal(*b.Spec.Containers[0].Resources.Requests.Cpu())
			}) {
				t.Errorf("node %s is not filled as node %s", n.Name, nodes[i-period].Name)
			}
		}
	}
}

func TestPreemptionBudgetsCoverSomeApps(t *testing.T) {
	t.Parallel()
	nodes := Nodes(PreemptionPatterns, Preemption)
	pods := PreemptionPods(nodes)
	covered := 0
	for _, obj := range Objects(nodes, pods, "incoming", Preemption) {
		pdb, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			t.Fatalf("object %T, want only PodDisruptionBudgets", obj)
		}
		for _, p := range pods {
			if p.Labels["app"] == pdb.Spec.Selector.MatchLabels["app"] {
				covered++
			}
		}
	}
	if covered == 0 || covered == len(pods) {
		t.Errorf("budgets cover %d of %d pods, want some", covered, len(pods))
	}
}
