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
// and see every filter plugin reject a node. The affinity and spreading
// generators are checked whether or not [generateAffinityAndSpread] is
// on; with them, default spreading must also score some pod.
func TestGeneratedScenariosCoverEveryOutcome(t *testing.T) {
	t.Parallel()
	baseFilters := []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "NodeDeclaredFeatures", ""}
	const seeds = 400
	tests := []struct {
		name              string
		affinityAndSpread bool
		// minScored is how many scenarios upstream must score: required
		// pod affinity and spreading leave no node more often.
		minScored int
		filters   []string
		scores    []string
	}{
		{name: "base", minScored: seeds / 2, filters: baseFilters},
		{
			name:              "with affinity and spreading",
			affinityAndSpread: true,
			minScored:         seeds / 3,
			filters:           append(slices.Clone(baseFilters), "InterPodAffinity", "PodTopologySpread"),
			scores:            []string{"InterPodAffinity", "PodTopologySpread", "PodTopologySpread (default constraints)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var scored, single, unschedulable int
			rejections, scores := map[string]int{}, map[string]int{}
			for seed := range uint64(seeds) {
				s := generate(seed, tc.affinityAndSpread)
				res, err := upstream.RunScenario(context.Background(), s)
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
				scoredBy := map[string]bool{}
				for _, outcome := range res.Nodes {
					if !outcome.Feasible {
						rejections[outcome.Plugin]++
					}
					for plugin := range outcome.Scores {
						scoredBy[plugin] = true
					}
				}
				for plugin := range scoredBy {
					scores[plugin]++
				}
				// Only a Service or controller selecting the pod gives it
				// constraints then.
				if scoredBy["PodTopologySpread"] && len(s.Pod.Spec.TopologySpreadConstraints) == 0 {
					scores["PodTopologySpread (default constraints)"]++
				}
			}
			t.Logf("of %d scenarios: %d scored, %d placed without scoring, %d unschedulable; rejections by plugin: %v; scenarios scored by plugin: %v",
				seeds, scored, single, unschedulable, rejections, scores)
			if scored < tc.minScored || unschedulable < seeds/10 || single < seeds/50 {
				t.Errorf("outcomes are unbalanced: %d scored, %d single, %d unschedulable", scored, single, unschedulable)
			}
			for _, plugin := range tc.filters {
				if rejections[plugin] == 0 {
					t.Errorf("no node rejected by %q; rejections: %v", plugin, slices.Sorted(maps.Keys(rejections)))
				}
			}
			for _, plugin := range tc.scores {
				if scores[plugin] < seeds/50 {
					t.Errorf("%d scenarios scored by %q, want at least %d", scores[plugin], plugin, seeds/50)
				}
			}
		})
	}
}
