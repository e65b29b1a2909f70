package filter

import (
	"context"
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/nodeinfo"
)

// antiPod is a pod of app, on node, that keeps other pods of
// avoidApp off its host when avoidApp is set.
func antiPod(name, app, node, avoidApp string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-" + name), Labels: map[string]string{"app": app}}}
	p.Spec.NodeName = node
	if avoidApp != "" {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": avoidApp}},
			TopologyKey:   []string{"kubernetes.io/hostname", "zone"}[len(name)%2],
		}}}}
	}
	return p
}

// countsOf flattens counts for comparison.
func countsOf(c *podaffinity.Counts) map[string]int64 {
	out := map[string]int64{}
	c.Each(func(key, value string, n int64) { out[key+"="+value] = n })
	return out
}

// TestAffinityAggregatesCountAsEveryNodeCountedAgain changes random nodes
// of a cluster, through new NodeInfos, in place, or in a new list, and
// checks after each change that the PreFilter state counted through the
// aggregate, which visits only the changed nodes, holds what counting
// every node finds, for a pod without terms and for one with affinity
// and anti-affinity terms.
func TestAffinityAggregatesCountAsEveryNodeCountedAgain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	apps := []string{"web", "db", "cache"}
	var cluster []*nodeinfo.NodeInfo
	for i := range minAggregateNodes + 44 {
		name := "n" + strconv.Itoa(i)
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "zone": "z" + strconv.Itoa(i%3)}}}
		cluster = append(cluster, nodeinfo.New(node, antiPod("p"+name, apps[i%3], name, apps[(i+1)%3])))
	}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	withTerms := plain.DeepCopy()
	withTerms.Name = "terms"
	withTerms.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "zone",
		}}},
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: "kubernetes.io/hostname",
		}}},
	}
	ctx := context.Background()
	// Aggregates kept by the test itself, given the nodes' generations as
	// a snapshot keeps them.
	withGens := map[string]*affinityAggregate{plain.Name: {}, withTerms.Name: {}}
	for step := range 200 {
		i := r.IntN(len(cluster))
		p := antiPod("s"+strconv.Itoa(step), apps[r.IntN(3)], cluster[i].Name(), []string{"", "web", "db"}[r.IntN(3)])
		switch r.IntN(3) {
		case 0:
			ni := cluster[i].Clone()
			ni.AddPod(p)
			cluster[i] = ni
		case 1:
			cluster[i].AddPod(p)
		default:
			cluster = append([]*nodeinfo.NodeInfo(nil), cluster...)
			cluster[i] = cluster[i].Clone()
			cluster[i].AddPod(p)
		}
		for _, pod := range []*v1.Pod{plain, withTerms} {
			state := framework.NewCycleState(cluster)
			got, status := newInterPodAffinityState(ctx, state, pod, cluster, state.NodesWithRequiredPodAntiAffinity(cluster))
			if status != nil {
				t.Fatalf("step %d, %s: %v", step, pod.Name, status)
			}
			want := *got
			want.existingAnti, want.affinityCounts, want.antiAffinityCounts = &podaffinity.Counts{}, &podaffinity.Counts{}, &podaffinity.Counts{}
			keys := want.keys(len(want.affinity)+len(want.antiAffinity) > 0)
			before := want
			gens := make([]int64, len(cluster))
			for i, ni := range cluster {
				gens[i] = ni.Generation
			}
			a := withGens[pod.Name]
			a.count(&before, keys, cluster, gens)
			counts := make([]int, len(keys.incoming))
			for _, ni := range cluster {
				want.countNode(ni, keys, counts)
			}
			for name, pair := range map[string][2]*podaffinity.Counts{
				"existing anti-affinity": {got.existingAnti, want.existingAnti},
				"affinity":               {got.affinityCounts, want.affinityCounts},
				"anti-affinity":          {got.antiAffinityCounts, want.antiAffinityCounts},
				"existing anti-affinity, with generations": {&a.existingAnti, want.existingAnti},
				"affinity, with generations":               {&a.affinityCounts, want.affinityCounts},
				"anti-affinity, with generations":          {&a.antiAffinityCounts, want.antiAffinityCounts},
			} {
				if g, w := countsOf(pair[0]), countsOf(pair[1]); !maps.Equal(g, w) {
					t.Fatalf("step %d, %s, %s counts: aggregate %v, every node %v", step, pod.Name, name, g, w)
				}
			}
		}
	}
}
