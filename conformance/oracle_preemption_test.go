package conformance

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// preemptionOracle is built once, by the first test that needs it, and
// shared: its runs are serialised.
var preemptionOracle = sync.OnceValues(NewPreemptionOracle)

func testPreemptionOracle(t *testing.T) *PreemptionOracle {
	t.Helper()
	p, err := preemptionOracle()
	if err != nil {
		t.Fatalf("building the preemption oracle: %v", err)
	}
	return p
}

// started is when the generated and hand-built pods started, unless a
// test says otherwise.
var started = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func withPriority(p *v1.Pod, priority int32) *v1.Pod {
	p.Spec.Priority = &priority
	return p
}

func withStartTime(p *v1.Pod, t time.Time) *v1.Pod {
	p.Status.StartTime = &metav1.Time{Time: t}
	return p
}

func withLabel(p *v1.Pod, key, value string) *v1.Pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[key] = value
	return p
}

func neverPreempting(p *v1.Pod) *v1.Pod {
	never := v1.PreemptNever
	p.Spec.PreemptionPolicy = &never
	return p
}

// running is a pod of priority bound to nodeName, started at started.
func running(name, nodeName string, milliCPU int64, priority int32) *v1.Pod {
	return withStartTime(withPriority(boundTo(podRequesting(name, milliCPU), nodeName), priority), started)
}

// terminating marks p as being deleted by an earlier preemption.
func terminating(p *v1.Pod) *v1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: started.Add(time.Hour)}
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler,
	})
	return p
}

func pdb(name, app string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	b := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	if len(disrupted) > 0 {
		b.Status.DisruptedPods = map[string]metav1.Time{}
		for _, name := range disrupted {
			b.Status.DisruptedPods[name] = metav1.Time{Time: started}
		}
	}
	return b
}

// TestPreemptionOracle pins down what the preemption oracle reports for
// hand-built clusters whose upstream outcome follows from
// DefaultPreemption's rules, so that a later comparison with kubesched's
// preemption can trust it.
func TestPreemptionOracle(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	tests := []struct {
		name    string
		nodes   []*v1.Node
		pods    []*v1.Pod
		objects []runtime.Object
		pod     *v1.Pod
		want    PreemptionResult
	}{
		{
			name:  "a priority-1000 pod takes a node full of priority-0 pods, evicting only what it needs",
			nodes: []*v1.Node{node("n1", 1000)},
			pods: []*v1.Pod{
				running("a", "n1", 400, 0),
				running("b", "n1", 400, 0),
				withStartTime(running("c", "n1", 200, 0), started.Add(time.Hour)),
			},
			pod: withPriority(podRequesting("incoming", 500), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 2 victims",
				PostFilterMessage: "preemption: found a potential placement for pod on node n1, preempting 2 victims",
				PostFilterCode:    fwk.Success,
				NominatingMode:    fwk.ModeOverride,
				NominatedNodeName: "n1",
				PotentialNodes:    []string{"n1"},
				CandidatesWanted:  1,
				Candidates:        []PreemptionCandidate{{Node: "n1", Victims: []string{"default/b", "default/c"}}},
				NotCandidates:     map[string]NodeOutcome{},
				BestCandidates:    []string{"n1"},
			},
		},
		{
			name:  "a pod with preemptionPolicy Never is not eligible, and its nomination is left alone",
			nodes: []*v1.Node{node("n1", 1000)},
			pods:  []*v1.Pod{running("a", "n1", 800, 0)},
			pod:   neverPreempting(withPriority(podRequesting("incoming", 500), 1000)),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
				PostFilterCode:    fwk.Unschedulable,
				PostFilterMessage: "preemption: not eligible due to preemptionPolicy=Never.",
				PostFilterPlugin:  "DynamicResources",
			},
		},
		{
			name:  "a pod nominated to a node where a victim of its earlier preemption is still terminating waits",
			nodes: []*v1.Node{node("n1", 1000)},
			pods:  []*v1.Pod{terminating(running("a", "n1", 800, 0))},
			pod:   nominatedTo(withPriority(podRequesting("incoming", 500), 1000), "n1"),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.",
				PostFilterCode:    fwk.Unschedulable,
				PostFilterMessage: "preemption: not eligible due to a terminating pod on the nominated node.",
				PostFilterPlugin:  "DynamicResources",
			},
		},
		{
			name:  "a pod whose priority is not above any running pod's finds no victims",
			nodes: []*v1.Node{node("n1", 1000)},
			pods:  []*v1.Pod{running("a", "n1", 800, 1000), running("b", "n1", 100, 2000)},
			pod:   withPriority(podRequesting("incoming", 500), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
				PostFilterCode:    fwk.Unschedulable,
				PostFilterMessage: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
				PostFilterPlugin:  "DynamicResources",
				NominatingMode:    fwk.ModeOverride,
				PotentialNodes:    []string{"n1"},
				CandidatesWanted:  1,
				NotCandidates: map[string]NodeOutcome{"n1": {
					Code: "UnschedulableAndUnresolvable", Reasons: []string{"No preemption victims found for incoming pod"},
				}},
			},
		},
		{
			name:  "nodes that reject the pod for good, or where evicting every lower-priority pod is not enough, make preemption not helpful",
			nodes: []*v1.Node{node("tainted", 4000, dedicated), node("small", 2000)},
			pods:  []*v1.Pod{running("a", "small", 800, 2000), running("b", "small", 200, 0)},
			pod:   withPriority(podRequesting("incoming", 1500), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
				PostFilterCode:    fwk.Unschedulable,
				PostFilterMessage: "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
				PostFilterPlugin:  "DynamicResources",
				NominatingMode:    fwk.ModeOverride,
				PotentialNodes:    []string{"small"},
				CandidatesWanted:  1,
				NotCandidates: map[string]NodeOutcome{"small": {
					Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient cpu"},
				}},
			},
		},
		{
			name:  "only nodes that no eviction helps is preemption not helpful on every node",
			nodes: []*v1.Node{node("n1", 4000, dedicated), node("n2", 4000, dedicated)},
			pod:   withPriority(podRequesting("incoming", 500), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/2 nodes are available: 2 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
				PostFilterCode:    fwk.Unschedulable,
				PostFilterMessage: "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
				PostFilterPlugin:  "DynamicResources",
				NominatingMode:    fwk.ModeOverride,
			},
		},
		{
			// DynamicResources' PostFilter reads the state its PreFilter
			// writes, but an UnschedulableAndUnresolvable PreFilter ends
			// the PreFilters before it: the error's text, "not found", ends
			// the event, and DefaultPreemption never runs.
			name:  "a pod that a PreFilter rejects for good fails DynamicResources' PostFilter with an error",
			nodes: []*v1.Node{node("n1", 1000)},
			pods:  []*v1.Pod{running("a", "n1", 800, 0)},
			pod:   withConflictingMatchFields(withPriority(podRequesting("incoming", 500), 1000), "n1", "n2"),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: pod affinity terms conflict. not found",
				PostFilterCode:    fwk.Error,
				PostFilterMessage: "not found",
				PostFilterPlugin:  "DynamicResources",
			},
		},
		{
			name:  "a budget that allows no disruption makes its pod a violation, and the node without one is preferred",
			nodes: []*v1.Node{node("n1", 1000), node("n2", 1000)},
			pods: []*v1.Pod{
				withLabel(running("web", "n1", 800, 0), "app", "web"),
				withLabel(running("batch", "n2", 800, 0), "app", "batch"),
			},
			objects: []runtime.Object{pdb("web", "web", 0)},
			pod:     withPriority(podRequesting("incoming", 500), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n2, preempting 1 victims",
				PostFilterMessage: "preemption: found a potential placement for pod on node n2, preempting 1 victims",
				PostFilterCode:    fwk.Success,
				NominatingMode:    fwk.ModeOverride,
				NominatedNodeName: "n2",
				PotentialNodes:    []string{"n1", "n2"},
				CandidatesWanted:  2,
				Candidates: []PreemptionCandidate{
					{Node: "n1", Victims: []string{"default/web"}, NumPDBViolations: 1},
					{Node: "n2", Victims: []string{"default/batch"}},
				},
				NotCandidates:  map[string]NodeOutcome{},
				BestCandidates: []string{"n2"},
			},
		},
		{
			name:  "a budget that allows a disruption, or already counts the pod as disrupted, is no violation, and the nodes tie",
			nodes: []*v1.Node{node("n1", 1000), node("n2", 1000)},
			pods: []*v1.Pod{
				withLabel(running("web", "n1", 800, 0), "app", "web"),
				withLabel(running("batch", "n2", 800, 0), "app", "batch"),
			},
			objects: []runtime.Object{pdb("web", "web", 1), pdb("batch", "batch", 0, "batch")},
			pod:     withPriority(podRequesting("incoming", 500), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node <node>, preempting 1 victims",
				PostFilterMessage: "preemption: found a potential placement for pod on node <node>, preempting 1 victims",
				PostFilterCode:    fwk.Success,
				NominatingMode:    fwk.ModeOverride,
				PotentialNodes:    []string{"n1", "n2"},
				CandidatesWanted:  2,
				Candidates: []PreemptionCandidate{
					{Node: "n1", Victims: []string{"default/web"}},
					{Node: "n2", Victims: []string{"default/batch"}},
				},
				NotCandidates:  map[string]NodeOutcome{},
				BestCandidates: []string{"n1", "n2"},
			},
		},
		{
			name:  "the node whose most important victim has the lower priority is preferred over one with fewer victims",
			nodes: []*v1.Node{node("n1", 1000), node("n2", 1000)},
			pods: []*v1.Pod{
				running("a", "n1", 800, 10),
				running("b", "n2", 400, 5),
				running("c", "n2", 400, 5),
			},
			pod: withPriority(podRequesting("incoming", 900), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n2, preempting 2 victims",
				PostFilterMessage: "preemption: found a potential placement for pod on node n2, preempting 2 victims",
				PostFilterCode:    fwk.Success,
				NominatingMode:    fwk.ModeOverride,
				NominatedNodeName: "n2",
				PotentialNodes:    []string{"n1", "n2"},
				CandidatesWanted:  2,
				Candidates: []PreemptionCandidate{
					{Node: "n1", Victims: []string{"default/a"}},
					{Node: "n2", Victims: []string{"default/b", "default/c"}},
				},
				NotCandidates:  map[string]NodeOutcome{},
				BestCandidates: []string{"n2"},
			},
		},
		{
			name:  "a pending pod of higher priority nominated to the node keeps its room, so evicting is not enough",
			nodes: []*v1.Node{node("n1", 1000)},
			pods: []*v1.Pod{
				running("a", "n1", 500, 0),
				nominatedTo(withPriority(podRequesting("pending", 500), 2000), "n1"),
			},
			pod: withPriority(podRequesting("incoming", 600), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu.",
				PostFilterCode:    fwk.Unschedulable,
				PostFilterMessage: "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
				PostFilterPlugin:  "DynamicResources",
				NominatingMode:    fwk.ModeOverride,
				PotentialNodes:    []string{"n1"},
				CandidatesWanted:  1,
				NotCandidates: map[string]NodeOutcome{"n1": {
					Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient cpu"},
				}},
			},
		},
		{
			name:  "equal-priority victims without a start time make the victims' order depend on the clock",
			nodes: []*v1.Node{node("n1", 1000)},
			pods: []*v1.Pod{
				withPriority(boundTo(podRequesting("a", 500), "n1"), 0),
				withPriority(boundTo(podRequesting("b", 500), "n1"), 0),
			},
			pod: withPriority(podRequesting("incoming", 1000), 1000),
			want: PreemptionResult{
				Tried:             true,
				Message:           "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 2 victims",
				PostFilterMessage: "preemption: found a potential placement for pod on node n1, preempting 2 victims",
				PostFilterCode:    fwk.Success,
				NominatingMode:    fwk.ModeOverride,
				NominatedNodeName: "n1",
				PotentialNodes:    []string{"n1"},
				CandidatesWanted:  1,
				Candidates:        []PreemptionCandidate{{Node: "n1", Victims: []string{"default/a", "default/b"}}},
				NotCandidates:     map[string]NodeOutcome{},
				BestCandidates:    []string{"n1"},
				ClockDependent:    true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Scenario{Nodes: tt.nodes, Pods: tt.pods, Pod: tt.pod, Objects: tt.objects}
			got, err := testPreemptionOracle(t).RunScenario(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			got.Cycle = nil
			// Upstream picks among equally good candidates at random.
			if len(tt.want.BestCandidates) > 1 && tt.want.NominatedNodeName == "" {
				if !slices.Contains(tt.want.BestCandidates, got.NominatedNodeName) {
					t.Errorf("upstream nominated %q, want one of %v", got.NominatedNodeName, tt.want.BestCandidates)
				}
				got.NominatedNodeName = ""
				got.Message, got.PostFilterMessage = withoutNominee(got.Message), withoutNominee(got.PostFilterMessage)
			}
			// Both victims go, in an order the clock decides.
			if tt.want.ClockDependent {
				for i := range got.Candidates {
					slices.Sort(got.Candidates[i].Victims)
				}
			}
			got.dryRun = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", *got, tt.want)
			}
		})
	}
}

// TestPreemptionOracleRunsAScenarioAfterOneThatDeallocatedAClaim runs,
// on one oracle, a scenario in which upstream's DynamicResources
// PostFilter deallocates ResourceClaim team-b/incoming-claim-0-4wk7s, then
// the one TestPreemption runs after it when it failed: the DRA manager's
// view of the claim, which the next run waits for, must follow the
// deallocation (see [versioningTracker]).
func TestPreemptionOracleRunsAScenarioAfterOneThatDeallocatedAClaim(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	p, err := NewPreemptionOracle()
	if err != nil {
		t.Fatalf("building the preemption oracle: %v", err)
	}
	defer p.Close()
	// As TestPreemption builds odd and even seeds.
	deallocating := generate(9000053, true)
	addVolumes(deallocating)
	addDRA(deallocating)
	addPreemption(deallocating)
	next := generateWithPreemption(9000052)

	ctx := context.Background()
	res, err := p.RunScenario(ctx, deallocating)
	if err != nil {
		t.Fatalf("seed %d: %v", deallocating.Seed, err)
	}
	if want := "deallocation of ResourceClaim completed"; res.PostFilterPlugin != names.DynamicResources || !strings.HasPrefix(res.PostFilterMessage, want) {
		t.Fatalf("seed %d: PostFilter's %s says %q, want DynamicResources' %q: the scenario no longer tests a deallocation", deallocating.Seed, res.PostFilterPlugin, res.PostFilterMessage, want)
	}
	// The next install waits for this, between its writes, whichever of
	// them it makes first.
	objects := p.oracle.objects
	if err := objects.waitForInformers(ctx, objects.installed); err != nil {
		t.Errorf("after seed %d: %v", deallocating.Seed, err)
	}
	if _, err := p.RunScenario(ctx, next); err != nil {
		t.Errorf("seed %d after seed %d: %v", next.Seed, deallocating.Seed, err)
	}
}

// fakeCandidate is a node where evicting one pod of priority makes room.
type fakeCandidate struct {
	name       string
	priority   int32
	violations int64
}

func (c fakeCandidate) Name() string { return c.name }

// NumPodGroupDisruptions is 0: no victim belongs to a pod group.
func (c fakeCandidate) NumPodGroupDisruptions() int { return 0 }

func (c fakeCandidate) Victims() *extenderv1.Victims {
	victim := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name + "-victim"}, Spec: v1.PodSpec{Priority: &c.priority}}
	victim.Status.StartTime = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return &extenderv1.Victims{Pods: []*v1.Pod{victim}, NumPDBViolations: c.violations}
}

func TestPartialChoicesAreTheBestOfEveryStretchADryRunStoppingEarlyTakes(t *testing.T) {
	t.Parallel()
	// a, c and d are candidates; d evicts the least important pod, c
	// violates a budget; b and e are potential nodes without victims, x
	// is no potential node.
	res := &PreemptionResult{
		PotentialNodes:   []string{"a", "b", "c", "d", "e"},
		CandidatesWanted: 2,
		Partial:          true,
		dryRun: map[string]preemption.Candidate{
			"a": fakeCandidate{name: "a", priority: 5},
			"c": fakeCandidate{name: "c", priority: 1, violations: 1},
			"d": fakeCandidate{name: "d", priority: 1},
		},
	}
	for _, tc := range []struct {
		name  string
		order []string
		want  []string
	}{
		{
			// From a: a and c, a wins (no violation). From b or c: c and
			// d, d wins. From d: d and a, d wins. From e: a and c.
			name:  "in the order a to e, c is never best and a and d are",
			order: []string{"a", "b", "x", "c", "d", "e"},
			want:  []string{"a", "d"},
		},
		{
			// From a: a and d, d wins. From d: d and c, d wins. From c:
			// c and a, where the run stops, before d: a wins.
			name:  "in the order a, d, c, the stretch from c stops before d",
			order: []string{"a", "d", "c"},
			want:  []string{"a", "d"},
		},
		{
			name:  "with only violating candidates met first, the run goes on to one without",
			order: []string{"c", "e", "d"},
			want:  []string{"d"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := res.partialChoices(tc.order); !slices.Equal(got, tc.want) {
				t.Errorf("partialChoices(%v) = %v, want %v", tc.order, got, tc.want)
			}
		})
	}
}
