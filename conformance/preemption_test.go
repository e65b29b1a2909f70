package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/kubesched/kubesched/framework"
	kfwk "github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

var numPreemption = flag.Int("preemption-scenarios", envInt("KUBESCHED_PREEMPTION_SCENARIOS", 300),
	"how many generated preemption scenarios TestPreemption compares")

// TestPreemption runs generated preemption scenarios (priorities, full
// nodes, PodDisruptionBudgets, pending nominated pods, anti-affinity and
// spreading against the victims) through kubesched's default profile and
// upstream's scheduling cycle and PostFilter plugins, and requires the
// same FitError text, the same decision on the pod's nomination, a node
// upstream ranks best, and on it the same victims and PDB violations. A
// failing scenario is rerun alone with -run 'TestPreemption/seed=N$'.
func TestPreemption(t *testing.T) {
	var mu sync.Mutex
	counts := map[string]int{}
	failing := 0
	t.Run("group", func(t *testing.T) {
		for i := range *numPreemption {
			seed := 9000000 + *firstSeed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				// Odd seeds add everything else the generators make (pod
				// affinity, volumes, DRA objects) to the preemption
				// generators' scenarios; one seed in twenty has 101 to
				// 250 nodes instead of 1 to 30.
				s := generateWithPreemption(seed)
				switch {
				case seed%20 == 10:
					// Large enough for the dry run to stop early.
					s = generateLargeWithPreemption(seed)
				case seed%2 == 1:
					s = generate(seed, true)
					addVolumes(s)
					addDRA(s)
					addPreemption(s)
				}
				want, err := upstream.RunPreemption(context.Background(), s)
				if err != nil {
					t.Fatalf("oracle: %v", err)
				}
				diffs, err := comparePreemption(context.Background(), s, want)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, kind := range preemptionOutcomes(s, want) {
					counts[kind]++
				}
				if len(diffs) > 0 {
					failing++
					t.Errorf("%d disagreement(s) with kube-scheduler:\n%s", len(diffs), formatDiffs(diffs, 20))
				}
			})
		}
	})
	t.Logf("%d of %d scenarios disagree; outcomes: %v", failing, *numPreemption, counts)
	if *numPreemption >= 100 && counts["dry run stops early"] == 0 {
		t.Errorf("in no scenario did upstream's dry run stop early: the large scenarios no longer test it")
	}
}

// comparePreemption schedules s.Pod with kubesched as upstream did in
// want, and lists where the outcomes differ.
func comparePreemption(ctx context.Context, s *Scenario, want *PreemptionResult) ([]disagreement, error) {
	noms := framework.NewNominations()
	for _, pod := range append(slices.Clone(s.Pods), s.Pod) {
		if pod.Spec.NodeName == "" && pod.Status.NominatedNodeName != "" {
			noms.Add(pod, "")
		}
	}
	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100),
		framework.WithObjects(s.Objects...), framework.WithNominator(noms),
		framework.WithRandSource(rand.NewPCG(s.Seed, 1)))
	if err != nil {
		return nil, fmt.Errorf("DefaultFramework with the scenario's objects: %w", err)
	}
	got, err := fw.Schedule(ctx, s.Pod, nodeinfo.Build(s.Nodes, s.Pods))
	var diffs []disagreement
	add := func(kind, format string, args ...any) {
		diffs = append(diffs, disagreement{kind, fmt.Sprintf(format, args...)})
	}
	var fitErr *framework.FitError
	if !want.Tried {
		switch {
		case want.Cycle.NotTried != nil:
			var notTried *framework.NotTriedError
			if !errors.As(err, &notTried) {
				add("not-tried", "upstream does not try the pod, kubesched: %v", err)
			}
		case len(want.Cycle.Errors) > 0:
			if err == nil || errors.As(err, &fitErr) {
				add("error", "upstream failed (%q), kubesched: %v", want.Cycle.Errors, err)
			}
		case err != nil:
			add("fit-error", "upstream found %d feasible nodes, kubesched: %v", want.Cycle.FeasibleNodes, err)
		}
		return diffs, nil
	}
	if !errors.As(err, &fitErr) {
		add("fit-error", "upstream found no node, kubesched: result %v, error %v", got, err)
		return diffs, nil
	}
	if msg := fitErr.Error(); withoutNominee(msg) != withoutNominee(want.Message) {
		add("preemption-message", "\n      got  %q\n      want %q", msg, want.Message)
	}
	pre := fitErr.Preemption
	switch {
	case want.NominatingMode == fwk.ModeOverride && want.NominatedNodeName != "":
		if pre == nil {
			add("preemption-node", "upstream nominates %s, kubesched does not preempt", want.NominatedNodeName)
			break
		}
		comparePreemptionDecision(want, pre, add)
	case want.NominatingMode == fwk.ModeOverride:
		if pre != nil || !fitErr.ClearNomination {
			add("preemption-node", "upstream clears the nomination, kubesched: preemption %v, clear %v", describePreemption(pre), fitErr.ClearNomination)
		}
	default:
		if pre != nil || fitErr.ClearNomination {
			add("preemption-node", "upstream leaves the nomination, kubesched: preemption %v, clear %v", describePreemption(pre), fitErr.ClearNomination)
		}
	}
	return diffs, nil
}

// comparePreemptionDecision checks kubesched's chosen node and victims
// against upstream's full dry run. kubesched's dry run walks the
// scenario's nodes in order, from a random offset.
func comparePreemptionDecision(want *PreemptionResult, pre *kfwk.Preemption, add func(kind, format string, args ...any)) {
	best := want.BestCandidates
	switch {
	case want.ClockDependent:
		// Which victims are reprieved depends on the clock: kubesched's
		// node must at least be a candidate.
		best = nil
		for _, c := range want.Candidates {
			best = append(best, c.Node)
		}
	case want.Partial:
		// The dry run stops early, from an offset it drew.
		best = want.PartialChoices
	}
	if !slices.Contains(best, pre.NominatedNodeName) {
		add("preemption-node", "kubesched nominates %s, upstream's best candidates are %v", pre.NominatedNodeName, best)
		return
	}
	c := want.candidate(pre.NominatedNodeName)
	if int64(pre.NumPDBViolations) != c.NumPDBViolations {
		add("preemption-pdb", "on %s: %d PDB violations, upstream %d", pre.NominatedNodeName, pre.NumPDBViolations, c.NumPDBViolations)
	}
	if want.ClockDependent {
		return
	}
	if got := podNames(pre.Victims); !slices.Equal(got, c.Victims) {
		add("preemption-victims", "on %s:\n      got  %v\n      want %v", pre.NominatedNodeName, got, c.Victims)
	}
}

func podNames(pods []*v1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}

func describePreemption(p *kfwk.Preemption) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%s evicting %v", p.NominatedNodeName, podNames(p.Victims))
}
