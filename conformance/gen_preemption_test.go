package conformance

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// generateWithPreemption is [generate] without affinity, volumes or DRA,
// and with the preemption generators on, whatever the switches say: the
// preemption generators' own anti-affinity and spreading are what make
// RemovePod matter.
func generateWithPreemption(seed uint64) *Scenario {
	s := generate(seed, false)
	addPreemption(s)
	return s
}

// generateLargeWithPreemption is [crowdedWithPreemption] with 151 to 300
// nodes: more potential nodes than the 100 candidates DefaultPreemption's
// dry run looks for, so that it stops early.
func generateLargeWithPreemption(seed uint64) *Scenario {
	return crowdedWithPreemption(seed, 151+int(seed%150))
}

// crowdedWithPreemption is generateWithPreemption with numNodes nodes (0:
// as many as generate gives), crowded so that preemption can help on
// most of them. Nine nodes in ten lose their taints and unschedulable
// mark, the pod its node affinity and selector; it gets priority 1000
// and asks for 500m to 3 CPU and nothing else; filler pods take every
// node's cpu; and every running pod has a start time.
func crowdedWithPreemption(seed uint64, numNodes int) *Scenario {
	s := generateSized(seed, false, numNodes)
	r := rand.New(rand.NewPCG(seed, 0x1a29e))
	for _, n := range s.Nodes {
		if r.IntN(10) > 0 {
			n.Spec.Taints, n.Spec.Unschedulable = nil, false
		}
	}
	s.Pod.Spec.NodeSelector = nil
	if a := s.Pod.Spec.Affinity; a != nil {
		a.NodeAffinity = nil
	}
	addPreemption(s)
	p := s.Pod
	p.Spec.Priority, p.Spec.PreemptionPolicy = ptrTo(int32(1000)), nil
	// Only cpu: a node with less of another resource than the pod asks
	// for rejects it as unresolvable.
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			for _, list := range []v1.ResourceList{cs[i].Resources.Requests, cs[i].Resources.Limits} {
				for name := range list {
					if name != v1.ResourceCPU {
						delete(list, name)
					}
				}
			}
		}
	}
	p.Spec.Overhead = nil
	c := &p.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	c.Resources.Requests[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(500*(1+r.IntN(6))), resource.DecimalSI)
	if c.Resources.Limits != nil {
		c.Resources.Limits[v1.ResourceCPU] = c.Resources.Requests[v1.ResourceCPU]
	}
	filled := map[string]bool{}
	for _, pod := range s.Pods {
		if strings.HasPrefix(pod.Name, "filler-") {
			filled[pod.Spec.NodeName] = true
		}
		// Victims' order must not depend on the clock, or any candidate
		// would do (ClockDependent).
		if pod.Status.StartTime == nil {
			pod.Status.StartTime = &metav1.Time{Time: podsStarted.Add(time.Duration(r.IntN(3)) * time.Hour)}
		}
	}
	for _, n := range s.Nodes {
		if !filled[n.Name] {
			s.Pods = append(s.Pods, fillers(n, 1+r.IntN(3), pick(&generator{r: r}, priorities[:6]), pick(&generator{r: r}, apps))...)
		}
	}
	return s
}

// TestPreemptionScenariosCoverPreemption guards the preemption generators
// against drifting into scenarios that test little. It runs only the
// preemption oracle, over a couple of hundred scenarios whatever
// KUBESCHED_GEN_PREEMPTION says: upstream must nominate a node, find no
// candidate, refuse a pod that may not preempt, count PDB violations and
// choose among tied nodes, in a fair share of them.
func TestPreemptionScenariosCoverPreemption(t *testing.T) {
	t.Parallel()
	const seeds = 200
	counts := map[string]int{}
	for seed := range uint64(seeds) {
		s := generateWithPreemption(seed)
		res, err := upstream.RunPreemption(context.Background(), s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, kind := range preemptionOutcomes(s, res) {
			counts[kind]++
		}
	}
	t.Logf("over %d scenarios: %v", seeds, counts)
	for kind, least := range map[string]int{
		"pod fits":                       seeds / 20,
		"node nominated":                 seeds / 10,
		"no candidate":                   seeds / 10,
		"not eligible":                   2,
		"candidate violates a budget":    seeds / 20,
		"best avoids a budget violation": 2,
		"candidates tie":                 seeds / 20,
		"several victims":                seeds / 20,
		"budgets":                        seeds / 3,
		"pending nominated pod":          seeds / 10,
	} {
		if counts[kind] < least {
			t.Errorf("%q in %d of %d scenarios, want at least %d", kind, counts[kind], seeds, least)
		}
	}
}

// preemptionOutcomes names what a preemption scenario exercised.
func preemptionOutcomes(s *Scenario, res *PreemptionResult) []string {
	var kinds []string
	for _, obj := range s.Objects {
		if _, ok := obj.(*policyv1.PodDisruptionBudget); ok {
			kinds = append(kinds, "budgets")
			break
		}
	}
	for _, p := range s.Pods {
		if p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" {
			kinds = append(kinds, "pending nominated pod")
			break
		}
	}
	if !res.Tried {
		if res.Cycle.FeasibleNodes > 0 {
			kinds = append(kinds, "pod fits")
		}
		return kinds
	}
	switch {
	case res.NominatedNodeName != "":
		kinds = append(kinds, "node nominated")
	case strings.Contains(res.PostFilterMessage, "not eligible"):
		kinds = append(kinds, "not eligible")
	case res.NominatingMode == fwk.ModeOverride:
		// The nomination is cleared.
		kinds = append(kinds, "no candidate")
	case res.PostFilterCode == fwk.Error:
		kinds = append(kinds, "error")
	}
	if res.ClockDependent {
		kinds = append(kinds, "clock dependent")
	}
	if res.Partial && len(res.Candidates) >= res.CandidatesWanted {
		kinds = append(kinds, "dry run stops early")
	}
	violating, several := false, false
	for _, c := range res.Candidates {
		violating = violating || c.NumPDBViolations > 0
		several = several || len(c.Victims) > 1
	}
	if violating {
		kinds = append(kinds, "candidate violates a budget")
		if len(res.BestCandidates) > 0 && res.candidate(res.BestCandidates[0]).NumPDBViolations == 0 {
			kinds = append(kinds, "best avoids a budget violation")
		}
	}
	if several {
		kinds = append(kinds, "several victims")
	}
	if len(res.BestCandidates) > 1 {
		kinds = append(kinds, "candidates tie")
	}
	return kinds
}

// candidate returns the candidate on node, or the zero candidate.
func (r *PreemptionResult) candidate(node string) PreemptionCandidate {
	for _, c := range r.Candidates {
		if c.Node == node {
			return c
		}
	}
	return PreemptionCandidate{}
}

// TestPreemptionScenariosRoundTrip: a preemption scenario, its budgets,
// priorities, start times and pending pods, survives the YAML of a
// reproduction.
func TestPreemptionScenariosRoundTrip(t *testing.T) {
	t.Parallel()
	for seed := range uint64(30) {
		s := generateWithPreemption(seed)
		data, err := MarshalScenario(s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		back, err := ParseScenario(data)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, data)
		}
		back.Seed = s.Seed
		if !equality.Semantic.DeepEqual(s, back) {
			t.Errorf("seed %d: the scenario changed in a YAML round trip:\n%s", seed, data)
		}
	}
}

// TestPreemptionOracleRunsAreRepeatable: what a run's preemption wrote to
// the fake API server (victims deleted, their status patched,
// nominations cleared) is undone for the next run, so a scenario run
// again after others gets the same answer, but for upstream's random
// choice among tied candidates.
func TestPreemptionOracleRunsAreRepeatable(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	p := testPreemptionOracle(t)
	ctx := context.Background()
	const seeds = 30
	first := make([]*PreemptionResult, seeds)
	for round := range 2 {
		for seed := range uint64(seeds) {
			res, err := p.RunScenario(ctx, generateWithPreemption(seed))
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if len(res.BestCandidates) > 1 {
				res.NominatedNodeName = ""
				res.Message, res.PostFilterMessage = withoutNominee(res.Message), withoutNominee(res.PostFilterMessage)
			}
			// Upstream's candidates, kept for partialChoices, are
			// compared through Candidates.
			res.dryRun = nil
			if round == 0 {
				first[seed] = res
				continue
			}
			if !equality.Semantic.DeepEqual(first[seed], res) && !res.ClockDependent {
				t.Errorf("seed %d: a second run gave\n%+v\nthe first\n%+v", seed, res, first[seed])
			}
		}
	}
}
