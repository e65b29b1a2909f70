package kubesched_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestDefaultFrameworkHasUpstreamsPluginsAndWeights(t *testing.T) {
	t.Parallel()
	f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}
	pod := testcluster.Pod("p", testcluster.NodeAffinity)
	pod.Spec.Tolerations = []v1.Toleration{{Key: "spot", Operator: v1.TolerationOpExists}}
	nodes := testcluster.Nodes(6, testcluster.Basic)
	res, err := f.Schedule(context.Background(), pod, nodeinfo.Build(nodes, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.NodeScores()[0].Scores {
		got = append(got, s.Name)
	}
	want := "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding DynamicResources NodeResourcesBalancedAllocation ImageLocality"
	if strings.Join(got, " ") != want {
		t.Errorf("scored by %v, want %s", got, want)
	}
	// Weights: an untainted node gets TaintToleration 100*3; a zone-1 node
	// matches the only preferred term, 100*2.
	for _, ns := range res.NodeScores() {
		if ns.Scores[0].Score != 300 {
			t.Errorf("%s TaintToleration = %d, want 300", ns.Name, ns.Scores[0].Score)
		}
		wantAffinity := int64(0)
		if ns.Name == "node-00001" || ns.Name == "node-00004" {
			wantAffinity = 200
		}
		if ns.Scores[1].Score != wantAffinity {
			t.Errorf("%s NodeAffinity = %d, want %d", ns.Name, ns.Scores[1].Score, wantAffinity)
		}
	}
}

func TestScheduleOnBadInputReturnsAnErrorOrAReason(t *testing.T) {
	t.Parallel()
	node := func(name string, alloc v1.ResourceList) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: alloc}}
	}
	ok := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("10")}
	requiring := func(op v1.NodeSelectorOperator, values ...string) *v1.Pod {
		p := testcluster.Pod("p", testcluster.Basic)
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gen", Operator: op, Values: values}}}}}}}
		return p
	}
	preferring := func(op v1.NodeSelectorOperator, values ...string) *v1.Pod {
		p := testcluster.Pod("p", testcluster.Basic)
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
			Weight: 1, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gen", Operator: op, Values: values}}}}}}}
		return p
	}
	tests := []struct {
		name    string
		pod     *v1.Pod
		nodes   []*nodeinfo.NodeInfo
		wantErr string // a plain error containing this
		wantFit string // or a FitError with exactly this message
	}{
		{name: "a nil pod", pod: nil, nodes: nodeinfo.Build([]*v1.Node{node("a", ok)}, nil), wantErr: "nil pod"},
		{name: "an empty node list", pod: testcluster.Pod("p", testcluster.Basic), wantErr: "no nodes available"},
		{name: "duplicate node names", pod: testcluster.Pod("p", testcluster.Basic),
			nodes: nodeinfo.Build([]*v1.Node{node("a", ok), node("a", ok)}, nil), wantErr: "more than once"},
		{name: "a nil node", pod: testcluster.Pod("p", testcluster.Basic), nodes: nodeinfo.Build([]*v1.Node{nil}, nil), wantErr: "no Node object"},
		{name: "a required Gt with a non-integer value matches no node", pod: requiring(v1.NodeSelectorOpGt, "four"),
			nodes:   nodeinfo.Build([]*v1.Node{node("a", ok)}, nil),
			wantFit: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{name: "a required unknown operator matches no node", pod: requiring("Near", "4"),
			nodes:   nodeinfo.Build([]*v1.Node{node("a", ok)}, nil),
			wantFit: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{name: "a preferred Lt with two values fails the attempt, as upstream's PreScore does", pod: preferring(v1.NodeSelectorOpLt, "1", "2"),
			nodes:   nodeinfo.Build([]*v1.Node{node("a", ok), node("b", ok)}, nil),
			wantErr: `PreScore plugin "NodeAffinity"`},
		{name: "nodes with zero or missing allocatable are rejected for resources", pod: testcluster.Pod("p", testcluster.Basic),
			nodes:   nodeinfo.Build([]*v1.Node{node("zero", v1.ResourceList{v1.ResourceCPU: resource.MustParse("0"), v1.ResourcePods: resource.MustParse("0")}), node("missing", nil)}, nil),
			wantFit: "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory, 2 Too many pods. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := kubesched.Schedule(context.Background(), tc.pod, tc.nodes)
			var fitErr *framework.FitError
			switch {
			case tc.wantFit != "":
				if !errors.As(err, &fitErr) || err.Error() != tc.wantFit {
					t.Fatalf("err = %v, want FitError %q", err, tc.wantFit)
				}
			case err == nil || errors.As(err, &fitErr) || !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("err = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestConcurrentSchedulesWithTheDefaultFramework(t *testing.T) {
	t.Parallel()
	nodes := testcluster.Nodes(300, testcluster.Taints)
	infos := nodeinfo.Build(nodes, testcluster.ExistingPods(60, nodes, testcluster.Basic))
	var wg sync.WaitGroup
	for _, w := range testcluster.Workloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := testcluster.Pod("p-"+w, w)
			if w == testcluster.Pinned {
				// The pinned node is one of the Taints cluster's
				// NoSchedule-tainted nodes.
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule})
			}
			for range 10 {
				res, err := kubesched.Schedule(context.Background(), pod, infos)
				if w == testcluster.DRA {
					// The shared framework knows no ResourceClaims, so
					// DynamicResources' PreEnqueue turns the pod down.
					var notTried *framework.NotTriedError
					if want := `could not find ResourceClaim "default/p-DRA-gpu"`; !errors.As(err, &notTried) || notTried.Plugin != "DynamicResources" || err.Error() != want {
						t.Errorf("%s: err = %v, want DynamicResources' %s", w, err, want)
						return
					}
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if res.SuggestedHost == "" || w == testcluster.Pinned && res.SuggestedHost != testcluster.PinnedNode {
					t.Errorf("%s: suggested host %q", w, res.SuggestedHost)
					return
				}
			}
		}()
	}
	wg.Wait()
}
