package kubesched_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// FuzzScheduleWalksAnySelector gives the default profile a pod whose node
// affinity, pod affinity, anti-affinity and spread constraints are built
// from arbitrary keys, operators and values, on a cluster whose running
// pods carry the same terms. Whatever the input, Schedule must answer with
// a placement, a FitError or an error, and never panic.
func FuzzScheduleWalksAnySelector(f *testing.F) {
	f.Add("app", "In", "web,db", "kubernetes.io/hostname", int32(1), int32(0))
	f.Add("app", "Exists", "", "topology.kubernetes.io/zone", int32(0), int32(100))
	f.Add("bad key!", "Gt", "x", "", int32(-1), int32(1<<30))
	f.Add("", "Near", ",,", "no/such/key", int32(5), int32(-3))
	f.Fuzz(func(t *testing.T, key, op, values, topologyKey string, maxSkew, minDomains int32) {
		var vals []string
		if values != "" {
			vals = strings.Split(values, ",")
		}
		selector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: vals}}}
		term := v1.PodAffinityTerm{LabelSelector: selector, NamespaceSelector: selector, TopologyKey: topologyKey}
		pod := testcluster.Pod("fuzzed", testcluster.Basic)
		pod.Labels = map[string]string{key: values}
		pod.Spec.Affinity = &v1.Affinity{
			NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOperator(op), Values: vals}},
				}, {
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpExists}},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: maxSkew, Preference: v1.NodeSelectorTerm{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOperator(op), Values: vals}},
				}}},
			},
			PodAffinity: &v1.PodAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: maxSkew, PodAffinityTerm: term}},
			},
			PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}},
		}
		pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: selector, MinDomains: &minDomains, MatchLabelKeys: []string{key},
		}, {
			MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: selector,
		}}

		nodes := testcluster.Nodes(12, testcluster.Taints)
		running := testcluster.ExistingPods(8, nodes, testcluster.PodAntiAffinity)
		for _, p := range running[:4] {
			p.Spec.Affinity = pod.Spec.Affinity
		}
		fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithObjects(
			&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{key: values}}},
			&v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"}, Spec: v1.ServiceSpec{Selector: map[string]string{key: values}}},
		))
		if err != nil {
			t.Fatal(err)
		}
		res, err := fw.Schedule(context.Background(), pod, nodeinfo.Build(nodes, running))
		if err == nil && res.SuggestedHost == "" {
			t.Fatal("no error and no host")
		}
	})
}
