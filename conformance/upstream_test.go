package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/testcluster"
)

// newTestUpstream builds an Upstream closed when the test ends.
func newTestUpstream(t *testing.T, percentage *int32) *Upstream {
	t.Helper()
	u, err := NewUpstream(percentage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	return u
}

func TestUpstreamPlacesPodsOnTheOraclesTopNodes(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	for _, tc := range []struct {
		name     string
		workload string
	}{
		{name: "a plain pod lands on a top-scoring node", workload: testcluster.Basic},
		{name: "a pod with node affinity lands in a required zone", workload: testcluster.NodeAffinity},
		{name: "a pod tolerating some taints avoids the others", workload: testcluster.Taints},
		{name: "a spreading pod lands where the oracle would put it", workload: testcluster.TopologySpreading},
		{name: "an anti-affine pod avoids its kind", workload: testcluster.PodAntiAffinity},
		{name: "a pod preferring its kind joins it", workload: testcluster.PreferredPodAffinity},
		{name: "a DaemonSet pod lands on its pinned node", workload: testcluster.Pinned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := NewPerfWorkload(tc.workload, 20, 10)
			want, err := testOracle.Run(ctx, w.Nodes, w.Pods, w.Pod)
			if err != nil {
				t.Fatal(err)
			}
			u := newTestUpstream(t, ptr.To[int32](100))
			if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
				t.Fatal(err)
			}
			// Several times, so that the rotating start node and the
			// scheduler's state kept between calls are exercised.
			for range 3 {
				got, err := u.Schedule(ctx, w.Pod)
				if err != nil {
					t.Fatalf("upstream: %v", err)
				}
				if !slices.Contains(want.TopNodes, got.SuggestedHost) {
					t.Errorf("upstream chose %q, want one of the oracle's %v", got.SuggestedHost, want.TopNodes)
				}
				if got.FeasibleNodes != want.FeasibleNodes || got.EvaluatedNodes != want.EvaluatedNodes {
					t.Errorf("upstream found %d feasible of %d evaluated, the oracle %d of %d",
						got.FeasibleNodes, got.EvaluatedNodes, want.FeasibleNodes, want.EvaluatedNodes)
				}
			}
			if tc.workload == testcluster.Pinned && !slices.Equal(want.TopNodes, []string{testcluster.PinnedNode}) {
				t.Errorf("the oracle's top nodes are %v, want the pinned node alone", want.TopNodes)
			}
		})
	}
}

func TestUpstreamFailsWithTheOraclesFitError(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	nodes := testcluster.Nodes(20, testcluster.Taints)
	pods := testcluster.ExistingPods(10, nodes, testcluster.Basic)
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{name: "a pod asking for more CPU than any node has", pod: podRequesting("big", 64000)},
		{name: "a pod pinned to a node that does not exist", pod: withMatchFieldsName(podRequesting("lost", 100), "node-99999")},
		{name: "a pod pinned to a tainted node", pod: withMatchFieldsName(podRequesting("tainted", 100), testcluster.PinnedNode)},
		{name: "a pod a PreFilter plugin rejects outright", pod: withConflictingMatchFields(podRequesting("torn", 100), "node-00001", "node-00002")},
		{name: "a pod requiring a zone no node is in", pod: func() *v1.Pod {
			p := podRequesting("zoneless", 100)
			p.Spec.NodeSelector = map[string]string{testcluster.ZoneLabel: "zone-9"}
			return p
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			want, err := testOracle.Run(ctx, nodes, pods, tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			if want.FitErrorMessage == "" {
				t.Fatalf("the oracle placed the pod on %v", want.TopNodes)
			}
			u := newTestUpstream(t, ptr.To[int32](100))
			if err := u.SetCluster(nodes, pods); err != nil {
				t.Fatal(err)
			}
			got, err := u.Schedule(ctx, tc.pod)
			var fitErr *schedframework.FitError
			if !errors.As(err, &fitErr) {
				t.Fatalf("upstream returned %+v, %v; want a *FitError", got, err)
			}
			if err.Error() != want.FitErrorMessage {
				t.Errorf("upstream's error is\n\t%s\nthe oracle's\n\t%s", err, want.FitErrorMessage)
			}
		})
	}
}

func TestUpstreamSearchesAsFarAsThePercentageSays(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	for _, tc := range []struct {
		name       string
		percentage *int32
		nodes      int
		// wantEvaluated is also how many are feasible: every node fits.
		wantEvaluated int
	}{
		{name: "every node is searched at 100 percent", percentage: ptr.To[int32](100), nodes: 500, wantEvaluated: 500},
		// 50% less one per 125 nodes: 46% of 500.
		{name: "the adaptive percentage stops early in a large cluster", percentage: nil, nodes: 500, wantEvaluated: 230},
		{name: "the adaptive percentage searches a small cluster whole", percentage: nil, nodes: 60, wantEvaluated: 60},
		{name: "at least 100 nodes are searched whatever the percentage", percentage: ptr.To[int32](1), nodes: 500, wantEvaluated: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := NewPerfWorkload(testcluster.Basic, tc.nodes, tc.nodes/5)
			u := newTestUpstream(t, tc.percentage)
			if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				got, err := u.Schedule(ctx, w.Pod)
				if err != nil {
					t.Fatal(err)
				}
				if got.EvaluatedNodes != tc.wantEvaluated || got.FeasibleNodes != tc.wantEvaluated {
					t.Errorf("%d feasible of %d evaluated, want %d of %d", got.FeasibleNodes, got.EvaluatedNodes, tc.wantEvaluated, tc.wantEvaluated)
				}
			}
		})
	}
}

func TestUpstreamSetClusterReplacesTheCluster(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		install func(u *Upstream) error
		want    func(t *testing.T, got scheduler.ScheduleResult, err error)
	}{
		{name: "a smaller cluster leaves none of the larger one's nodes",
			install: func(u *Upstream) error {
				w := NewPerfWorkload(testcluster.Basic, 30, 30)
				if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
					return err
				}
				w = NewPerfWorkload(testcluster.Basic, 5, 5)
				return u.SetCluster(w.Nodes, w.Pods)
			},
			want: func(t *testing.T, got scheduler.ScheduleResult, err error) {
				if err != nil || got.EvaluatedNodes != 5 {
					t.Errorf("got %+v, %v; want 5 nodes evaluated", got, err)
				}
			}},
		{name: "an empty cluster has no nodes available",
			install: func(u *Upstream) error {
				w := NewPerfWorkload(testcluster.Basic, 10, 3)
				if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
					return err
				}
				return u.SetCluster(nil, nil)
			},
			want: func(t *testing.T, got scheduler.ScheduleResult, err error) {
				if !errors.Is(err, scheduler.ErrNoNodesAvailable) {
					t.Errorf("got %+v, %v; want %v", got, err, scheduler.ErrNoNodesAvailable)
				}
			}},
		{name: "pods bound to unknown nodes are left out",
			install: func(u *Upstream) error {
				w := NewPerfWorkload(testcluster.Basic, 3, 3)
				stray := testcluster.Pod("stray", testcluster.Basic)
				stray.Spec.NodeName = "node-elsewhere"
				return u.SetCluster(w.Nodes, append(w.Pods, stray))
			},
			want: func(t *testing.T, got scheduler.ScheduleResult, err error) {
				if err != nil || got.EvaluatedNodes != 3 {
					t.Errorf("got %+v, %v; want 3 nodes evaluated", got, err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newTestUpstream(t, ptr.To[int32](100))
			if err := tc.install(u); err != nil {
				t.Fatal(err)
			}
			got, err := u.Schedule(ctx, testcluster.Pod("incoming", testcluster.Basic))
			tc.want(t, got, err)
		})
	}
}

// TestUpstreamAgreesWithTheOracleOnDRAScenarios checks the oracle's DRA
// manager against the one scheduler.New builds: on 40 or so DRA scenarios
// (until one ends in a plugin error) whose pod has claims or asks for
// extended resources DeviceClasses back,
// upstream's own scheduler, given the scenario's objects,
// fails with the oracle's FitError or one of its plugin errors, or finds
// as many feasible nodes as the oracle and places the pod on one of them.
// Not necessarily on a top node: the scheduler's cache keeps the size of
// an image as the first node reporting it gave it, and generated nodes
// report one image with different sizes, which cache.NewSnapshot, and so
// the oracle's ImageLocality, takes from each node. Each scenario gets a
// scheduler of its own, so that none inherits another's extended resource
// mapping.
func TestUpstreamAgreesWithTheOracleOnDRAScenarios(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	checked := map[string]int{}
	for seed := uint64(0); seed < 500 && (checked["scenarios"] < 40 || checked["errors"] == 0); seed++ {
		s := generate(seed, false)
		addDRA(s)
		if len(s.Pod.Spec.ResourceClaims) == 0 && len(backedRequests(s)) == 0 {
			continue
		}
		checked["scenarios"]++
		want, err := testOracle.RunScenario(ctx, s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		u := newTestUpstream(t, ptr.To[int32](100))
		if err := u.SetObjects(ctx, s.Objects); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := u.SetCluster(s.Nodes, s.Pods); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got, err := u.Schedule(ctx, s.Pod)
		u.Close()
		var fitErr *schedframework.FitError
		switch {
		case want.NotTried != nil:
			// Upstream's SchedulePod has no queue in front of it: the
			// claim PreEnqueue found missing fails PreFilter the same way.
			checked["not tried"]++
			if wantMsg := fmt.Sprintf("0/%d nodes are available: %s.", len(s.Nodes), want.NotTried.Message); !errors.As(err, &fitErr) || err.Error() != wantMsg {
				t.Errorf("seed %d: upstream returned %q, %v; the oracle's PreEnqueue refused the pod with %q", seed, got.SuggestedHost, err, want.NotTried.Message)
			}
		case len(want.Errors) > 0:
			checked["errors"]++
			if err == nil || errors.As(err, &fitErr) || !slices.Contains(want.Errors, err.Error()) {
				t.Errorf("seed %d: upstream returned %q, %v; the oracle failed with one of %q", seed, got.SuggestedHost, err, want.Errors)
			}
		case want.FitErrorMessage != "":
			checked["unschedulable"]++
			if !errors.As(err, &fitErr) || err.Error() != want.FitErrorMessage {
				t.Errorf("seed %d: upstream returned %q, %v; the oracle's FitError is %q", seed, got.SuggestedHost, err, want.FitErrorMessage)
			}
		default:
			checked["placed"]++
			if err != nil || !want.Nodes[got.SuggestedHost].Feasible || got.FeasibleNodes != want.FeasibleNodes || got.EvaluatedNodes != want.EvaluatedNodes {
				t.Errorf("seed %d: upstream returned %+v, %v; the oracle found %d of %d evaluated nodes feasible, the best %v",
					seed, got, err, want.FeasibleNodes, want.EvaluatedNodes, want.TopNodes)
			}
		}
	}
	t.Logf("checked: %v", checked)
	for _, kind := range []string{"errors", "unschedulable", "placed"} {
		if checked[kind] == 0 {
			t.Errorf("no scenario checked was %s", kind)
		}
	}
}
