package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/testcluster"
)

// nodeNames returns the names of nodes, in order.
func nodeNames(nodes []*v1.Node) []string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return names
}

func TestUpstreamFirstFit(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	// Six empty nodes of 4 CPU, which a test changes before installing.
	for _, tc := range []struct {
		name string
		// change, when set, changes the nodes; running are bound pods.
		change  func(nodes []*v1.Node)
		running []*v1.Pod
		pod     *v1.Pod
		start   int
		// wantNode and wantIndex are the node chosen and its index; an
		// empty wantNode means no node fits.
		wantNode  string
		wantIndex int
	}{
		{name: "the search starts at the node it is told to", pod: podRequesting("p", 100), start: 3,
			wantNode: "node-00003", wantIndex: 3},
		{name: "a node that does not fit is passed over for the next", pod: podRequesting("p", 1000), start: 3,
			running: []*v1.Pod{boundTo(podRequesting("full", 3500), "node-00003")}, wantNode: "node-00004", wantIndex: 4},
		{name: "the search wraps round past the last node", pod: podRequesting("p", 1000), start: 5,
			running: []*v1.Pod{boundTo(podRequesting("full", 3500), "node-00005")}, wantNode: "node-00000", wantIndex: 0},
		{name: "a pod a PreFilterResult narrows to one node lands there from any start",
			pod: withMatchFieldsName(podRequesting("p", 100), "node-00001"), start: 2, wantNode: "node-00001", wantIndex: 1},
		{name: "an unschedulable node is passed over even by a pod that tolerates it",
			change: func(nodes []*v1.Node) { nodes[2].Spec.Unschedulable = true },
			pod: func() *v1.Pod {
				p := podRequesting("p", 100)
				p.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
				return p
			}(),
			start: 2, wantNode: "node-00003", wantIndex: 3},
		{name: "a pod too big for any node fits nowhere", pod: podRequesting("p", 64000), start: 0},
		{name: "a pod a PreFilter plugin rejects fits nowhere",
			pod: withConflictingMatchFields(podRequesting("p", 100), "node-00001", "node-00002"), start: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			nodes := testcluster.Nodes(6, testcluster.Basic)
			if tc.change != nil {
				tc.change(nodes)
			}
			u := newTestUpstream(t, nil)
			if err := u.SetCluster(nodes, tc.running); err != nil {
				t.Fatal(err)
			}
			got, index, err := u.FirstFit(ctx, tc.pod, nodeNames(nodes), tc.start)
			if tc.wantNode == "" {
				if !errors.Is(err, ErrNoNodeFits) {
					t.Fatalf("got %q (%d), %v; want ErrNoNodeFits", got, index, err)
				}
				return
			}
			if err != nil || got != tc.wantNode || index != tc.wantIndex {
				t.Fatalf("got %q (%d), %v; want %q (%d)", got, index, err, tc.wantNode, tc.wantIndex)
			}
		})
	}
}

func TestUpstreamFirstFitCommitsEachPlacement(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	nodes := testcluster.Nodes(3, testcluster.Basic)
	u := newTestUpstream(t, nil)
	if err := u.SetCluster(nodes, nil); err != nil {
		t.Fatal(err)
	}
	order := nodeNames(nodes)
	// Pods of 3 CPU, one per node: each search must see the ones before
	// and start past the last node chosen.
	start := 1
	for i, want := range []string{"node-00001", "node-00002", "node-00000"} {
		got, index, err := u.FirstFit(ctx, podRequesting(fmt.Sprintf("pod-%d", i), 3000), order, start)
		if err != nil || got != want {
			t.Fatalf("pod %d: got %q, %v; want %q", i, got, err, want)
		}
		start = (index + 1) % len(order)
	}
	if got, _, err := u.FirstFit(ctx, podRequesting("d", 3000), order, start); !errors.Is(err, ErrNoNodeFits) {
		t.Fatalf("a fourth pod got %q, %v; want ErrNoNodeFits", got, err)
	}
	if err := u.Unbind(); err != nil {
		t.Fatal(err)
	}
	if got, _, err := u.FirstFit(ctx, podRequesting("d", 3000), order, start); err != nil || got != order[start] {
		t.Fatalf("after Unbind, the fourth pod got %q, %v; want %q", got, err, order[start])
	}
}

func TestUpstreamBindPlaceAndUnbind(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	// Two nodes of 4 CPU; pods of 3 CPU fit one per node.
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, u *Upstream)
	}{
		{name: "a pod bound to a node takes its room from the next cycle on", run: func(t *testing.T, u *Upstream) {
			if err := u.Bind(podRequesting("a", 3000), "node-00000"); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if got, err := u.Schedule(ctx, podRequesting("b", 3000)); err != nil || got.SuggestedHost != "node-00001" {
					t.Fatalf("got %+v, %v; want node-00001", got, err)
				}
			}
		}},
		{name: "placed pods fill the cluster until the next fits nowhere", run: func(t *testing.T, u *Upstream) {
			var hosts []string
			for _, name := range []string{"a", "b"} {
				got, err := u.Place(ctx, podRequesting(name, 3000))
				if err != nil {
					t.Fatal(err)
				}
				hosts = append(hosts, got.SuggestedHost)
			}
			slices.Sort(hosts)
			if !slices.Equal(hosts, []string{"node-00000", "node-00001"}) {
				t.Errorf("pods placed on %v, want one on each node", hosts)
			}
			var fitErr *schedframework.FitError
			if got, err := u.Place(ctx, podRequesting("c", 3000)); !errors.As(err, &fitErr) {
				t.Errorf("a third pod got %+v, %v; want a FitError", got, err)
			}
		}},
		{name: "Unbind gives the cluster its room back", run: func(t *testing.T, u *Upstream) {
			for _, name := range []string{"a", "b"} {
				if _, err := u.Place(ctx, podRequesting(name, 3000)); err != nil {
					t.Fatal(err)
				}
			}
			if err := u.Unbind(); err != nil {
				t.Fatal(err)
			}
			v, err := u.Evaluate(ctx, podRequesting("c", 3000))
			if err != nil || !slices.Equal(v.Feasible, []string{"node-00000", "node-00001"}) {
				t.Errorf("got %+v, %v; want both nodes feasible", v, err)
			}
			// The pods can be placed again: the cache holds them no more.
			if _, err := u.Place(ctx, podRequesting("a", 3000)); err != nil {
				t.Error(err)
			}
		}},
		{name: "SetCluster drops the pods bound to the cluster it replaces", run: func(t *testing.T, u *Upstream) {
			if err := u.Bind(podRequesting("a", 3000), "node-00000"); err != nil {
				t.Fatal(err)
			}
			if err := u.SetCluster(testcluster.Nodes(2, testcluster.Basic), nil); err != nil {
				t.Fatal(err)
			}
			v, err := u.Evaluate(ctx, podRequesting("b", 3000))
			if err != nil || len(v.Feasible) != 2 {
				t.Errorf("got %+v, %v; want both nodes feasible", v, err)
			}
		}},
		{name: "a pod cannot be bound to a node the cluster lacks", run: func(t *testing.T, u *Upstream) {
			if err := u.Bind(podRequesting("a", 100), "node-elsewhere"); err == nil {
				t.Error("Bind succeeded")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newTestUpstream(t, ptr.To[int32](100))
			if err := u.SetCluster(testcluster.Nodes(2, testcluster.Basic), nil); err != nil {
				t.Fatal(err)
			}
			tc.run(t, u)
		})
	}
}

// TestUpstreamEvaluateAgreesWithTheOracleAsPodsAreBound places a small
// Mix workload's pending pods one after another on upstream, each on one
// of its best nodes, and asks the oracle about each with the pods bound
// so far: upstream's feasible and best nodes must be the oracle's, as
// both come from one cycle over the same cluster, read from the
// scheduler's incrementally refreshed snapshot on one side and from a
// snapshot built afresh on the other.
func TestUpstreamEvaluateAgreesWithTheOracleAsPodsAreBound(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	w := NewSimWorkload(SimMix, 12, 24, 16)
	u := newTestUpstream(t, nil)
	if err := u.SetObjects(ctx, w.Objects); err != nil {
		t.Fatal(err)
	}
	if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
		t.Fatal(err)
	}
	bound := slices.Clone(w.Pods)
	for _, pod := range w.Pending {
		got, err := u.Evaluate(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		want, err := testOracle.RunScenario(ctx, &Scenario{Nodes: w.Nodes, Pods: bound, Pod: pod, Objects: w.Objects})
		if err != nil {
			t.Fatal(err)
		}
		var wantFeasible []string
		for name, outcome := range want.Nodes {
			if outcome.Feasible {
				wantFeasible = append(wantFeasible, name)
			}
		}
		slices.Sort(wantFeasible)
		if !slices.Equal(got.Feasible, wantFeasible) || !slices.Equal(got.Best, want.TopNodes) {
			t.Fatalf("%s: upstream's feasible nodes %v, best %v; the oracle's %v, %v", pod.Name, got.Feasible, got.Best, wantFeasible, want.TopNodes)
		}
		if len(got.Best) == 0 {
			t.Fatalf("%s fits nowhere", pod.Name)
		}
		// The last of the best, so that ties are not always broken alike.
		node := got.Best[len(got.Best)-1]
		if err := u.Bind(pod, node); err != nil {
			t.Fatal(err)
		}
		placed := pod.DeepCopy()
		placed.Spec.NodeName = node
		bound = append(bound, placed)
	}
}
