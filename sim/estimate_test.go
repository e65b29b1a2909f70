package sim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/sim"
)

// replicas are n pods of one ReplicaSet, each requesting cpu.
func replicas(prefix string, n int, cpu string) []*v1.Pod {
	yes := true
	var out []*v1.Pod
	for i := range n {
		p := pod(fmt.Sprintf("%s-%d", prefix, i), cpu)
		p.Labels = map[string]string{"app": prefix}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: prefix, UID: types.UID("rs-" + prefix), Controller: &yes}}
		out = append(out, p)
	}
	return out
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	daemon := pod("agent", "1")
	template := sim.Template{Node: node("pool", "4"), DaemonSetPods: []*v1.Pod{daemon}}
	antiAffine := replicas("spread", 3, "100m")
	for _, p := range antiAffine {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
		}}}}
	}
	tests := []struct {
		name      string
		tmpl      sim.Template
		pods      []*v1.Pod
		opts      []sim.EstimateOption
		wantCount int
		// want is each pod's node as an index into the new nodes, -1
		// for none.
		want []int
	}{
		{name: "ten one-cpu replicas need four nodes beside the DaemonSet pod", tmpl: template, pods: replicas("web", 10, "1"),
			wantCount: 4, want: []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 3}},
		{name: "MaxNodes stops adding nodes", tmpl: template, pods: replicas("web", 10, "1"), opts: []sim.EstimateOption{sim.MaxNodes(2)},
			wantCount: 2, want: []int{0, 0, 0, 1, 1, 1, -1, -1, -1, -1}},
		{name: "a pod larger than the template needs no node", tmpl: template, pods: []*v1.Pod{pod("huge", "8")},
			wantCount: 0, want: []int{-1}},
		{name: "larger pods go first", tmpl: sim.Template{Node: node("pool", "4")}, pods: []*v1.Pod{pod("small", "2"), pod("big-1", "3"), pod("big-2", "3")},
			wantCount: 3, want: []int{2, 0, 1}},
		{name: "required anti-affinity takes a node per replica", tmpl: template, pods: antiAffine,
			wantCount: 3, want: []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, []*v1.Node{node("existing", "1")}, []*v1.Pod{on(pod("running", "1"), "existing")})
			before := layout(c.Nodes())
			est, err := c.Estimate(context.Background(), tc.tmpl, tc.pods, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, node := range est.Placements {
				got = append(got, slices.Index(est.Nodes, node))
			}
			if est.NodeCount != tc.wantCount || !slices.Equal(got, tc.want) {
				t.Errorf("Estimate = %d nodes %v, placements %v; want %d nodes, placements %v", est.NodeCount, est.Nodes, got, tc.wantCount, tc.want)
			}
			for _, name := range est.Nodes {
				if !strings.HasPrefix(name, tc.tmpl.Node.Name+"-estimate-") {
					t.Errorf("new node %q is not named after the template", name)
				}
			}
			if after := layout(c.Nodes()); after != before || c.Forks() != 0 {
				t.Errorf("Estimate left the cluster as %s with %d forks, want %s", after, c.Forks(), before)
			}
		})
	}
}

func TestEstimateRefusesBadInput(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "1")}, nil)
	for name, call := range map[string]func() error{
		"no template node": func() error { _, err := c.Estimate(context.Background(), sim.Template{}, nil); return err },
		"a nil pod": func() error {
			_, err := c.Estimate(context.Background(), sim.Template{Node: node("t", "1")}, []*v1.Pod{nil})
			return err
		},
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
