package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	extserver "github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/framework"
)

// preempt is extender i's preempt verb. For each candidate node, by a
// hash of the extender's number, the pod and the node, it turns the node
// down (three times in ten), accepts it as it is, or accepts it with
// other victims: only the most important one, the same in reverse order,
// one more pod of the node's, or another count of PodDisruptionBudget
// violations. Rarely it gives a node no victims, which a scheduler
// rejects (drops, if the extender is ignorable). A scheduler evicts
// whichever pods of the node the answer names, in its order, and ranks
// the nodes by them, so each of these can change the node it nominates.
func (e *testExtender) preempt(i int) extserver.PreemptFunc {
	return func(_ context.Context, pod *v1.Pod, victims map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		out := make(map[string]*extenderv1.Victims, len(victims))
		for name, v := range victims {
			kept := &extenderv1.Victims{Pods: slices.Clone(v.Pods), NumPDBViolations: v.NumPDBViolations}
			switch h := extenderHash(200+i, pod, name) % 40; {
			case h < 12:
				continue
			case h < 13:
				kept.Pods = nil
			case h < 17:
				kept.Pods = kept.Pods[:min(1, len(kept.Pods))]
			case h < 19:
				slices.Reverse(kept.Pods)
			case h < 21:
				if p := e.bystander(name, kept.Pods); p != nil {
					kept.Pods = append(kept.Pods, p)
				}
			case h < 23:
				if kept.NumPDBViolations == 0 {
					kept.NumPDBViolations = 1
				} else {
					kept.NumPDBViolations = 0
				}
			}
			out[name] = kept
		}
		return out, nil
	}
}

// bystander returns the first pod on node that is not among victims, or
// nil. The caller holds e.mu.
func (e *testExtender) bystander(node string, victims []*v1.Pod) *v1.Pod {
	ni := e.nodes[node]
	if ni == nil {
		return nil
	}
	for _, pi := range ni.Pods() {
		if !slices.ContainsFunc(victims, func(p *v1.Pod) bool { return p.UID == pi.Pod.UID }) {
			return pi.Pod
		}
	}
	return nil
}

// preemptOnMissingNode is a preempt verb that accepts every candidate and
// adds a node the cluster does not have, with the victims of the first
// candidate: the scheduler cannot look the node up.
func preemptOnMissingNode(_ context.Context, _ *v1.Pod, victims map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
	out := maps.Clone(victims)
	if names := slices.Sorted(maps.Keys(victims)); len(names) > 0 {
		out["no-such-node"] = victims[names[0]]
	}
	return out, nil
}

// candidateRecorder is DefaultPreemption's side of upstream's preemption
// Evaluator ([preemption.Interface]), which keeps a copy of every map of
// victims the Evaluator has it build from candidates. In v1.37.2 the
// Evaluator builds two in an attempt that finds candidates: in
// callExtenders from the dry run's candidates, before it calls the
// extenders, and in SelectCandidate from those the extenders left, when
// they left more than one. It is used under the Upstream's lock.
type candidateRecorder struct {
	preemption.Interface
	built []map[string]*extenderv1.Victims
}

// CandidatesToVictimsMap builds the map as DefaultPreemption does, and
// keeps a copy.
func (r *candidateRecorder) CandidatesToVictimsMap(candidates []preemption.Candidate) map[string]*extenderv1.Victims {
	m := r.Interface.CandidatesToVictimsMap(candidates)
	r.built = append(r.built, maps.Clone(m))
	return m
}

// recordCandidates has p's DefaultPreemption record the candidates of its
// attempts ([attemptWithExtenders] reads them).
func recordCandidates(p *UpstreamPreemption) *candidateRecorder {
	ev := p.plugin.Evaluator
	r := &candidateRecorder{Interface: ev.Interface}
	ev.Interface = r
	return r
}

// extenderPreemption is upstream's decision on a pod that fits no node,
// with the candidates before and after its extenders' preempt verbs.
type extenderPreemption struct {
	PreemptionDecision
	// override is whether the decision sets the pod's nomination: to
	// NominatedNodeName, or clearing it when that is "". Otherwise the
	// nomination stays as it was.
	override bool
	// before are the dry run's candidates, with their victims, by node;
	// after are those the extenders left, with the victims they gave
	// them. Both are nil when the dry run found no candidate.
	before, after map[string]*extenderv1.Victims
}

// attemptWithExtenders makes one scheduling attempt for pod in p's
// cluster, as [UpstreamPreemption.Schedule] does, and returns upstream's
// decision with the candidates rec, p's recorder, saw. Its error wraps
// errNothingToPreempt when pod fits a node.
func attemptWithExtenders(ctx context.Context, p *UpstreamPreemption, rec *candidateRecorder, pod *v1.Pod) (*extenderPreemption, error) {
	p.u.mu.Lock()
	defer p.u.mu.Unlock()
	rec.built = nil
	c, err := p.attempt(ctx, pod)
	if err != nil {
		return nil, err
	}
	d := &extenderPreemption{
		PreemptionDecision: PreemptionDecision{Message: c.fitErr.Error(), NominatedNodeName: c.nominated},
		override:           c.override,
	}
	p.mu.Lock()
	evicted := p.victims
	p.mu.Unlock()
	switch len(rec.built) {
	case 0:
		if c.nominated != "" {
			return nil, fmt.Errorf("upstream nominated %s without building the candidates' victims", c.nominated)
		}
	case 1:
		d.before, d.after = rec.built[0], map[string]*extenderv1.Victims{}
		if c.nominated != "" {
			// SelectCandidate took the only candidate left.
			d.after[c.nominated] = evicted
		}
	case 2:
		d.before, d.after = rec.built[0], rec.built[1]
	default:
		return nil, fmt.Errorf("upstream built the candidates' victims %d times in one attempt, not at most twice", len(rec.built))
	}
	if c.nominated != "" {
		if evicted == nil {
			return nil, fmt.Errorf("upstream nominated %s without handing its executor any victims", c.nominated)
		}
		d.Victims, d.NumPDBViolations = victimNames(evicted.Pods), int(evicted.NumPDBViolations)
	}
	return d, nil
}

// check returns an error unless d, a decision on the same pod that sets
// the nomination or not (override), is one upstream could make: the same
// message, and the same nomination; when upstream nominates a node, one
// of the best of the candidates the extenders left, with the victims (in
// the same order) and the PDB violations they gave it.
func (w *extenderPreemption) check(d PreemptionDecision, override bool) error {
	if withoutNominee(d.Message) != withoutNominee(w.Message) {
		return fmt.Errorf("message\n  got  %q\n  want %q", d.Message, w.Message)
	}
	if override != w.override || (d.NominatedNodeName == "") != (w.NominatedNodeName == "") {
		return fmt.Errorf("nominates %q (sets the nomination: %v), upstream %q (%v)", d.NominatedNodeName, override, w.NominatedNodeName, w.override)
	}
	if w.NominatedNodeName == "" {
		return nil
	}
	best := bestOf(w.after)
	if !slices.Contains(best, d.NominatedNodeName) {
		return fmt.Errorf("nominates %s, not one of the best candidates %v the extenders left", d.NominatedNodeName, best)
	}
	v := w.after[d.NominatedNodeName]
	if !slices.Equal(d.Victims, victimNames(v.Pods)) || int64(d.NumPDBViolations) != v.NumPDBViolations {
		return fmt.Errorf("on %s: victims %v with %d PDB violations, the extenders' %v with %d", d.NominatedNodeName, d.Victims, d.NumPDBViolations, victimNames(v.Pods), v.NumPDBViolations)
	}
	return nil
}

// decidedByExtenders reports whether upstream's nomination could not have
// been made without the extenders' preempt verbs: none of the best of the
// dry run's candidates is among the best the extenders left with the same
// victims and PDB violations.
func (w *extenderPreemption) decidedByExtenders() bool {
	after := bestOf(w.after)
	for _, name := range bestOf(w.before) {
		b, a := w.before[name], w.after[name]
		if slices.Contains(after, name) && slices.Equal(victimNames(b.Pods), victimNames(a.Pods)) && b.NumPDBViolations == a.NumPDBViolations {
			return false
		}
	}
	return true
}

// changedVictims reports whether the extenders left some candidate other
// victims, or another count of PDB violations, than the dry run found.
func (w *extenderPreemption) changedVictims() bool {
	for name, a := range w.after {
		b := w.before[name]
		if b == nil || !slices.Equal(victimNames(b.Pods), victimNames(a.Pods)) || b.NumPDBViolations != a.NumPDBViolations {
			return true
		}
	}
	return false
}

// bestOf returns the sorted names of the candidates upstream's choice
// ranks equal first ([bestCandidates]).
func bestOf(candidates map[string]*extenderv1.Victims) []string {
	list := make([]preemption.Candidate, 0, len(candidates))
	for name, v := range candidates {
		list = append(list, victimsCandidate{name: name, victims: v})
	}
	return bestCandidates(list)
}

// victimsCandidate is a node and its victims as a [preemption.Candidate].
type victimsCandidate struct {
	name    string
	victims *extenderv1.Victims
}

// Name returns the node's name.
func (c victimsCandidate) Name() string { return c.name }

// Victims returns the pods to evict there and their PDB violations.
func (c victimsCandidate) Victims() *extenderv1.Victims { return c.victims }

// NumPodGroupDisruptions returns 0: the scenarios have no pod groups.
func (c victimsCandidate) NumPodGroupDisruptions() int { return 0 }

// kubeschedPreemption is kubesched's decision in fitErr, and whether it
// sets the pod's nomination.
func kubeschedPreemption(fitErr *framework.FitError) (PreemptionDecision, bool) {
	d := PreemptionDecision{Message: fitErr.Error()}
	if p := fitErr.Preemption; p != nil {
		d.NominatedNodeName, d.Victims, d.NumPDBViolations = p.NominatedNodeName, victimNames(p.Victims), p.NumPDBViolations
	}
	return d, fitErr.Preemption != nil || fitErr.ClearNomination
}

// preemptionWithExtenders is a generated preemption scenario for
// [TestExtenderPreemptionMatchesUpstream], with what would make
// upstream's decision vary from one attempt to the next taken out:
//   - Pending pods, which neither side's scheduler is told of.
//   - Pods without a start time: upstream takes them to start when it
//     compares them.
//   - PodDisruptionBudgets that cover a pod an earlier budget covers:
//     upstream counts a pod against the budgets it lists, in its
//     informer's order, which changes from one call to the next, only up
//     to the first one the pod exhausts, so which pods violate a budget
//     can depend on that order. kubesched counts it against all of them,
//     which is upstream's count in one of those orders.
func preemptionWithExtenders(seed uint64) *Scenario {
	var s *Scenario
	switch seed % 4 {
	case 0, 1:
		// Most nodes candidates, so that the extenders have some to
		// turn down.
		s = crowdedWithPreemption(seed, 0)
	case 2:
		s = generateWithPreemption(seed)
	default:
		// With pod affinity and spreading.
		s = generate(seed, true)
		addPreemption(s)
	}
	s.Pods = slices.DeleteFunc(s.Pods, func(p *v1.Pod) bool { return p.Spec.NodeName == "" })
	for _, p := range s.Pods {
		if p.Status.StartTime == nil {
			p.Status.StartTime = &metav1.Time{Time: podsStarted.Add(3 * time.Hour)}
		}
	}
	var budgets []*policyv1.PodDisruptionBudget
	s.Objects = slices.DeleteFunc(s.Objects, func(obj runtime.Object) bool {
		b, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			return false
		}
		for _, p := range s.Pods {
			if budgetCovers(b, p) && slices.ContainsFunc(budgets, func(earlier *policyv1.PodDisruptionBudget) bool { return budgetCovers(earlier, p) }) {
				return true
			}
		}
		budgets = append(budgets, b)
		return false
	})
	return s
}

// budgetCovers reports whether preemption counts p against b: b is in
// p's namespace and its selector, valid and not empty, matches p.
func budgetCovers(b *policyv1.PodDisruptionBudget, p *v1.Pod) bool {
	sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
	return b.Namespace == p.Namespace && err == nil && !sel.Empty() && sel.Matches(labels.Set(p.Labels))
}

// TestExtenderPreemptionMatchesUpstream has kube-scheduler's own
// scheduler, built by scheduler.New with a configuration's extenders,
// and a kubesched framework from the same configuration schedule
// generated preemption scenarios, calling the same loopback extenders:
// their preempt verbs turn candidate nodes down and change their victims
// (see [testExtender.preempt]), or fail. Upstream's attempt goes on
// after the FitError to its PostFilter plugins, whose DefaultPreemption
// hands the extenders its candidates. Both must give the same FitError
// message and the same nomination: when upstream nominates a node,
// kubesched a node upstream ranks best among the candidates the
// extenders left, with the victims and PDB violations they gave it.
func TestExtenderPreemptionMatchesUpstream(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	ext := &testExtender{}
	srv := ext.handler(t)
	const configs, scenarios = 60, 10
	outcomes := map[string]int{}
	for c := range uint64(configs) {
		data := generateExtenderConfig(rand.New(rand.NewPCG(c, 0x9e3)), srv.URL, true)
		u, cfg := extenderSchedulers(t, data)
		p, err := NewUpstreamPreemption(u)
		if err != nil {
			u.Close()
			t.Fatal(err)
		}
		rec := recordCandidates(p)
		ignorableFailing := slices.ContainsFunc(cfg.Extenders, func(e configv1.Extender) bool {
			return e.Ignorable && strings.HasPrefix(e.PreemptVerb, "fail-")
		})
		for i := range uint64(scenarios) {
			s := preemptionWithExtenders(9200000 + c*100 + i)
			installExtenderScenario(t, ext, u, s)
			fws, err := ours.FrameworksFromConfig(cfg, framework.WithObjects(s.Objects...), framework.WithRandSource(rand.NewPCG(s.Seed, 1)))
			if err != nil {
				t.Fatalf("config %d: FrameworksFromConfig: %v\n%s", c, err, data)
			}
			got, gotErr := fws["default-scheduler"].ScheduleSnapshot(ctx, s.Pod, cachedSnapshot(t, s.Nodes, s.Pods))
			var fitErr *framework.FitError
			// Twice: upstream breaks ties at random.
			for range 2 {
				want, wantErr := attemptWithExtenders(ctx, p, rec, s.Pod)
				var d string
				switch {
				case errors.Is(wantErr, errNothingToPreempt):
					if gotErr != nil {
						d = fmt.Sprintf("upstream: %v; kubesched: %v", wantErr, gotErr)
					}
				case wantErr != nil:
					if gotErr == nil || errors.As(gotErr, &fitErr) || gotErr.Error() != wantErr.Error() {
						d = fmt.Sprintf("error:\n\tupstream  %v\n\tkubesched %v, %v", wantErr, got, gotErr)
					}
				case !errors.As(gotErr, &fitErr):
					d = fmt.Sprintf("upstream: %s; kubesched: %v, %v", want.Message, got, gotErr)
				default:
					if err := want.check(want.PreemptionDecision, want.override); err != nil {
						t.Fatalf("config %d, seed %d: upstream's own decision fails the check, so the reference is wrong: %v\nconfig:\n%s", c, s.Seed, err, data)
					}
					if err := want.check(kubeschedPreemption(fitErr)); err != nil {
						d = err.Error()
					}
				}
				if d != "" {
					t.Fatalf("config %d, seed %d: %s\nconfig:\n%s", c, s.Seed, d, data)
				}
				outcomes[extenderPreemptionOutcome(want, wantErr, ignorableFailing)]++
				if want != nil && want.NominatedNodeName != "" {
					if len(want.after) < len(want.before) {
						outcomes["extenders turned candidates down"]++
					}
					if want.changedVictims() {
						outcomes["extenders changed victims"]++
					}
					if want.decidedByExtenders() {
						outcomes["nominated where only the extenders' answer allows"]++
					}
				}
			}
		}
		u.Close()
	}
	t.Logf("%d configurations, %d scenarios each, 2 upstream attempts each: %v", configs, scenarios, outcomes)
	for _, o := range []string{
		"placed", "failed before preemption", "not nominated", "nominated", "nominated past an ignorable failing extender",
		"extenders turned candidates down", "extenders changed victims", "nominated where only the extenders' answer allows",
		"extenders left no candidate", "a preempt verb failed", "an extender named a missing node", "an extender gave a node no victims",
	} {
		if outcomes[o] == 0 {
			t.Errorf("no attempt %s: the generators drifted (%v)", o, outcomes)
		}
	}
}

// extenderPreemptionOutcome names upstream's outcome, for counting;
// ignorableFailing tells whether the configuration has an ignorable
// extender with a failing preempt verb.
func extenderPreemptionOutcome(want *extenderPreemption, err error, ignorableFailing bool) string {
	switch {
	case errors.Is(err, errNothingToPreempt):
		return "placed"
	case err != nil:
		return "failed before preemption"
	case want.NominatedNodeName != "" && ignorableFailing:
		return "nominated past an ignorable failing extender"
	case want.NominatedNodeName != "":
		return "nominated"
	case strings.Contains(want.Message, "no candidate node for preemption"):
		return "extenders left no candidate"
	case strings.Contains(want.Message, "failed fail-preempt with extender"):
		return "a preempt verb failed"
	case strings.Contains(want.Message, "nodeinfo not found for node name"):
		return "an extender named a missing node"
	case strings.Contains(want.Message, `expected at least one victim pod on node "`):
		return "an extender gave a node no victims"
	}
	return "not nominated"
}
