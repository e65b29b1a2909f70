package testcluster

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
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
