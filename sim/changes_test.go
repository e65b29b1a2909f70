package sim_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/sim"
)

// TestPlacementsCountedFromChangesScoreAsAFreshCount places pods of
// several shapes one after another on a cluster large enough for
// InterPodAffinity's and PodTopologySpread's aggregates, which then count
// only the nodes the snapshot's log says changed since they last looked
// (several placements ago, for a shape that comes back). Each placement's
// scores must be what a framework over nodeinfo.Build of the same cluster
// gives. The check runs after the whole sequence, so that no count over
// another node list comes between two of the cluster's.
func TestPlacementsCountedFromChangesScoreAsAFreshCount(t *testing.T) {
	t.Parallel()
	// 300 of the 500 nodes hold a pod with hostname anti-affinity.
	nodes := testcluster.Nodes(500, testcluster.PodAntiAffinity)
	var existing []*v1.Pod
	for _, w := range []string{testcluster.PodAntiAffinity, testcluster.TopologySpreading, testcluster.PreferredPodAffinity} {
		for _, p := range testcluster.ExistingPods(300, nodes, w) {
			p.Name, p.UID = w+"-"+p.Name, types.UID(w)+"-"+p.UID
			existing = append(existing, p)
		}
	}
	objs := testcluster.Objects(nodes, existing, "", testcluster.TopologySpreading)
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.New(fw, nodes, existing, objs...)
	if err != nil {
		t.Fatal(err)
	}
	// The last shape is a plain pod the PreferredPodAffinity pods' terms
	// match: InterPodAffinity scores it from placed pods' terms alone.
	shapes := []string{testcluster.PodAntiAffinity, testcluster.TopologySpreading, testcluster.PreferredPodAffinity, testcluster.Basic, "liked"}
	shape := func(name, s string) *v1.Pod {
		if s != "liked" {
			return testcluster.Pod(name, s)
		}
		p := testcluster.Pod(name, testcluster.Basic)
		p.Labels = map[string]string{"app": testcluster.PreferredPodAffinity}
		return p
	}
	type step struct {
		pod *v1.Pod
		res *framework.Result
	}
	var steps []step
	for i := range 120 {
		// Runs of one shape, and shapes coming back after others.
		p := shape(fmt.Sprintf("new-%d", i), shapes[(i/3+i%2)%len(shapes)])
		res, err := c.Place(context.Background(), p)
		if err != nil {
			t.Fatalf("Place(%s): %v", p.Name, err)
		}
		steps = append(steps, step{p, res})
	}

	ref, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithObjects(objs...))
	if err != nil {
		t.Fatal(err)
	}
	placed := append([]*v1.Pod(nil), existing...)
	for i, s := range steps {
		want, err := ref.Schedule(context.Background(), s.pod, nodeinfo.Build(nodes, placed))
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		got, exp := scoresByNode(s.res), scoresByNode(want)
		if !maps.EqualFunc(got, exp, func(a, b framework.NodePluginScores) bool { return reflect.DeepEqual(a, b) }) {
			for name, w := range exp {
				if g := got[name]; !reflect.DeepEqual(g, w) {
					t.Fatalf("pod %d (%s): node %s scored %+v, a fresh count %+v", i, s.pod.Name, name, g, w)
				}
			}
			t.Fatalf("pod %d (%s): %d nodes scored, a fresh count scores %d", i, s.pod.Name, len(got), len(exp))
		}
		if top := got[s.res.SuggestedHost].TotalScore; top != maxTotal(want) {
			t.Fatalf("pod %d: chose %s with %d, the best total is %d", i, s.res.SuggestedHost, top, maxTotal(want))
		}
		placed = append(placed, on(s.pod.DeepCopy(), s.res.SuggestedHost))
	}
}

func scoresByNode(r *framework.Result) map[string]framework.NodePluginScores {
	out := map[string]framework.NodePluginScores{}
	for _, s := range r.NodeScores() {
		out[s.Name] = s
	}
	return out
}

func maxTotal(r *framework.Result) int64 {
	var top int64
	for _, s := range r.NodeScores() {
		top = max(top, s.TotalScore)
	}
	return top
}
