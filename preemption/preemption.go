package preemption

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/internal/requeue"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Defaults of kube-scheduler v1.37.2's DefaultPreemptionArgs.
const (
	defaultMinCandidateNodesPercentage int32 = 10
	defaultMinCandidateNodesAbsolute   int32 = 100
)

// DefaultPreemption is kube-scheduler's DefaultPreemption PostFilter
// plugin: when no node fits a pod, it looks for a node where evicting
// pods of lower priority makes room, and records in the FitError the
// node to nominate the pod to and the pods to evict there
// ([fwk.Preemption]). It changes nothing: evicting the victims and
// writing the nomination are the caller's.
//
// As in kube-scheduler v1.37.2:
//   - A pod with preemptionPolicy Never does not preempt ("preemption: not
//     eligible due to preemptionPolicy=Never."), nor does a pod nominated
//     to a node that still has a lower-priority pod terminating because of
//     preemption, unless that node is now unresolvable for it.
//   - Only nodes a filter rejected as Unschedulable are tried; nodes
//     rejected as UnschedulableAndUnresolvable (taints, node affinity, ...)
//     cannot be helped by evictions.
//   - On each, every pod of lower priority is removed (through the
//     PreFilter extensions, so that affinity and spreading see it gone);
//     if the pod then passes the filters, with nominated pods counted, the
//     removed pods are put back one by one, most important first, those a
//     PodDisruptionBudget protects before the others, and a pod stays
//     evicted only when the pod does not fit with it back.
//   - The nodes are tried from a random offset, in parallel, until enough
//     candidates are found (see [NewDefaultPreemption]); the node chosen
//     has the fewest budget violations, then the lowest highest victim
//     priority, the smallest sum of priorities, the fewest victims, the
//     latest start of its most important victims, and then a random one.
//     A pod without status.startTime counts as started now.
//   - Extenders with a preemptVerb may narrow the candidates
//     ([fwk.PreemptionExtender]).
//
// Both random choices use the framework's source ([fwk.Handle.IntN],
// seeded by [github.com/kubesched/kubesched/framework.WithRandSource]),
// and the dry run takes the candidates in node order from the offset
// however the work is spread over goroutines, so a seeded framework makes
// the same choice every time.
//
// The zero value uses the default arguments.
type DefaultPreemption struct {
	// minPercentage and minAbsolute are the args' minimum numbers of
	// candidates; 0 and 0 (never valid) for the defaults.
	minPercentage, minAbsolute int32
	// now is the clock for pods without a start time; time.Now if nil.
	now func() time.Time
	// Features: PreemptionMessageNamesVictims and
	// BudgetStopsAtFirstViolation are read. nil is [feature.Default].
	Features *feature.Features
}

var _ fwk.PostFilterPlugin = (*DefaultPreemption)(nil)

// NewDefaultPreemption returns the plugin configured by args,
// kube-scheduler's own type: the dry run stops once it has found
// max(minCandidateNodesPercentage percent of the candidate nodes,
// minCandidateNodesAbsolute) nodes where preemption works, at least one
// of them without PodDisruptionBudget violations. Unset fields (and nil
// args) take kube-scheduler's defaults, 10 and 100; args are checked as
// kube-scheduler checks them, and an error lists every problem in its
// words.
func NewDefaultPreemption(args *configv1.DefaultPreemptionArgs) (*DefaultPreemption, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &DefaultPreemption{minPercentage: *a.MinCandidateNodesPercentage, minAbsolute: *a.MinCandidateNodesAbsolute}, nil
}

// Name returns "DefaultPreemption".
func (*DefaultPreemption) Name() string { return names.DefaultPreemption }

// EventsToRegister registers bound pods' deletions with a hint that never
// helps, as upstream's: upstream's DefaultPreemption holds a pod back in
// PreEnqueue while its asynchronous preemption runs, which kubesched does
// not do, so the plugins that rejected a pod decide when it is retried.
func (*DefaultPreemption) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	return []fwk.ClusterEventWithHint{requeue.For(fs).Assigned(fwk.Delete, requeue.Never)}
}

// PostFilter looks for a node where preemption makes room for pod and
// returns it as the result's Preemption; see [DefaultPreemption]. Its
// status is then Success; otherwise Unschedulable with kube-scheduler's
// message, prefixed "preemption: ", and ClearNomination set when no node
// would do. It needs the cycle's framework ([fwk.HandleOf]); without one
// it returns Error.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, filtered fwk.NodeToStatus) (*fwk.PostFilterResult, *fwk.Status) {
	r, s := pl.preempt(ctx, state, pod, filtered)
	if msg := s.Message(); msg != "" {
		return r, fwk.NewStatus(s.Code(), "preemption: "+msg)
	}
	return r, s
}

// preempt is kube-scheduler's Evaluator.Preempt, without acting.
func (pl *DefaultPreemption) preempt(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, filtered fwk.NodeToStatus) (*fwk.PostFilterResult, *fwk.Status) {
	fw := fwk.HandleOf(state)
	if fw == nil {
		return nil, fwk.AsStatus(errors.New("no framework: DefaultPreemption runs inside a framework's cycle"))
	}
	if pod == nil || filtered == nil {
		return nil, fwk.AsStatus(errors.New("nil pod or node statuses"))
	}
	now := time.Now
	if pl.now != nil {
		now = pl.now
	}
	e := &evaluator{fw: fw, state: state, pod: pod, priority: corev1helpers.PodPriority(pod), now: now(),
		stopAtFirst: feature.Of(pl.Features).BudgetStopsAtFirstViolation}

	if ok, msg := e.eligible(filtered); !ok {
		return nil, fwk.NewStatus(fwk.Unschedulable, msg)
	}

	all := state.AllNodes()
	var potential []*nodeinfo.NodeInfo
	for _, ni := range all {
		if st := filtered.NodeStatus(ni.Name()); st != nil && st.Code() == fwk.Unschedulable {
			potential = append(potential, ni)
		}
	}
	var candidates []*candidate
	statuses := map[string]*fwk.Status{}
	if len(potential) > 0 {
		budgets, err := listBudgets(state.Listers().PodDisruptionBudgets)
		if err != nil {
			return nil, fwk.AsStatus(err)
		}
		e.budgets = budgets
		offset := fw.IntN(len(potential))
		var errs []error
		candidates, statuses, errs = e.dryRun(ctx, potential, offset, pl.numCandidates(int32(len(potential))))
		if err := ctx.Err(); err != nil {
			return nil, fwk.AsStatus(err)
		}
		if len(errs) > 0 && len(candidates) == 0 {
			return nil, fwk.AsStatus(joinErrors(errs))
		}
	}
	if len(candidates) == 0 {
		msg := fwk.FitMessage(len(all), statuses, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
		return &fwk.PostFilterResult{ClearNomination: true}, fwk.NewStatus(fwk.Unschedulable, msg)
	}

	candidates, status := e.callExtenders(ctx, candidates)
	if !status.IsSuccess() {
		return nil, status
	}
	best := e.selectCandidate(candidates)
	if best == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "no candidate node for preemption")
	}
	r := &fwk.PostFilterResult{Preemption: &fwk.Preemption{
		NominatedNodeName: best.node,
		Victims:           best.victims,
		NumPDBViolations:  best.numPDBViolations,
	}}
	if feature.Of(pl.Features).PreemptionMessageNamesVictims {
		return r, fwk.NewStatus(fwk.Success, fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", best.node, len(best.victims)))
	}
	return r, nil
}

// numCandidates is how many candidates the dry run looks for among
// numNodes nodes.
func (pl *DefaultPreemption) numCandidates(numNodes int32) int32 {
	percentage, absolute := pl.minPercentage, pl.minAbsolute
	if percentage == 0 && absolute == 0 {
		percentage, absolute = defaultMinCandidateNodesPercentage, defaultMinCandidateNodesAbsolute
	}
	n := numNodes * percentage / 100
	n = max(n, absolute)
	return min(n, numNodes)
}

// evaluator is one PostFilter call's working state.
type evaluator struct {
	fw       fwk.Handle
	state    *fwk.CycleState
	pod      *v1.Pod
	priority int32
	// now is the start time of pods that have none, fixed for the call
	// so that comparisons are consistent.
	now     time.Time
	budgets []budget
	// stopAtFirst is BudgetStopsAtFirstViolation.
	stopAtFirst bool
}

// candidate is a node where preemption makes room.
type candidate struct {
	node             string
	victims          []*v1.Pod
	numPDBViolations int
}

// eligible is kube-scheduler's PodEligibleToPreemptOthers.
func (e *evaluator) eligible(d fwk.NodeToStatus) (bool, string) {
	pod := e.pod
	if p := pod.Spec.PreemptionPolicy; p != nil && *p == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	name := pod.Status.NominatedNodeName
	if name == "" {
		return true, ""
	}
	// A name without a verdict is one kube-scheduler counts among the
	// absent nodes, unresolvable.
	if st := d.NodeStatus(name); st == nil || st.Code() == fwk.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni, ok := cycle.Of(e.state).NodeInfo(name); ok {
		for _, pi := range ni.Pods() {
			if corev1helpers.PodPriority(pi.Pod) < e.priority && terminatingByPreemption(pi.Pod) {
				return false, "not eligible due to a terminating pod on the nominated node."
			}
		}
	}
	return true, ""
}

// terminatingByPreemption reports whether p is being deleted because the
// scheduler preempted it.
func terminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// nodeOutcome is the dry run's verdict on one node.
type nodeOutcome struct {
	victims          []*v1.Pod
	numPDBViolations int
	status           *fwk.Status
}

// minWindow is the fewest nodes the dry run hands its workers at a time.
const minWindow = 64

// dryRun tries the potential nodes from offset, in parallel, and returns
// the candidates (those without budget violations first), the verdicts
// on the nodes where preemption does not help, and the errors met. It
// stops once the nodes tried, counted in order from offset, hold
// numCandidates candidates, one without violations among them; the
// candidates are those of that prefix, whatever order the goroutines
// finished in.
//
// The nodes are tried a window at a time, a window as long as the
// candidates still missing: where most nodes are candidates, as on a
// full cluster, the first window is all the work, and the outcomes held
// are as many as the nodes tried, not as the cluster's.
func (e *evaluator) dryRun(ctx context.Context, nodes []*nodeinfo.NodeInfo, offset int, numCandidates int32) ([]*candidate, map[string]*fwk.Status, []error) {
	n := len(nodes)
	var (
		nonViolating, violating []*candidate
		statuses                = map[string]*fwk.Status{}
		errs                    []error
		// good and violated count the candidates without and with
		// violations among the nodes tried, each up to numCandidates.
		good, violated int32
		outcomes       []nodeOutcome
		done           []bool
	)
	enough := func() bool { return good > 0 && good+violated >= numCandidates }
	for lo := 0; lo < n && !enough(); {
		missing := int(numCandidates - good - violated)
		if good == 0 {
			missing = max(missing, 1)
		}
		hi := min(n, lo+max(missing, minWindow, 2*e.fw.Parallelism()))
		size := hi - lo
		if cap(outcomes) < size {
			outcomes, done = make([]nodeOutcome, size), make([]bool, size)
		}
		outcomes, done = outcomes[:size], done[:size]
		clear(outcomes)
		clear(done)
		// tried is how many of the window's nodes, in order, count.
		tried := e.tryWindow(ctx, nodes, offset+lo, outcomes, done, &good, &violated, numCandidates)
		for i := range tried {
			o := &outcomes[i]
			name := nodes[(offset+lo+i)%n].Name()
			if !o.status.IsSuccess() {
				if o.status.Code() == fwk.Error {
					errs = append(errs, o.status.AsError())
				}
				statuses[name] = o.status
				continue
			}
			c := &candidate{node: name, victims: o.victims, numPDBViolations: o.numPDBViolations}
			if c.numPDBViolations == 0 {
				if int32(len(nonViolating)) < numCandidates {
					nonViolating = append(nonViolating, c)
				}
			} else if int32(len(violating)) < numCandidates {
				violating = append(violating, c)
			}
		}
		if tried < size {
			// Enough candidates, or the caller cancelled.
			break
		}
		lo = hi
	}
	return append(nonViolating, violating...), statuses, errs
}

// tryWindow runs selectVictims on len(outcomes) nodes from nodes[from],
// in parallel, counting the candidates into good and violated in node
// order, and stops once they are enough. It returns how many nodes, from
// the first, count: all but those after the one that made enough, and
// those a cancelled ctx left untried.
func (e *evaluator) tryWindow(ctx context.Context, nodes []*nodeinfo.NodeInfo, from int, outcomes []nodeOutcome, done []bool, good, violated *int32, numCandidates int32) int {
	n, size := len(nodes), len(outcomes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		prefix  int // outcomes[:prefix] are all done and counted
		stopped atomic.Bool
	)
	parallel.Until(ctx, e.fw.Parallelism(), size, func(i int) {
		if stopped.Load() {
			return
		}
		ni := nodes[(from+i)%n]
		victims, violations, st := e.selectVictims(ctx, ni)
		if st.IsSuccess() && len(victims) == 0 {
			st = fwk.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Name()))
		}
		outcomes[i] = nodeOutcome{victims: victims, numPDBViolations: violations, status: st}
		mu.Lock()
		defer mu.Unlock()
		done[i] = true
		for prefix < size && done[prefix] && !stopped.Load() {
			if o := &outcomes[prefix]; o.status.IsSuccess() {
				if o.numPDBViolations == 0 {
					*good = min(*good+1, numCandidates)
				} else {
					*violated = min(*violated+1, numCandidates)
				}
			}
			prefix++
			if *good > 0 && *good+*violated >= numCandidates {
				stopped.Store(true)
				cancel()
			}
		}
	})
	return prefix
}

// victim is a pod that may be evicted, with what orders it; pi is nil
// where only the order matters (sortByImportance).
type victim struct {
	pod      *v1.Pod
	pi       *nodeinfo.PodInfo
	priority int32
	start    time.Time
}

// byImportance sorts victims most important first: by priority, then by
// start time, earliest first. Through sort.Sort it is the same algorithm
// as kube-scheduler's sort.Slice, so equally important pods end in the
// same order as there.
type byImportance []victim

func (v byImportance) Len() int      { return len(v) }
func (v byImportance) Swap(i, j int) { v[i], v[j] = v[j], v[i] }
func (v byImportance) Less(i, j int) bool {
	if v[i].priority != v[j].priority {
		return v[i].priority > v[j].priority
	}
	return v[i].start.Before(v[j].start)
}

// sortByImportance sorts pods as byImportance does, by the same
// algorithm.
func (e *evaluator) sortByImportance(pods []*v1.Pod) {
	vs := make(byImportance, len(pods))
	for i, p := range pods {
		vs[i] = victim{pod: p, priority: corev1helpers.PodPriority(p), start: e.startTime(p)}
	}
	sort.Sort(vs)
	for i, v := range vs {
		pods[i] = v.pod
	}
}

// selectVictims is kube-scheduler's SelectVictimsOnNode: the fewest pods
// of lower priority to evict from ni for the pod to fit, most important
// first, and how many of them a budget protects.
func (e *evaluator) selectVictims(ctx context.Context, ni *nodeinfo.NodeInfo) ([]*v1.Pod, int, *fwk.Status) {
	var potential []victim
	for _, pi := range ni.Pods() {
		if prio := corev1helpers.PodPriority(pi.Pod); prio < e.priority {
			if potential == nil {
				potential = make([]victim, 0, len(ni.Pods()))
			}
			potential = append(potential, victim{pod: pi.Pod, pi: pi, priority: prio, start: e.startTime(pi.Pod)})
		}
	}
	if len(potential) == 0 {
		return nil, 0, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod")
	}
	node := ni.Clone()
	state := e.state.Clone()
	remove := func(pi *nodeinfo.PodInfo) *fwk.Status {
		if err := node.RemovePod(pi.Pod); err != nil {
			return fwk.AsStatus(err)
		}
		return e.fw.RunPreFilterExtensionRemovePod(ctx, state, e.pod, pi, node)
	}
	for _, v := range potential {
		if s := remove(v.pi); !s.IsSuccess() {
			return nil, 0, fwk.AsStatus(s.AsError())
		}
	}
	if s := e.fw.RunFilterPluginsWithNominatedPods(ctx, state, e.pod, node); !s.IsSuccess() {
		return nil, 0, s
	}
	sort.Sort(byImportance(potential))
	violating, nonViolating := e.splitByBudgets(potential)
	victims := make([]*v1.Pod, 0, len(potential))
	reprieve := func(v victim) (bool, *fwk.Status) {
		node.AddPodInfo(v.pi)
		if s := e.fw.RunPreFilterExtensionAddPod(ctx, state, e.pod, v.pi, node); !s.IsSuccess() {
			return false, s
		}
		if e.fw.RunFilterPluginsWithNominatedPods(ctx, state, e.pod, node).IsSuccess() {
			return true, nil
		}
		if s := remove(v.pi); !s.IsSuccess() {
			return false, s
		}
		victims = append(victims, v.pod)
		return false, nil
	}
	numViolating := 0
	for _, v := range violating {
		fits, s := reprieve(v)
		if !s.IsSuccess() {
			return nil, 0, fwk.AsStatus(s.AsError())
		}
		if !fits {
			numViolating++
		}
	}
	for _, v := range nonViolating {
		if _, s := reprieve(v); !s.IsSuccess() {
			return nil, 0, fwk.AsStatus(s.AsError())
		}
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		e.sortByImportance(victims)
	}
	return victims, numViolating, nil
}

// startTime is the pod's status.startTime, or the call's now.
func (e *evaluator) startTime(p *v1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return e.now
}

// budget is a PodDisruptionBudget with its selector parsed. A budget
// with neither a selector nor labels matches nothing (a missing, invalid
// or empty selector); one whose selector has matchLabels only is matched
// through labels, without the selector.
type budget struct {
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector
	labels   []label
}

// label is a label a budget's pods must have.
type label struct{ key, value string }

// matches reports whether the budget selects pod.
func (b *budget) matches(pod *v1.Pod) bool {
	if b.pdb.Namespace != pod.Namespace {
		return false
	}
	if b.labels != nil {
		for _, l := range b.labels {
			if got, ok := pod.Labels[l.key]; !ok || got != l.value {
				return false
			}
		}
		return true
	}
	return b.selector != nil && b.selector.Matches(labels.Set(pod.Labels))
}

// listBudgets lists the PodDisruptionBudgets and parses their selectors.
func listBudgets(l fwk.Lister[*policyv1.PodDisruptionBudget]) ([]budget, error) {
	if l == nil {
		return nil, nil
	}
	pdbs, err := l.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing PodDisruptionBudgets: %w", err)
	}
	out := make([]budget, 0, len(pdbs))
	for _, pdb := range pdbs {
		if pdb == nil {
			continue
		}
		b := budget{pdb: pdb}
		// An invalid selector matches no pod, and so does an empty one.
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		switch {
		case pdb.Spec.Selector == nil || err != nil || sel.Empty():
		case len(pdb.Spec.Selector.MatchExpressions) == 0:
			// Valid and not empty: at least one label, each well formed.
			for k, v := range pdb.Spec.Selector.MatchLabels {
				b.labels = append(b.labels, label{key: k, value: v})
			}
		default:
			b.selector = sel
		}
		out = append(out, b)
	}
	return out, nil
}

// splitByBudgets is kube-scheduler's FilterVictimsWithPDBViolation
// (filterPodsWithPDBViolation before v1.37): walking pods in order, each
// matching budget's allowed disruptions go down by one (pods it already
// counts as disrupted aside), and a pod that takes a budget below zero
// violates it; with stopAtFirst the budgets after that one, in list
// order, do not count the pod. Order is kept.
func (e *evaluator) splitByBudgets(pods []victim) (violating, nonViolating []victim) {
	if len(e.budgets) == 0 {
		return nil, pods
	}
	var allowedBuf [8]int32
	allowed := allowedBuf[:0]
	if len(e.budgets) > len(allowedBuf) {
		allowed = make([]int32, 0, len(e.budgets))
	}
	for _, b := range e.budgets {
		allowed = append(allowed, b.pdb.Status.DisruptionsAllowed)
	}
	var violatesBuf [32]bool
	violates := violatesBuf[:0]
	if len(pods) > len(violatesBuf) {
		violates = make([]bool, 0, len(pods))
	}
	numViolating := 0
	for _, v := range pods {
		pod := v.pod
		violated := false
		if len(pod.Labels) > 0 {
			for i := range e.budgets {
				b := &e.budgets[i]
				if !b.matches(pod) {
					continue
				}
				if _, disrupted := b.pdb.Status.DisruptedPods[pod.Name]; disrupted {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violated = true
					if e.stopAtFirst {
						break
					}
				}
			}
		}
		violates = append(violates, violated)
		if violated {
			numViolating++
		}
	}
	if numViolating == 0 {
		return nil, pods
	}
	out := make([]victim, 0, len(pods))
	for _, want := range []bool{true, false} {
		for i, v := range pods {
			if violates[i] == want {
				out = append(out, v)
			}
		}
	}
	return out[:numViolating], out[numViolating:]
}

// selectCandidate is kube-scheduler's SelectCandidate with its default
// criteria (pickOneNodeForPreemption); the last tie is broken with the
// framework's random source, where kube-scheduler takes the first node
// of a map's random order.
func (e *evaluator) selectCandidate(cs []*candidate) *candidate {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	criteria := []func(c *candidate) int64{
		// Fewest budget violations.
		func(c *candidate) int64 { return -int64(c.numPDBViolations) },
		// Lowest highest victim priority.
		func(c *candidate) int64 { return -int64(corev1helpers.PodPriority(c.victims[0])) },
		// Smallest sum of priorities, each shifted to be non-negative.
		func(c *candidate) int64 {
			var sum int64
			for _, p := range c.victims {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		// Fewest victims.
		func(c *candidate) int64 { return -int64(len(c.victims)) },
		// Latest start among the most important victims.
		func(c *candidate) int64 { return e.earliestStart(c.victims).UnixNano() },
	}
	for _, score := range criteria {
		best := int64(math.MinInt64)
		var kept []*candidate
		for _, c := range cs {
			switch s := score(c); {
			case s > best:
				best, kept = s, append(kept[:0], c)
			case s == best:
				kept = append(kept, c)
			}
		}
		if len(kept) == 1 {
			return kept[0]
		}
		cs = kept
	}
	return cs[e.fw.IntN(len(cs))]
}

// earliestStart is the earliest start time of the victims of the highest
// priority among victims.
func (e *evaluator) earliestStart(victims []*v1.Pod) time.Time {
	earliest := e.startTime(victims[0])
	top := corev1helpers.PodPriority(victims[0])
	for _, p := range victims {
		switch prio := corev1helpers.PodPriority(p); {
		case prio == top:
			if t := e.startTime(p); t.Before(earliest) {
				earliest = t
			}
		case prio > top:
			top, earliest = prio, e.startTime(p)
		}
	}
	return earliest
}

// callExtenders lets the extenders that support preemption narrow the
// candidates, as kube-scheduler does. The result is sorted by node name.
func (e *evaluator) callExtenders(ctx context.Context, cs []*candidate) ([]*candidate, *fwk.Status) {
	var exts []fwk.PreemptionExtender
	for _, ext := range e.fw.Extenders() {
		if pe, ok := ext.(fwk.PreemptionExtender); ok && pe.SupportsPreemption() && pe.IsInterested(e.pod) {
			exts = append(exts, pe)
		}
	}
	if len(exts) == 0 {
		return cs, nil
	}
	victims := make(map[string]*extenderv1.Victims, len(cs))
	for _, c := range cs {
		victims[c.node] = &extenderv1.Victims{Pods: c.victims, NumPDBViolations: int64(c.numPDBViolations)}
	}
	for _, ext := range exts {
		got, err := ext.ProcessPreemption(ctx, e.pod, victims, cycle.Of(e.state).NodeInfo)
		if err != nil {
			if ext.IsIgnorable() {
				continue
			}
			return nil, fwk.AsStatus(err)
		}
		for name, v := range got {
			if v == nil || len(v.Pods) == 0 {
				if ext.IsIgnorable() {
					delete(got, name)
					continue
				}
				return nil, fwk.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", name))
			}
		}
		victims = got
		if len(victims) == 0 {
			break
		}
	}
	out := make([]*candidate, 0, len(victims))
	for name, v := range victims {
		out = append(out, &candidate{node: name, victims: v.Pods, numPDBViolations: int(v.NumPDBViolations)})
	}
	slices.SortFunc(out, func(a, b *candidate) int { return strings.Compare(a.node, b.node) })
	return out, nil
}

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return fmt.Errorf("[%s]", strings.Join(msgs, ", "))
}
