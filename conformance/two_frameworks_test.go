package conformance

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

// TestTwoFrameworksInOneProcessShareNothing places the same pending pods
// through two simulated clusters at once, one on the default profile and
// one on a generated configuration (other scoring strategies, spreading
// defaults, affinity weights, plugins disabled), alternating pod by pod.
// Each framework remembers verdicts, scores and per-domain counts between
// placements; were any of it shared between the two, one cluster's
// placements would leak into the other's decisions. Every decision of
// each must agree with upstream's for its own profile, on its own
// committed state.
func TestTwoFrameworksInOneProcessShareNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const seeds, perSequence = 12, 30
	outcomes := map[string]int{}
	compared := 0
	for seed := range uint64(seeds) {
		data := generateSchedulingConfig(rand.New(rand.NewPCG(seed, 0x2f2)))
		cfg, err := ours.LoadConfig(data)
		if err != nil {
			t.Fatalf("config %d: LoadConfig: %v\n%s", seed, err, data)
		}
		s, pending := simSequence(100+seed, perSequence)
		fws, err := ours.FrameworksFromConfig(cfg, framework.WithRandSource(rand.NewPCG(seed, 2)))
		if isPluginInit(err) {
			outcomes["config refused"]++
			continue
		}
		if err != nil {
			t.Fatalf("config %d: FrameworksFromConfig: %v\n%s", seed, err, data)
		}
		configured, err := sim.New(fws["configured"], s.Nodes, s.Pods, schedulingObjects(s.Objects)...)
		if err != nil {
			t.Fatal(err)
		}
		clusters := []struct {
			name  string
			c     *sim.Cluster
			bound []*v1.Pod
			judge func(*Scenario) (*OracleResult, error)
		}{
			{"default profile", simCluster(t, s), slices.Clone(s.Pods), func(step *Scenario) (*OracleResult, error) {
				return upstream.RunScenario(ctx, step)
			}},
			{"configured profile", configured, slices.Clone(s.Pods), func(step *Scenario) (*OracleResult, error) {
				return upstream.RunConfigured(ctx, data, step)
			}},
		}
		for _, pod := range pending {
			for i := range clusters {
				cl := &clusters[i]
				step := &Scenario{Seed: s.Seed, Nodes: s.Nodes, Pods: slices.Clone(cl.bound), Pod: pod, Objects: s.Objects}
				want, err := cl.judge(step)
				if err != nil {
					t.Fatalf("seed %d, %s, %s: oracle: %v", seed, cl.name, pod.Name, err)
				}
				got, err := cl.c.Place(ctx, pod.DeepCopy())
				if diffs := diffResults(step, want, got, err); len(diffs) > 0 {
					t.Fatalf("seed %d, %s, %s (after %d bound): %d disagreement(s) with kube-scheduler:\n%s\nconfig:\n%s",
						seed, cl.name, pod.Name, len(cl.bound), len(diffs), formatDiffs(diffs, 20), data)
				}
				compared++
				if placed := countPlacement(t, cl.c, outcomes, pod, got, err); placed != nil {
					cl.bound = append(cl.bound, placed)
				}
			}
		}
	}
	t.Logf("%d decisions compared; outcomes: %v", compared, outcomes)
	if compared < seeds*perSequence || outcomes["placed"] < compared/4 {
		t.Errorf("%d decisions compared, outcomes %v: want most sequences run and many placements", compared, outcomes)
	}
}
