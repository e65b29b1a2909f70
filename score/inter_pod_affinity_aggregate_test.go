package score

import (
	"context"
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/nodeinfo"
)

// termsPod is a pod of app on node whose terms concern toward: required
// affinity to it, and preferred affinity or anti-affinity, by zone or by
// host as name's length decides.
func termsPod(name, app, node, toward string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-" + name), Labels: map[string]string{"app": app}}}
	p.Spec.NodeName = node
	term := v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": toward}},
		TopologyKey:   []string{"kubernetes.io/hostname", "zone"}[len(name)%2],
	}
	weighted := []v1.WeightedPodAffinityTerm{{Weight: int32(len(name)%5 + 1), PodAffinityTerm: term}}
	p.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}},
	}
	if len(name)%3 == 0 {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: weighted}
	} else {
		p.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = weighted
	}
	return p
}

func scoresOf(c *podaffinity.Counts) map[string]int64 {
	out := map[string]int64{}
	c.Each(func(key, value string, n int64) { out[key+"="+value] = n })
	return out
}

// TestAffinityScoreAggregatesScoreAsEveryNodeScoredAgain changes random
// nodes and checks that PreScore's domain scores, kept in an aggregate,
// are what scoring every node again gives, with and without the nodes'
// generations.
func TestAffinityScoreAggregatesScoreAsEveryNodeScoredAgain(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	apps := []string{"web", "db", "cache"}
	var cluster []*nodeinfo.NodeInfo
	for i := range minScoreAggregateNodes + 44 {
		name := "n" + strconv.Itoa(i)
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "zone": "z" + strconv.Itoa(i%3)}}}
		cluster = append(cluster, nodeinfo.New(node, termsPod("p"+name, apps[i%3], name, apps[(i+1)%3])))
	}
	pl, err := NewInterPodAffinity(nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	terms, err := podaffinity.Parse(pod)
	if err != nil {
		t.Fatal(err)
	}
	scorer := domainScorer{pod: pod, terms: &terms, hardWeight: pl.hardWeight + podaffinity.DefaultHardPodAffinityWeight}
	var withGens scoreAggregate
	ctx := context.Background()
	for step := range 200 {
		i := r.IntN(len(cluster))
		p := termsPod("s"+strconv.Itoa(step), apps[r.IntN(3)], cluster[i].Name(), apps[r.IntN(3)])
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
		state := fwk.NewCycleState(cluster)
		got, status := pl.domainScores(ctx, state, pod, cluster)
		if status != nil {
			t.Fatalf("step %d: %v", step, status)
		}
		want := scorer
		want.scores = &podaffinity.Counts{}
		for _, ni := range cluster {
			for _, pi := range ni.PodsWithAffinity() {
				want.add(pi, ni.Labels())
			}
		}
		if !want.matched {
			t.Fatalf("step %d: no term matched; the test needs one", step)
		}
		if g, w := scoresOf(got), scoresOf(want.scores); !maps.Equal(g, w) {
			t.Fatalf("step %d: aggregate %v, every node %v", step, g, w)
		}
		gens := make([]int64, len(cluster))
		for i, ni := range cluster {
			gens[i] = ni.Generation()
		}
		withGens.count(&scorer, cluster, gens, nil)
		if g, w := scoresOf(&withGens.totals), scoresOf(want.scores); !maps.Equal(g, w) || withGens.matches == 0 {
			t.Fatalf("step %d: with generations, aggregate %v (%d matched), every node %v", step, g, withGens.matches, w)
		}
	}
}
