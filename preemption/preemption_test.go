package preemption_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/preemption"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func labelled(p *v1.Pod, app string) *v1.Pod {
	p.Labels = map[string]string{"app": app}
	return p
}

func budget(name, app string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	b := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	if len(disrupted) > 0 {
		b.Status.DisruptedPods = map[string]metav1.Time{}
		for _, d := range disrupted {
			b.Status.DisruptedPods[d] = metav1.Time{Time: t0}
		}
	}
	return b
}

// schedule runs the default profile, with objs and a seeded random
// source, and returns the FitError.
func schedule(t *testing.T, p *v1.Pod, nodes []*v1.Node, pods []*v1.Pod, objs []runtime.Object, opts ...framework.Option) *framework.FitError {
	t.Helper()
	opts = append([]framework.Option{framework.WithObjects(objs...), framework.WithRandSource(rand.NewPCG(1, 2))}, opts...)
	fw, err := kubesched.DefaultFramework(opts...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fw.Schedule(context.Background(), p, nodeinfo.Build(nodes, pods))
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("Schedule: %v, want a FitError", err)
	}
	return fitErr
}

func names(pods []*v1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func TestDefaultPreemptionDecides(t *testing.T) {
	never := v1.PreemptNever
	withoutPriority := pod("old", "a", "4", 0, t0)
	withoutPriority.Spec.Priority = nil
	terminating := pod("leaving", "a", "2", 0, t0)
	terminating.DeletionTimestamp = &metav1.Time{Time: t0}
	terminating.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
	nominatedToA := pod("critical", "", "3", 1000, t0)
	nominatedToA.Status.NominatedNodeName = "a"
	badSelector := budget("bad", "web", 0)
	badSelector.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}

	withSelector := func(sel *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
		b := budget("web", "web", 0)
		b.Spec.Selector = sel
		return b
	}
	otherNamespace := budget("web", "web", 0)
	otherNamespace.Namespace = "elsewhere"
	// budgeted is a case where web-1 on node a, of priority 0, is the
	// victim unless b protects it, and db-1 on b, of priority 500, is
	// then the victim instead.
	budgeted := func(name string, b *policyv1.PodDisruptionBudget, protects bool) decisionCase {
		c := decisionCase{
			name:     name,
			pod:      pod("critical", "", "3", 1000, t0),
			nodes:    []*v1.Node{node("a", "4"), node("b", "4")},
			pods:     []*v1.Pod{labelled(pod("web-1", "a", "4", 0, t0), "web"), labelled(pod("db-1", "b", "4", 500, t0), "db")},
			objs:     []runtime.Object{b},
			wantNode: "a", victims: "web-1",
			message: "0/2 nodes are available: 2 Insufficient cpu.",
		}
		if protects {
			c.wantNode, c.victims = "b", "db-1"
		}
		return c
	}

	for _, tc := range []decisionCase{
		budgeted("a node without budget violations wins over one with (a budget selecting by matchLabels)", budget("web", "web", 0), true),
		budgeted("a budget selecting by matchExpressions protects its pods", withSelector(&metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}},
		}), true),
		budgeted("a budget whose matchLabels the pod has only some of protects nothing", withSelector(&metav1.LabelSelector{
			MatchLabels: map[string]string{"app": "web", "tier": "front"},
		}), false),
		budgeted("a budget whose matchLabels want an empty value protects nothing when the label is missing", withSelector(&metav1.LabelSelector{
			MatchLabels: map[string]string{"tier": ""},
		}), false),
		budgeted("a budget without a selector protects nothing", withSelector(nil), false),
		budgeted("a budget with an empty selector protects nothing", withSelector(&metav1.LabelSelector{}), false),
		budgeted("a budget in another namespace protects nothing", otherNamespace, false),
		{
			name:  "a pod with preemptionPolicy Never does not preempt",
			pod:   func() *v1.Pod { p := pod("critical", "", "3", 1000, t0); p.Spec.PreemptionPolicy = &never; return p }(),
			nodes: []*v1.Node{node("a", "4")}, pods: []*v1.Pod{pod("low", "a", "2", 0, t0)},
			message: "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:  "a pod whose nominated node still has a victim terminating waits",
			pod:   nominatedToA,
			nodes: []*v1.Node{node("a", "4")}, pods: []*v1.Pod{terminating, pod("low", "a", "2", 0, t0)},
			message: "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.",
		},
		{
			name:  "pods of equal priority are no victims, and the nomination is cleared",
			pod:   pod("critical", "", "3", 0, t0),
			nodes: []*v1.Node{node("a", "4")}, pods: []*v1.Pod{pod("peer", "a", "2", 0, t0)},
			clear:   true,
			message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
		{
			name:  "a request above the node's allocatable is not helped by evictions",
			pod:   pod("huge", "", "8", 1000, t0),
			nodes: []*v1.Node{node("a", "4")}, pods: []*v1.Pod{pod("low", "a", "2", 0, t0)},
			clear:   true,
			message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a pod without priority counts as priority 0 and is evicted",
			pod:   pod("critical", "", "3", 1, t0),
			nodes: []*v1.Node{node("a", "4")}, pods: []*v1.Pod{withoutPriority},
			wantNode: "a", victims: "old",
			message: "0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name:     "the most important pods are reprieved first",
			pod:      pod("critical", "", "2", 1000, t0),
			nodes:    []*v1.Node{node("a", "4")},
			pods:     []*v1.Pod{pod("mid", "a", "2", 500, t0), pod("low", "a", "2", 0, t0)},
			wantNode: "a", victims: "low",
			message: "0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name:     "a pod the budget already counts as disrupted is no violation",
			pod:      pod("critical", "", "3", 1000, t0),
			nodes:    []*v1.Node{node("a", "4"), node("b", "4")},
			pods:     []*v1.Pod{labelled(pod("web-1", "a", "4", 0, t0), "web"), labelled(pod("db-1", "b", "4", 500, t0), "db")},
			objs:     []runtime.Object{budget("web", "web", 0, "web-1")},
			wantNode: "a", victims: "web-1",
			message: "0/2 nodes are available: 2 Insufficient cpu.",
		},
		{
			name:  "when every node violates a budget the fewest violations win",
			pod:   pod("critical", "", "3", 1000, t0),
			nodes: []*v1.Node{node("a", "4"), node("b", "4")},
			pods: []*v1.Pod{
				labelled(pod("web-1", "a", "2", 0, t0), "web"), labelled(pod("web-2", "a", "2", 0, t0), "web"),
				labelled(pod("web-3", "b", "4", 0, t0), "web"),
			},
			objs:     []runtime.Object{budget("web", "web", 0)},
			wantNode: "b", victims: "web-3", violating: 1,
			message: "0/2 nodes are available: 2 Insufficient cpu.",
		},
		budgeted("a budget with an invalid selector protects nothing", badSelector, false),
		{
			name:     "among equal victims the node whose victims started last wins",
			pod:      pod("critical", "", "3", 1000, t0),
			nodes:    []*v1.Node{node("a", "4"), node("b", "4")},
			pods:     []*v1.Pod{pod("early", "a", "4", 0, t0), pod("late", "b", "4", 0, t0.Add(time.Hour))},
			wantNode: "b", victims: "late",
			message: "0/2 nodes are available: 2 Insufficient cpu.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := schedule(t, tc.pod, tc.nodes, tc.pods, tc.objs)
			want := tc.message
			if tc.wantNode != "" {
				// From v1.37 a preemption that found room says where.
				want += fmt.Sprintf(" preemption: found a potential placement for pod on node %s, preempting %d victims", tc.wantNode, len(strings.Split(tc.victims, ",")))
			}
			if got := fe.Error(); got != want {
				t.Errorf("message\n got  %q\n want %q", got, want)
			}
			if fe.ClearNomination != tc.clear {
				t.Errorf("ClearNomination = %v, want %v", fe.ClearNomination, tc.clear)
			}
			p := fe.Preemption
			switch {
			case tc.wantNode == "" && p != nil:
				t.Errorf("preemption on %s evicting %s, want none", p.NominatedNodeName, names(p.Victims))
			case tc.wantNode != "" && p == nil:
				t.Errorf("no preemption, want %s evicting %s", tc.wantNode, tc.victims)
			case p != nil:
				if p.NominatedNodeName != tc.wantNode || names(p.Victims) != tc.victims || p.NumPDBViolations != tc.violating {
					t.Errorf("preemption on %s evicting %s (%d violations), want %s evicting %s (%d)", p.NominatedNodeName, names(p.Victims), p.NumPDBViolations, tc.wantNode, tc.victims, tc.violating)
				}
			}
		})
	}
}

// decisionCase is a preemption scenario and the decision expected.
type decisionCase struct {
	name      string
	pod       *v1.Pod
	nodes     []*v1.Node
	pods      []*v1.Pod
	objs      []runtime.Object
	wantNode  string
	victims   string
	violating int
	clear     bool
	message   string
}

// fullCluster is n alike nodes, each full of priority-0 pods.
func fullCluster(n int) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("node-%03d", i)
		nodes = append(nodes, node(name, "4"))
		pods = append(pods, pod(name+"-a", name, "2", 0, t0), pod(name+"-b", name, "2", 0, t0))
	}
	return nodes, pods
}

// preemptWith schedules a 3-CPU pod of priority 1000 with NodeResourcesFit
// and a DefaultPreemption of args, a framework seeded with seed and of
// that parallelism, and returns the preemption decided.
func preemptWith(t *testing.T, args *configv1.DefaultPreemptionArgs, seed uint64, parallelism int, nodes []*v1.Node, pods []*v1.Pod) *fwk.Preemption {
	t.Helper()
	pl, err := preemption.NewDefaultPreemption(args)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := framework.New(framework.WithPlugin(&filter.NodeResourcesFit{}, 0), framework.WithPlugin(pl, 0),
		framework.WithRandSource(rand.NewPCG(seed, 0)), framework.WithParallelism(parallelism))
	if err != nil {
		t.Fatal(err)
	}
	_, err = fw.Schedule(context.Background(), pod("critical", "", "3", 1000, t0), nodeinfo.Build(nodes, pods))
	var fe *framework.FitError
	if !errors.As(err, &fe) || fe.Preemption == nil {
		t.Fatalf("seed %d, parallelism %d: %v, want a preemption", seed, parallelism, err)
	}
	return fe.Preemption
}

func TestASeededRandomSourceMakesTheChoiceReproducible(t *testing.T) {
	nodes, pods := fullCluster(300)
	chosen := map[string]bool{}
	for seed := range uint64(6) {
		var first string
		for _, parallelism := range []int{1, 2, 16} {
			// A dry run stopping after 5 of 300 candidates still chooses
			// the same node, however the goroutines share the work.
			got := preemptWith(t, &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(0), MinCandidateNodesAbsolute: i32(5)}, seed, parallelism, nodes, pods)
			if first == "" {
				first = got.NominatedNodeName
			} else if got.NominatedNodeName != first {
				t.Errorf("seed %d, parallelism %d: chose %s, with parallelism 1 %s", seed, parallelism, got.NominatedNodeName, first)
			}
		}
		chosen[first] = true
	}
	if len(chosen) < 2 {
		t.Errorf("six seeds all chose %v: the tie between alike nodes is not random", chosen)
	}
}

func TestTheDryRunFindsCandidatesScatteredOverALargeCluster(t *testing.T) {
	// 1000 nodes full of pods as important as the preemptor, and six
	// with a victim each, far apart: the dry run goes through many
	// windows of nodes and must carry what it found from one to the next.
	var nodes []*v1.Node
	var pods []*v1.Pod
	candidates := map[string]bool{}
	for i := range 1000 {
		name := fmt.Sprintf("node-%04d", i)
		nodes = append(nodes, node(name, "4"))
		if i%170 == 7 {
			candidates[name] = true
			// node-0517's victim started last: it is the best choice.
			started := t0.Add(time.Duration(i%3) * time.Minute)
			if i == 517 {
				started = t0.Add(time.Hour)
			}
			pods = append(pods, pod(name+"-low", name, "4", 0, started))
			continue
		}
		pods = append(pods, pod(name+"-peer", name, "4", 1000, t0))
	}
	for _, tc := range []struct {
		name      string
		absolute  int32
		wantFound int // candidates the dry run stops at
	}{
		{name: "looking for more candidates than there are, it tries every node and finds all six", absolute: 100, wantFound: 6},
		{name: "looking for two, it stops after the second", absolute: 2, wantFound: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(4) {
				var first string
				for _, parallelism := range []int{1, 2, 16} {
					got := preemptWith(t, &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(0), MinCandidateNodesAbsolute: i32(tc.absolute)}, seed, parallelism, nodes, pods).NominatedNodeName
					if !candidates[got] {
						t.Fatalf("seed %d, parallelism %d: chose %s, which has no victim", seed, parallelism, got)
					}
					if tc.wantFound == len(candidates) && got != "node-0517" {
						t.Errorf("seed %d, parallelism %d: chose %s, want node-0517, whose victim started last", seed, parallelism, got)
					}
					if first == "" {
						first = got
					} else if got != first {
						t.Errorf("seed %d, parallelism %d: chose %s, with parallelism 1 %s", seed, parallelism, got, first)
					}
				}
			}
		})
	}
}

func TestWithoutPreemptionTheFitErrorHasNoDecision(t *testing.T) {
	nodes, pods := fullCluster(2)
	fe := schedule(t, pod("critical", "", "3", 1000, t0), nodes, pods, nil, framework.WithoutPreemption())
	if fe.Preemption != nil || fe.ClearNomination {
		t.Errorf("Preemption %v, ClearNomination %v; want neither", fe.Preemption, fe.ClearNomination)
	}
	if got, want := fe.Error(), "0/2 nodes are available: 2 Insufficient cpu."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestPreemptionUpdatesTheNominations(t *testing.T) {
	nodes, pods := fullCluster(1)
	noms := framework.NewNominations()
	waiting := pod("waiting", "", "1", 10, t0)
	noms.Add(waiting, "node-000")
	important := pod("important", "", "1", 5000, t0)
	noms.Add(important, "node-000")
	fe := schedule(t, pod("critical", "", "2", 1000, t0), nodes, pods, nil, framework.WithNominator(noms))
	if fe.Preemption == nil {
		t.Fatalf("no preemption: %v", fe)
	}
	if got := names(fe.Preemption.NominationsToClear); got != "waiting" {
		t.Errorf("NominationsToClear = %s, want waiting", got)
	}
	if got := noms.NominatedNodeName(pod("critical", "", "2", 1000, t0)); got != "node-000" {
		t.Errorf("critical nominated to %q, want node-000", got)
	}
	if got := noms.NominatedNodeName(waiting); got != "" {
		t.Errorf("waiting still nominated to %q", got)
	}
	if got := noms.NominatedNodeName(important); got != "node-000" {
		t.Errorf("important nominated to %q, want node-000 kept", got)
	}
}

func TestNominationsStayWhenEveryVictimIsAlreadyLeaving(t *testing.T) {
	leaving := pod("leaving", "node-000", "4", 0, t0)
	leaving.DeletionTimestamp = &metav1.Time{Time: t0}
	noms := framework.NewNominations()
	waiting := pod("waiting", "", "1", 10, t0)
	noms.Add(waiting, "node-000")
	fe := schedule(t, pod("critical", "", "2", 1000, t0), []*v1.Node{node("node-000", "4")}, []*v1.Pod{leaving}, nil, framework.WithNominator(noms))
	if fe.Preemption == nil {
		t.Fatalf("no preemption: %v", fe)
	}
	if len(fe.Preemption.NominationsToClear) != 0 || noms.NominatedNodeName(waiting) != "node-000" {
		t.Errorf("NominationsToClear = %s, waiting nominated to %q; want the nomination kept", names(fe.Preemption.NominationsToClear), noms.NominatedNodeName(waiting))
	}
}

func TestACancelledContextStopsPreemption(t *testing.T) {
	nodes, pods := fullCluster(50)
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fw.Schedule(ctx, pod("critical", "", "3", 1000, t0), nodeinfo.Build(nodes, pods)); !errors.Is(err, context.Canceled) {
		t.Errorf("Schedule = %v, want context.Canceled", err)
	}
}

func TestOutsideAFrameworkPostFilterIsAnError(t *testing.T) {
	var pl preemption.DefaultPreemption
	r, s := pl.PostFilter(context.Background(), fwk.NewCycleState(nil), pod("p", "", "1", 1, t0), &framework.Diagnosis{})
	if s.Code() != fwk.Error || !strings.Contains(s.Message(), "framework") || r != nil {
		t.Errorf("PostFilter = %v, %v; want no result and an Error naming the missing framework", r, s)
	}
}

func i32(v int32) *int32 { return &v }

func TestNewDefaultPreemptionChecksItsArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		args *configv1.DefaultPreemptionArgs
		want string
	}{
		{"a percentage above 100 is refused", &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(101)}, "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"},
		{"a negative absolute count is refused", &configv1.DefaultPreemptionArgs{MinCandidateNodesAbsolute: i32(-1)}, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"},
		{"both zero are refused, with both messages", &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: i32(0), MinCandidateNodesAbsolute: i32(0)},
			"[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]"},
		{"nil args are the defaults", nil, ""},
		{"unset fields take the defaults", &configv1.DefaultPreemptionArgs{MinCandidateNodesAbsolute: i32(0)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := preemption.NewDefaultPreemption(tc.args)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestOverlappingBudgetsCountAVictimAsItsReleaseDoes(t *testing.T) {
	// Node a's two pods must both go. tier-x (no disruption left)
	// selects the more important one only, web (one left) both.
	withTier := labelled(pod("important", "a", "2", 10, t0), "web")
	withTier.Labels["tier"] = "x"
	tierBudget := budget("a-tier-x", "", 0)
	tierBudget.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "x"}}
	objs := []runtime.Object{tierBudget, budget("b-web", "web", 1)}
	for _, tc := range []struct {
		name, release string
		violating     int
	}{
		// The important pod exhausts tier-x and stops there; web still
		// has a disruption for the other.
		{name: "from v1.37 a victim counts against its budgets only until one is exhausted", release: "1.37", violating: 1},
		// The important pod takes web's disruption too, so the other
		// violates web.
		{name: "before v1.37 a victim counts against every budget selecting it", release: "1.36", violating: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := kubesched.ReleaseFor(tc.release)
			if err != nil {
				t.Fatal(err)
			}
			fw, err := r.DefaultFramework(framework.WithObjects(objs...), framework.WithRandSource(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = fw.Schedule(context.Background(), pod("critical", "", "3", 1000, t0),
				nodeinfo.Build([]*v1.Node{node("a", "4")}, []*v1.Pod{withTier, labelled(pod("other", "a", "2", 0, t0), "web")}))
			var fe *framework.FitError
			if !errors.As(err, &fe) || fe.Preemption == nil {
				t.Fatalf("%v, want a preemption", err)
			}
			if p := fe.Preemption; p.NominatedNodeName != "a" || names(p.Victims) != "important,other" || p.NumPDBViolations != tc.violating {
				t.Errorf("preemption on %s evicting %s with %d violations, want a evicting important,other with %d", p.NominatedNodeName, names(p.Victims), p.NumPDBViolations, tc.violating)
			}
		})
	}
}
