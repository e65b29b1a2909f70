package kubesched_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// affinityPod returns a pod labelled app=<one of three> with random pod
// affinity and anti-affinity terms, required and preferred, by hostname
// or zone.
func affinityPod(r *rand.Rand, name string) *v1.Pod {
	apps := []string{"a", "b", "c"}
	keys := []string{"kubernetes.io/hostname", testcluster.ZoneLabel}
	term := func() v1.PodAffinityTerm {
		return v1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": apps[r.IntN(len(apps))]}},
			TopologyKey:   keys[r.IntN(len(keys))],
		}
	}
	weighted := func() []v1.WeightedPodAffinityTerm {
		if r.IntN(2) == 0 {
			return nil
		}
		return []v1.WeightedPodAffinityTerm{{Weight: 1 + r.Int32N(100), PodAffinityTerm: term()}}
	}
	required := func(p float64) []v1.PodAffinityTerm {
		if r.Float64() >= p {
			return nil
		}
		return []v1.PodAffinityTerm{term()}
	}
	p := testcluster.Pod(name, testcluster.Basic)
	p.Labels = map[string]string{"app": apps[r.IntN(len(apps))]}
	p.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution:  required(0.1),
			PreferredDuringSchedulingIgnoredDuringExecution: weighted(),
		},
		PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution:  required(0.2),
			PreferredDuringSchedulingIgnoredDuringExecution: weighted(),
		},
	}
	return p
}

// TestPluginsCountTheSameOnOneWorkerAsOnMany checks that PreFilter and
// PreScore plugins that count over the nodes on several workers, merging
// per-worker counts, decide exactly as they do on one. The conformance
// scenarios are too small to use more than one worker.
func TestPluginsCountTheSameOnOneWorkerAsOnMany(t *testing.T) {
	// Workers are bounded by GOMAXPROCS; make sure there are several.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(1, 2))
	nodes := testcluster.Nodes(2000, testcluster.Basic)
	var pods []*v1.Pod
	for i := range 3000 {
		p := affinityPod(r, fmt.Sprintf("placed-%d", i))
		p.Spec.NodeName = nodes[r.IntN(len(nodes))].Name
		pods = append(pods, p)
	}
	cluster := nodeinfo.Build(nodes, pods)
	build := func(parallelism int) *framework.Framework {
		f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithParallelism(parallelism), framework.WithRandSource(rand.NewPCG(7, 7)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	serial, parallel := build(1), build(8)
	for i := range 20 {
		pod := affinityPod(r, fmt.Sprintf("incoming-%d", i))
		want, wantErr := serial.Schedule(context.Background(), pod, cluster)
		got, gotErr := parallel.Schedule(context.Background(), pod, cluster)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("pod %d: error %v on many workers, %v on one", i, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if got.SuggestedHost != want.SuggestedHost || !reflect.DeepEqual(got.NodeScores(), want.NodeScores()) {
			t.Fatalf("pod %d: many workers chose %s, one chose %s, or the scores differ", i, got.SuggestedHost, want.SuggestedHost)
		}
		if len(maps.Collect(got.Diagnosis.Rejected())) != len(maps.Collect(want.Diagnosis.Rejected())) {
			t.Fatalf("pod %d: %d nodes rejected on many workers, %d on one", i, len(maps.Collect(got.Diagnosis.Rejected())), len(maps.Collect(want.Diagnosis.Rejected())))
		}
		for name, s := range want.Diagnosis.Rejected() {
			g := got.Diagnosis.NodeStatus(name)
			if g.Code() != s.Code() || g.Plugin() != s.Plugin() || !reflect.DeepEqual(g.Reasons(), s.Reasons()) {
				t.Fatalf("pod %d, node %s: %v on many workers, %v on one", i, name, g, s)
			}
		}
	}
}

// TestANodeChangedBetweenCyclesIsSeenByTheNext checks that the framework's
// cached view of a node list (names, nodes holding pods with affinity) is
// rebuilt when a NodeInfo changes, on a list long enough to be checked on
// several workers.
func TestANodeChangedBetweenCyclesIsSeenByTheNext(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	nodes := testcluster.Nodes(5000, testcluster.Basic)
	cluster := nodeinfo.Build(nodes, nil)
	f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}
	pod := testcluster.Pod("incoming", testcluster.Basic)
	pod.Labels = map[string]string{"app": "web"}
	if res, err := f.Schedule(context.Background(), pod, cluster); err != nil || res.FeasibleNodes != len(nodes) {
		t.Fatalf("before the change: %v, %+v; want every node feasible", err, res)
	}
	// A pod that repels app=web from its zone arrives on the last node.
	repeller := testcluster.Pod("repeller", testcluster.Basic)
	repeller.Spec.NodeName = nodes[len(nodes)-1].Name
	repeller.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: pod.Labels},
			TopologyKey:   testcluster.ZoneLabel,
		}},
	}}
	cluster[len(cluster)-1].AddPod(repeller)
	res, err := f.Schedule(context.Background(), pod, cluster)
	if err != nil {
		t.Fatal(err)
	}
	zone, inZone := nodes[len(nodes)-1].Labels[testcluster.ZoneLabel], 0
	for _, n := range nodes {
		if n.Labels[testcluster.ZoneLabel] == zone {
			inZone++
		}
	}
	if want := len(nodes) - inZone; res.FeasibleNodes != want {
		t.Errorf("after the change %d nodes feasible, want %d: the zone of the repeller is out", res.FeasibleNodes, want)
	}
}

func TestTheFirstMissingNodeOfALongListIsNamed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	cluster := nodeinfo.Build(testcluster.Nodes(5000, testcluster.Basic), nil)
	cluster[4000], cluster[2600] = nil, nodeinfo.New(nil)
	_, err := kubesched.Schedule(context.Background(), testcluster.Pod("p", testcluster.Basic), cluster)
	if err == nil || !strings.Contains(err.Error(), "node 2600 of 5000 is nil or has no Node") {
		t.Errorf("error %v, want it to name node 2600 of 5000", err)
	}
}
