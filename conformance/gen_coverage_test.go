package conformance

import (
	"context"
	"maps"
	"slices"
	"testing"
)

// TestGeneratedScenariosCoverEveryOutcome guards the generator against
// drifting into scenarios that test little: across a few hundred seeds,
// upstream must place pods with and without scoring, fail to place some,
// and see every filter plugin reject a node.
func TestGeneratedScenariosCoverEveryOutcome(t *testing.T) {
	t.Parallel()
	const seeds = 400
	var scored, single, unschedulable int
	rejections := map[string]int{}
	for seed := range uint64(seeds) {
		s := Generate(seed)
		res, err := testOracle.Run(context.Background(), s.Nodes, s.Pods, s.Pod)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		switch {
		case res.Scored:
			scored++
		case res.FitErrorMessage != "":
			unschedulable++
		default:
			single++
		}
		for _, outcome := range res.Nodes {
			if !outcome.Feasible {
				rejections[outcome.Plugin]++
			}
		}
	}
	t.Logf("of %d scenarios: %d scored, %d placed without scoring, %d unschedulable; rejections by plugin: %v",
		seeds, scored, single, unschedulable, rejections)
	if scored < seeds/2 || unschedulable < seeds/10 || single < seeds/50 {
		t.Errorf("outcomes are unbalanced: %d scored, %d single, %d unschedulable", scored, single, unschedulable)
	}
	for _, plugin := range []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", ""} {
		if rejections[plugin] == 0 {
			t.Errorf("no node rejected by %q; rejections: %v", plugin, slices.Sorted(maps.Keys(rejections)))
		}
	}
}
