package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/events"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// PreemptionOracle tells what kube-scheduler's PostFilter plugins decide
// for a pod that fits no node: DynamicResources', then DefaultPreemption
// (with its default arguments, minCandidateNodesPercentage 10 and
// minCandidateNodesAbsolute 100), run by upstream's RunPostFilterPlugins
// after a scheduling cycle as [NominatedOracle] runs it. Create it with
// [NewPreemptionOracle]; it is safe for concurrent use, and runs are
// serialised.
//
// Its fake API server holds, besides a scenario's Objects (its
// PodDisruptionBudgets among them), every pod of the scenario, since
// DefaultPreemption reads the preemptor back from the pod informer.
// Pending pods, those of [Scenario.Pods] without spec.nodeName but with
// status.nominatedNodeName, are nominated to that node, as the scheduling
// queue would hold them.
type PreemptionOracle struct {
	// oracle's lock serialises runs.
	oracle *Oracle
	// handle is the framework itself, not the nominating wrapper the
	// oracle's cycle runs through.
	handle    fwk.Handle
	nominator *fixedNominator
	// plugin is the framework's DefaultPreemption; each run gives it an
	// executor of its own (see [PreemptionOracle.RunScenario]).
	plugin   *defaultpreemption.DefaultPreemption
	features feature.Features
	// preempting counts the executor's calls that delete a victim and
	// have not returned yet.
	preempting atomic.Int32
}

// PreemptionResult is what upstream's PostFilter plugins decided for a pod
// that fits no node, and what its dry run finds over every node.
type PreemptionResult struct {
	// Cycle is the scheduling cycle's verdict, as [Oracle.RunScenario]
	// reports it (with nominated pods, as [NominatedOracle] runs it).
	// When the pod fits a node, PreEnqueue refused it or a plugin failed,
	// upstream runs no PostFilter plugin and Cycle is all there is.
	Cycle *OracleResult
	// Tried is true when upstream ran its PostFilter plugins: no node
	// fit, and the cycle ended without an internal error.
	Tried bool
	// Message is the scheduler's FailedScheduling text: the FitError with
	// the PostFilter plugins' message after it, for example
	// "0/3 nodes are available: 3 Insufficient cpu. no new claims to
	// deallocate, preemption: 0/3 nodes are available: 3 No preemption
	// victims found for incoming pod.".
	Message string
	// PostFilterCode, PostFilterMessage and PostFilterPlugin are the
	// status RunPostFilterPlugins returned. Upstream names the first
	// plugin that did not succeed, so for a pod that preemption does not
	// help the plugin is DynamicResources, which never succeeds; for
	// success it is empty.
	PostFilterCode    fwk.Code
	PostFilterMessage string
	PostFilterPlugin  string
	// NominatingMode and NominatedNodeName are upstream's
	// PostFilterResult: ModeNoop leaves the pod's status.nominatedNodeName
	// as it was (the pod may not preempt, or a plugin failed);
	// ModeOverride sets it to NominatedNodeName, which is empty when
	// preemption found no candidate.
	NominatingMode    fwk.NominatingMode
	NominatedNodeName string

	// The rest is the dry run upstream's DefaultPreemption would make,
	// examining every potential node (from the first, rather than from
	// upstream's random offset). It is empty unless DefaultPreemption ran
	// and the pod may preempt.

	// PotentialNodes are the sorted names of the nodes whose Filter
	// verdict was Unschedulable (not UnschedulableAndUnresolvable).
	PotentialNodes []string
	// CandidatesWanted is how many candidates upstream's dry run looks
	// for before it stops: 10% of the potential nodes, at least 100, at
	// most all of them.
	CandidatesWanted int
	// Partial is true when CandidatesWanted is less than the number of
	// potential nodes: upstream then examines the nodes from a random
	// offset until it has enough candidates, so its choice need not be
	// among BestCandidates.
	Partial bool
	// Candidates are every potential node where evicting some pods lets
	// the pod fit, by node name.
	Candidates []PreemptionCandidate
	// NotCandidates are the potential nodes that are not candidates, with
	// the dry run's verdict (an Error code when the dry run failed there).
	NotCandidates map[string]NodeOutcome
	// BestCandidates are the sorted names of the candidates that tie as
	// best under upstream's choice: fewest PDB violations, then the lowest
	// highest victim priority, the lowest sum of victim priorities, the
	// fewest victims, and the latest earliest start time of the most
	// important victims. Upstream picks one of them at random.
	BestCandidates []string
	// ClockDependent is true when a potential node has two pods of equal
	// priority, lower than the pod's, one of them without
	// status.startTime: upstream takes such a pod to have started now,
	// when it compares, so the order of victims, and which of them are
	// reprieved, can differ from one run to the next.
	ClockDependent bool
	// PartialChoices, when Partial, are the nodes a dry run walking the
	// scenario's nodes in order could nominate (see
	// [PreemptionResult.partialChoices]); kubesched walks them in that
	// order.
	PartialChoices []string

	// dryRun holds the full dry run's candidates by node, for
	// [PreemptionResult.partialChoices]. Upstream's candidates have
	// unexported fields, which equality.Semantic.DeepEqual refuses:
	// clear it to compare results.
	dryRun map[string]preemption.Candidate
}

// partialChoices returns the sorted names of the nodes upstream's
// DefaultPreemption could nominate when its dry run stops early
// (Partial), were it to examine the potential nodes one at a time in
// order, from any offset: it takes the candidates it meets until it has
// CandidatesWanted, one without PDB violations among them (keeping at
// most CandidatesWanted of each kind), and nominates one of the best of
// those. order is the nodes in the order the dry run walks them; names
// that are not potential nodes are skipped. A scheduler whose dry run
// stops early must nominate one of these, whatever its offset.
func (r *PreemptionResult) partialChoices(order []string) []string {
	potential := map[string]bool{}
	for _, name := range r.PotentialNodes {
		potential[name] = true
	}
	var walk []string
	for _, name := range order {
		if potential[name] {
			walk = append(walk, name)
		}
	}
	wanted := r.CandidatesWanted
	choices := map[string]bool{}
	for offset := range walk {
		var nonViolating, violating []preemption.Candidate
		for i := range walk {
			c, ok := r.dryRun[walk[(offset+i)%len(walk)]]
			if !ok {
				continue
			}
			if c.Victims().NumPDBViolations == 0 {
				if len(nonViolating) < wanted {
					nonViolating = append(nonViolating, c)
				}
			} else if len(violating) < wanted {
				violating = append(violating, c)
			}
			if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= wanted {
				break
			}
		}
		for _, name := range bestCandidates(append(nonViolating, violating...)) {
			choices[name] = true
		}
	}
	return slices.Sorted(maps.Keys(choices))
}

// PreemptionCandidate is a node where preemption would make room.
type PreemptionCandidate struct {
	// Node is the node's name.
	Node string
	// Victims are the pods to evict, as namespace/name, most important
	// first, in upstream's order.
	Victims []string
	// NumPDBViolations counts the victims whose eviction a
	// PodDisruptionBudget does not allow.
	NumPDBViolations int64
}

// NewPreemptionOracle builds an oracle of its own (see [NewOracle]), with
// what upstream's preemption needs besides: a nominator, an event recorder
// that drops events, a pod activator that does nothing, and empty sets of
// pods waiting in Permit and PreBind. Call
// [PreemptionOracle.Close] to stop it.
func NewPreemptionOracle() (*PreemptionOracle, error) {
	p := &PreemptionOracle{
		nominator: &fixedNominator{},
		features:  feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate),
	}
	// Keep the DefaultPreemption the framework builds.
	registry := frameworkplugins.NewInTreeRegistry()
	build := registry[defaultpreemption.Name]
	registry[defaultpreemption.Name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := build(ctx, args, h)
		if dp, ok := pl.(*defaultpreemption.DefaultPreemption); ok {
			p.plugin = dp
		}
		return pl, err
	}
	o, err := newOracle(oracleOptions{
		registry: registry,
		kinds:    []schema.GroupVersionKind{podKind},
		framework: []frameworkruntime.Option{
			frameworkruntime.WithPodNominator(p.nominator),
			frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
			frameworkruntime.WithPodActivator(noActivator{}),
			// The executor asks whether a victim waits in Permit or PreBind.
			frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
			frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		},
	})
	if err != nil {
		return nil, err
	}
	if p.plugin == nil {
		o.Close()
		return nil, errors.New("the default profile has no DefaultPreemption plugin")
	}
	p.handle = o.fw
	o.fw = nominatingFramework{o.fw}
	p.oracle = o
	return p, nil
}

// Close stops the oracle.
func (p *PreemptionOracle) Close() { p.oracle.Close() }

// RunScenario runs s's pod through a scheduling cycle and, when it fits
// no node, through upstream's PostFilter plugins, as kube-scheduler's
// schedulingAlgorithm does, and makes the dry run of
// [PreemptionResult]. Preemption's writes (the victims' DisruptionTarget
// condition and deletion, cleared nominations, a deallocated claim) go to
// the oracle's fake API server, and the run waits for upstream's
// asynchronous preemption to finish making them; the next run puts back
// what they changed. It returns an error when s has no nodes, when the
// oracle itself fails, or when upstream's choice is not one of the best
// candidates the full dry run found (unless Partial or ClockDependent
// explain it). Inputs are not modified.
func (p *PreemptionOracle) RunScenario(ctx context.Context, s *Scenario) (*PreemptionResult, error) {
	if len(s.Nodes) == 0 {
		return nil, errors.New("no nodes available to schedule pods")
	}
	byNode, err := nominations(s)
	if err != nil {
		return nil, err
	}
	o := p.oracle
	o.mu.Lock()
	defer o.mu.Unlock()

	objs := slices.Clone(s.Objects)
	for _, pod := range append(slices.Clone(s.Pods), s.Pod) {
		objs = append(objs, pod)
	}
	if err := o.install(ctx, objs); err != nil {
		return nil, err
	}
	o.setCluster(s.Nodes, s.Pods)
	defer o.clearCluster()
	p.nominator.byNode = byNode
	defer func() { p.nominator.byNode = nil }()
	// A fresh executor, so that nothing an earlier run's asynchronous
	// preemption still does touches this one (its PreEnqueue asks the
	// executor whether the pod is preempting already).
	executor := p.newExecutor()

	if notTried := o.preEnqueue(ctx, s.Pod); notTried != nil {
		return &PreemptionResult{Cycle: &OracleResult{NotTried: notTried}}, nil
	}
	c, err := o.cycle(ctx, s.Pod)
	if err != nil {
		return nil, err
	}
	res := &PreemptionResult{Cycle: c.result(s.Pod)}
	if len(c.errors) > 0 || len(c.Feasible) > 0 {
		return res, nil
	}
	res.Tried = true

	// The PostFilter plugins run first: the dry run filters on copies of
	// the cycle state, and DynamicResources' state is shared between the
	// copies, so a dry run before would leave it the claims some node
	// could not use, which its PostFilter would then deallocate.
	result, status := o.fw.RunPostFilterPlugins(ctx, c.state, s.Pod, c.Diagnosis.NodeToStatus)
	res.PostFilterCode, res.PostFilterMessage, res.PostFilterPlugin = status.Code(), status.Message(), status.Plugin()
	if result != nil {
		res.NominatingMode, res.NominatedNodeName = result.NominatingInfo.Mode(), result.NominatingInfo.NominatedNodeName
	}
	diagnosis := c.Diagnosis
	diagnosis.PostFilterMsg = status.Message()
	res.Message = (&schedframework.FitError{Pod: s.Pod, NumAllNodes: len(c.all), Diagnosis: diagnosis}).Error()

	if err := p.dryRun(ctx, c, s.Pod, res); err != nil {
		return nil, err
	}
	if err := p.waitForPreemption(ctx, executor, s.Pod); err != nil {
		return nil, err
	}
	if err := o.objects.resync(); err != nil {
		return nil, err
	}
	if !preemptionReached(res) {
		// A failing DynamicResources ends PostFilter before
		// DefaultPreemption runs.
		res.PotentialNodes, res.CandidatesWanted, res.Partial = nil, 0, false
		res.Candidates, res.NotCandidates, res.BestCandidates, res.ClockDependent = nil, nil, nil, false
		res.dryRun = nil
	}
	if res.Partial {
		order := make([]string, len(s.Nodes))
		for i, n := range s.Nodes {
			order[i] = n.Name
		}
		res.PartialChoices = res.partialChoices(order)
	}
	if res.NominatedNodeName != "" && !res.Partial && !res.ClockDependent && !slices.Contains(res.BestCandidates, res.NominatedNodeName) {
		return nil, fmt.Errorf("upstream nominated %s, which is not among the best candidates %v of its full dry run", res.NominatedNodeName, res.BestCandidates)
	}
	return res, nil
}

// preemptionReached reports whether RunPostFilterPlugins got as far as
// DefaultPreemption: DynamicResources, which runs first, never succeeds,
// and ends the run only with an error.
func preemptionReached(res *PreemptionResult) bool {
	return res.PostFilterCode != fwk.Error || res.PostFilterPlugin != names.DynamicResources
}

// nominations returns the pending pods of s with a nominated node, and the
// pod to schedule if it has one, by node, as upstream's pod nominator
// holds them.
func nominations(s *Scenario) (map[string][]fwk.PodInfo, error) {
	byNode := map[string][]fwk.PodInfo{}
	for _, pod := range append(slices.Clone(s.Pods), s.Pod) {
		if pod.Spec.NodeName != "" || pod.Status.NominatedNodeName == "" {
			continue
		}
		pi, err := schedframework.NewPodInfo(pod)
		if err != nil {
			return nil, fmt.Errorf("nominated pod %s: %w", pod.Name, err)
		}
		byNode[pod.Status.NominatedNodeName] = append(byNode[pod.Status.NominatedNodeName], pi)
	}
	return byNode, nil
}

// newExecutor gives the DefaultPreemption plugin a new executor and
// evaluator, built as its constructor builds them, whose victim deletions
// p counts.
func (p *PreemptionOracle) newExecutor() *preemption.Executor {
	executor := preemption.NewExecutor(p.handle, p.features)
	countPreemptions(executor, &p.preempting)
	p.plugin.Executor = executor
	p.plugin.Evaluator = preemption.NewEvaluator(p.plugin.Name(), p.handle, p.plugin, executor)
	return executor
}

// waitForPreemption waits until the asynchronous preemption of pod, if
// one started, has made its last write: the executor stops reporting it
// once its last victim is gone from the pod informer, and the call that
// deleted it has returned.
func (p *PreemptionOracle) waitForPreemption(ctx context.Context, executor *preemption.Executor, pod *v1.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, informerTimeout)
	defer cancel()
	for executor.IsPodRunningPreemption(pod.UID) || p.preempting.Load() > 0 {
		select {
		case <-ctx.Done():
			return errors.New("upstream's preemption did not finish")
		case <-time.After(200 * time.Microsecond):
		}
	}
	return nil
}

// dryRun fills in res's dry run: the one upstream's DefaultPreemption
// makes, with the same cycle state, nominated pods and
// PodDisruptionBudgets, over every potential node.
func (p *PreemptionOracle) dryRun(ctx context.Context, c *cycleResult, pod *v1.Pod, res *PreemptionResult) error {
	pl := p.plugin
	nominatedStatus := c.Diagnosis.NodeToStatus.Get(pod.Status.NominatedNodeName)
	if ok, _ := pl.PodEligibleToPreemptOthers(ctx, pod, nominatedStatus); !ok {
		return nil
	}
	nodeInfos := p.oracle.snapshot.NodeInfos()
	potential, err := c.Diagnosis.NodeToStatus.NodesForStatusCode(nodeInfos, fwk.Unschedulable)
	if err != nil {
		return err
	}
	if len(potential) == 0 {
		return nil
	}
	_, wanted := pl.GetOffsetAndNumCandidates(int32(len(potential)))
	res.CandidatesWanted, res.Partial = int(wanted), int(wanted) < len(potential)
	res.ClockDependent = clockDependent(potential, pod)

	pdbs, err := pl.Evaluator.PdbLister.List(labels.Everything())
	if err != nil {
		return err
	}
	candidates, statuses, _ := pl.Evaluator.DryRunPreemption(ctx, c.state, pod, potential, pdbs, 0, int32(len(potential)))
	byNode := map[string]preemption.Candidate{}
	for _, cand := range candidates {
		byNode[cand.Name()] = cand
	}
	res.dryRun = byNode
	// The snapshot's order is its own; upstream's only matters for where
	// its random offset starts.
	slices.SortFunc(potential, func(a, b fwk.NodeInfo) int { return cmp.Compare(a.Node().Name, b.Node().Name) })
	res.NotCandidates = map[string]NodeOutcome{}
	for _, nodeInfo := range potential {
		name := nodeInfo.Node().Name
		res.PotentialNodes = append(res.PotentialNodes, name)
		cand, ok := byNode[name]
		if !ok {
			st := statuses.Get(name)
			res.NotCandidates[name] = NodeOutcome{Plugin: st.Plugin(), Code: st.Code().String(), Reasons: st.Reasons()}
			continue
		}
		pc := PreemptionCandidate{Node: name, NumPDBViolations: cand.Victims().NumPDBViolations}
		for _, victim := range cand.Victims().Pods {
			pc.Victims = append(pc.Victims, victim.Namespace+"/"+victim.Name)
		}
		res.Candidates = append(res.Candidates, pc)
	}
	res.BestCandidates = bestCandidates(candidates)
	if len(candidates) > 0 {
		// Upstream's own pick from the same candidates must be one of them.
		if chosen := pl.Evaluator.SelectCandidate(klog.NewContext(ctx, klog.Background()), candidates); !slices.Contains(res.BestCandidates, chosen.Name()) && !res.ClockDependent {
			return fmt.Errorf("upstream's SelectCandidate chose %s, not one of %v", chosen.Name(), res.BestCandidates)
		}
	}
	return nil
}

// bestCandidates returns the sorted names of the candidates that upstream's
// choice (pickOneNodeForPreemption with no score functions of the plugin's
// own) ranks equal first, leaving it to chance among them. A victim
// without status.startTime counts as started now, as upstream takes it,
// which is later than any start time in the past; two such tie.
func bestCandidates(candidates []preemption.Candidate) []string {
	if len(candidates) == 0 {
		return nil
	}
	type rank struct {
		violations, highest, sum, count int64
		// earliest is the earliest start of the most important victims;
		// startedNow is set when that is now, a victim's without a
		// start time.
		earliest   time.Time
		startedNow bool
	}
	now := time.Now()
	rankOf := func(c preemption.Candidate) rank {
		pods := c.Victims().Pods
		r := rank{violations: c.Victims().NumPDBViolations, highest: int64(corev1helpers.PodPriority(pods[0])), count: int64(len(pods))}
		for _, pod := range pods {
			// As upstream sums them: each priority shifted to be positive.
			r.sum += int64(corev1helpers.PodPriority(pod)) + math.MaxInt32 + 1
		}
		r.earliest, r.startedNow = now, true
		for _, pod := range pods {
			if int64(corev1helpers.PodPriority(pod)) == r.highest && pod.Status.StartTime != nil && pod.Status.StartTime.Time.Before(r.earliest) {
				r.earliest, r.startedNow = pod.Status.StartTime.Time, false
			}
		}
		return r
	}
	// compare orders a before b when upstream prefers a.
	compare := func(a, b rank) int {
		if n := cmp.Or(cmp.Compare(a.violations, b.violations), cmp.Compare(a.highest, b.highest),
			cmp.Compare(a.sum, b.sum), cmp.Compare(a.count, b.count)); n != 0 {
			return n
		}
		switch {
		case a.startedNow && b.startedNow:
			return 0
		case a.startedNow:
			return -1
		case b.startedNow:
			return 1
		}
		// The later start is preferred.
		return b.earliest.Compare(a.earliest)
	}
	ranks := make([]rank, len(candidates))
	best := 0
	for i, c := range candidates {
		ranks[i] = rankOf(c)
		if compare(ranks[i], ranks[best]) < 0 {
			best = i
		}
	}
	var names []string
	for i, c := range candidates {
		if compare(ranks[i], ranks[best]) == 0 {
			names = append(names, c.Name())
		}
	}
	slices.Sort(names)
	return names
}

// clockDependent reports whether one of nodes has two pods of equal
// priority below pod's, one of them without status.startTime (see
// [PreemptionResult.ClockDependent]).
func clockDependent(nodes []fwk.NodeInfo, pod *v1.Pod) bool {
	priority := corev1helpers.PodPriority(pod)
	for _, nodeInfo := range nodes {
		withStart, withoutStart := map[int32]int{}, map[int32]int{}
		for _, pi := range nodeInfo.GetPods() {
			victim := pi.GetPod()
			if prio := corev1helpers.PodPriority(victim); prio < priority {
				if victim.Status.StartTime == nil {
					withoutStart[prio]++
				} else {
					withStart[prio]++
				}
			}
		}
		for prio, n := range withoutStart {
			if n+withStart[prio] > 1 {
				return true
			}
		}
	}
	return false
}

// noActivator is the pod activator upstream's asynchronous preemption
// calls when an API call failed: the oracle has no queue to move pods in.
type noActivator struct{}

func (noActivator) Activate(klog.Logger, map[string]*v1.Pod) {}

var _ fwk.PodActivator = noActivator{}
