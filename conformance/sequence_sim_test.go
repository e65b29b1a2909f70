package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

// simSequence is a cluster drawn as the generator draws one, with
// affinity, spreading and their objects, and pending pods to place one
// after another.
func simSequence(seed uint64, pending int) (*Scenario, []*v1.Pod) {
	g := &generator{r: rand.New(rand.NewPCG(seed, 0x5e9))}
	s := &Scenario{Seed: seed}
	for i := range 4 + g.r.IntN(12) {
		s.Nodes = append(s.Nodes, g.node(i))
	}
	for i := range g.r.IntN(len(s.Nodes) + 1) {
		p := g.pod(fmt.Sprintf("running-%d", i), 0.01)
		p.Spec.NodeName = g.pick(s.Nodes).Name
		s.Pods = append(s.Pods, p)
	}
	owners := g.workloadObjects(s)
	for _, p := range s.Pods {
		g.workload(p, owners, 0.3)
		g.podAffinity(p, 0.1, 0.1)
	}
	var pods []*v1.Pod
	for k := range pending {
		p := g.incomingPod(s.Nodes)
		p.Name, p.UID = fmt.Sprintf("pending-%d", k), types.UID(fmt.Sprintf("uid-pending-%d", k))
		g.workload(p, owners, 0.5)
		g.podAffinity(p, 0.1, 0.2)
		if g.chance(0.4) {
			p.Spec.TopologySpreadConstraints = g.spreadConstraints(p)
		}
		pods = append(pods, p)
	}
	return s, pods
}

// simCluster is s as a sim.Cluster of the default profile, every node
// scored as the oracle scores them, ties broken by a source seeded with
// s's seed.
func simCluster(t *testing.T, s *Scenario) *sim.Cluster {
	t.Helper()
	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithRandSource(rand.NewPCG(s.Seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.New(fw, s.Nodes, s.Pods, schedulingObjects(s.Objects)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSimPlacementsAgreeWithUpstream places pods one after another
// through sim.Cluster, and asks upstream about each on the same committed
// state (the pods placed so far): every decision must agree, the node
// kubesched chose being among upstream's best. Each sequence forks in the
// middle, places, commits an inner fork and reverts the outer one, and
// goes on from the reverted state.
func TestSimPlacementsAgreeWithUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const seeds, perSequence = 20, 40
	outcomes := map[string]int{}
	for seed := range uint64(seeds) {
		s, pending := simSequence(seed, perSequence)
		c := simCluster(t, s)
		bound := slices.Clone(s.Pods)
		var saved [][]*v1.Pod
		for i, pod := range pending {
			switch i {
			case perSequence / 4, perSequence / 3:
				c.Fork()
				saved = append(saved, slices.Clone(bound))
			case perSequence / 2:
				if err := c.Commit(); err != nil {
					t.Fatal(err)
				}
				saved = saved[:1]
			case 2 * perSequence / 3:
				if err := c.Revert(); err != nil {
					t.Fatal(err)
				}
				bound, saved = saved[0], nil
				outcomes["reverted"]++
			}
			step := &Scenario{Seed: seed, Nodes: s.Nodes, Pods: slices.Clone(bound), Pod: pod, Objects: s.Objects}
			want, err := upstream.RunScenario(ctx, step)
			if err != nil {
				t.Fatalf("seed %d, %s: oracle: %v", seed, pod.Name, err)
			}
			got, err := c.Place(ctx, pod)
			if diffs := diffResults(step, want, got, err); len(diffs) > 0 {
				t.Fatalf("seed %d, %s (after %d bound): %d disagreement(s) with kube-scheduler:\n%s",
					seed, pod.Name, len(bound), len(diffs), formatDiffs(diffs, 20))
			}
			if placed := countPlacement(t, c, outcomes, pod, got, err); placed != nil {
				bound = append(bound, placed)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["placed"] < seeds*perSequence/4 || outcomes["unschedulable"] < seeds || outcomes["reverted"] != seeds {
		t.Errorf("outcomes %v: want many placements, some pods that fit nowhere, and every sequence reverted", outcomes)
	}
}

// TestSimFirstFitAgreesWithUpstream places pods one after another with
// sim.Cluster.PlaceFirstFit, cluster-autoscaler's search, and checks
// each choice against upstream's filters on the same committed state:
// the node chosen is the first, in the cluster's order from just past
// the previous choice, that upstream finds feasible; and a pod that fits
// nowhere for upstream fits nowhere for kubesched.
func TestSimFirstFitAgreesWithUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const seeds, perSequence = 20, 30
	outcomes := map[string]int{}
	for seed := range uint64(seeds) {
		s, pending := simSequence(seed+1000, perSequence)
		c := simCluster(t, s)
		bound := slices.Clone(s.Pods)
		next := 0
		for _, pod := range pending {
			// cluster-autoscaler's search does not try a nominated node
			// first, as kube-scheduler's cycle does: without one, upstream
			// judges every node.
			pod.Status.NominatedNodeName = ""
			step := &Scenario{Seed: seed, Nodes: s.Nodes, Pods: slices.Clone(bound), Pod: pod, Objects: s.Objects}
			want, err := upstream.RunScenario(ctx, step)
			if err != nil {
				t.Fatalf("seed %d, %s: oracle: %v", seed, pod.Name, err)
			}
			first := -1
			for k := range s.Nodes {
				i := (next + k) % len(s.Nodes)
				if want.Nodes[s.Nodes[i].Name].Feasible {
					first = i
					break
				}
			}
			got, err := c.PlaceFirstFit(ctx, pod)
			switch {
			case want.NotTried != nil || len(want.Errors) > 0:
				if err == nil {
					t.Fatalf("seed %d, %s: placed on %s; upstream does not place it: %+v", seed, pod.Name, got, want)
				}
				outcomes["not placed"]++
			case first < 0:
				if !errors.Is(err, sim.ErrNoNodeFits) {
					t.Fatalf("seed %d, %s: got %q, %v; upstream finds no feasible node (%s)", seed, pod.Name, got, err, want.FitErrorMessage)
				}
				outcomes["unschedulable"]++
			case err != nil || got != s.Nodes[first].Name:
				t.Fatalf("seed %d, %s: first fit from %s chose %q (%v); upstream's first feasible node is %s", seed, pod.Name, s.Nodes[next].Name, got, err, s.Nodes[first].Name)
			default:
				outcomes["placed"]++
				next = (first + 1) % len(s.Nodes)
				placed, _ := c.Pod(pod.Namespace, pod.Name)
				bound = append(bound, placed)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["placed"] < seeds*perSequence/4 || outcomes["unschedulable"] < seeds {
		t.Errorf("outcomes %v: want many placements and some pods that fit nowhere", outcomes)
	}
}

// countPlacement counts the outcome of placing pod on c (res, err) in
// outcomes and returns the pod as the cluster holds it once placed, nil
// when it was not; it fails t when a placement is not in the cluster.
func countPlacement(t *testing.T, c *sim.Cluster, outcomes map[string]int, pod *v1.Pod, res *framework.Result, err error) *v1.Pod {
	t.Helper()
	var fitErr *framework.FitError
	switch {
	case errors.As(err, &fitErr):
		outcomes["unschedulable"]++
	case err != nil:
		outcomes["error"]++
	default:
		outcomes["placed"]++
		placed, ok := c.Pod(pod.Namespace, pod.Name)
		if !ok || placed.Spec.NodeName != res.SuggestedHost {
			t.Fatalf("%s: placed on %s, but the cluster holds %v", pod.Name, res.SuggestedHost, placed)
		}
		return placed
	}
	return nil
}
