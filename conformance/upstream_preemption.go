package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// UpstreamPreemption is an [Upstream] whose scheduling attempt goes on,
// when the pod fits no node, to the PostFilter plugins, as
// kube-scheduler's schedulingCycle does: DynamicResources', then
// DefaultPreemption's, whose Evaluator reads the pod back, dry-runs
// preemption from a random offset until it has enough candidates, picks
// one and hands it to its executor. It is the upstream side of the
// Preemption workload's timings, and what kubesched's decision is checked
// against ([UpstreamPreemption.Reference]).
//
// A decision, not an actuation, is timed, as kubesched makes one:
//   - The executor's PreemptPod, which patches and deletes each victim
//     through the API server and records an event, only notes the
//     victims. The executor acts synchronously, as with
//     SchedulerAsyncPreemption off, so that the little it still does
//     (clearing the nominations of lower-priority pods, of which there are
//     none) is charged to the call rather than left running into the next
//     one.
//   - The Evaluator reads the pod back from a pod lister over an indexer
//     holding it, the kind of lister the informer gives, rather than from
//     the fake API server, so that no pod is written there (the
//     scheduler's event handlers would queue it).
//
// Victims stay where they are and no nomination is recorded, so every
// attempt sees the same cluster. Create it with [NewUpstreamPreemption];
// its calls take the Upstream's lock.
type UpstreamPreemption struct {
	u      *Upstream
	plugin *defaultpreemption.DefaultPreemption
	// pods holds the pod being scheduled, for the Evaluator to read back.
	pods toolscache.Indexer
	// mu guards victims, which the executor's goroutines write.
	mu sync.Mutex
	// victims are those of the candidate last handed to the executor.
	victims *extenderv1.Victims
}

// NewUpstreamPreemption gives u's DefaultPreemption plugin the executor
// and Evaluator described at [UpstreamPreemption], built as its
// constructor builds them. u's other uses are unaffected: the plugin only
// runs when a pod fits no node. It fails when u's profile has no
// DefaultPreemption.
func NewUpstreamPreemption(u *Upstream) (*UpstreamPreemption, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := &UpstreamPreemption{
		u:    u,
		pods: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}),
	}
	for _, pl := range u.fw.PreEnqueuePlugins() {
		if dp, ok := pl.(*defaultpreemption.DefaultPreemption); ok {
			p.plugin = dp
		}
	}
	if p.plugin == nil || !u.fw.HasPostFilterPlugins() {
		return nil, errors.New("upstream's profile has no DefaultPreemption plugin")
	}
	features := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	features.EnableAsyncPreemption = false
	executor := preemption.NewExecutor(u.fw, features)
	recordVictims(executor, func(c preemption.Candidate) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.victims = c.Victims()
	})
	p.plugin.Executor = executor
	p.plugin.Evaluator = preemption.NewEvaluator(p.plugin.Name(), u.fw, p.plugin, executor)
	p.plugin.Evaluator.PodLister = corelisters.NewPodLister(p.pods)
	return p, nil
}

// Schedule makes one scheduling attempt for pod in u's cluster, as
// [Upstream.Schedule] does, and when no node fits runs the PostFilter
// plugins on its FitError. It returns the node upstream nominates pod to,
// or "" when it nominates none (preemption does not help, or pod may not
// preempt). It returns an error when pod fits a node, since then there is
// nothing to preempt, or when the attempt fails otherwise.
func (p *UpstreamPreemption) Schedule(ctx context.Context, pod *v1.Pod) (string, error) {
	p.u.mu.Lock()
	defer p.u.mu.Unlock()
	c, err := p.attempt(ctx, pod)
	if err != nil {
		return "", err
	}
	return c.nominated, nil
}

// errNothingToPreempt is wrapped by the error of an attempt whose pod
// fits a node.
var errNothingToPreempt = errors.New("there is nothing to preempt")

// preemptionAttempt is one scheduling attempt of a pod that fit no node.
type preemptionAttempt struct {
	state  fwk.CycleState
	fitErr *schedframework.FitError
	// nominated is the node the PostFilter plugins nominated the pod to,
	// or "".
	nominated string
	// override is whether their result sets the pod's nomination: to
	// nominated, or clearing it when that is "". Otherwise the nomination
	// stays as it was.
	override bool
	status   *fwk.Status
}

// attempt is [UpstreamPreemption.Schedule]'s attempt. The caller holds
// p.u.mu.
func (p *UpstreamPreemption) attempt(ctx context.Context, pod *v1.Pod) (*preemptionAttempt, error) {
	if pod == nil {
		return nil, errors.New("no pod to schedule")
	}
	u := p.u
	// What the informer would hold: the pod the Evaluator reads back.
	if held, ok, _ := p.pods.Get(pod); !ok || held != pod {
		if err := p.pods.Update(pod); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	p.victims = nil
	p.mu.Unlock()

	// As Upstream.Schedule.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	state, res, err := u.cycle(ctx, pod)
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(u.logger, "pod", klog.KObj(pod)))
	if err == nil {
		return nil, fmt.Errorf("pod %s fits node %s: %w", pod.Name, res.SuggestedHost, errNothingToPreempt)
	}
	var fitErr *schedframework.FitError
	if !errors.As(err, &fitErr) {
		return nil, err
	}
	// As schedulingCycle goes on after a FitError.
	result, status := u.fw.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
	fitErr.Diagnosis.PostFilterMsg = status.Message()
	c := &preemptionAttempt{state: state, fitErr: fitErr, status: status}
	if result != nil && result.NominatingInfo != nil && result.NominatingInfo.Mode() == fwk.ModeOverride {
		c.nominated, c.override = result.NominatingInfo.NominatedNodeName, true
	}
	return c, nil
}

// PreemptionDecision is a scheduler's decision on a pod that fits no node.
type PreemptionDecision struct {
	// Message is the FitError's text, PostFilter's message included.
	Message string
	// NominatedNodeName is the node the pod is nominated to; empty when
	// preemption found none.
	NominatedNodeName string
	// Victims are the pods to evict there, as namespace/name, most
	// important first.
	Victims []string
	// NumPDBViolations counts the victims a PodDisruptionBudget protects.
	NumPDBViolations int
}

// PreemptionReference is what a decision on a pod that fits no node must
// agree with ([PreemptionReference.Check]): upstream's own, and
// DefaultPreemption's dry run over every potential node.
type PreemptionReference struct {
	// Upstream is upstream's decision, from its dry run from a random
	// offset.
	Upstream PreemptionDecision
	// Candidates are the nodes where preemption makes room, by a dry run
	// over every potential node, sorted by name.
	Candidates []PreemptionCandidate
	// BestCandidates are the sorted names of the candidates that upstream's
	// choice of a node ranks equal first (see
	// [PreemptionResult.BestCandidates]).
	BestCandidates []string
}

// Reference makes a scheduling attempt for pod as
// [UpstreamPreemption.Schedule] does, then DefaultPreemption's dry run
// over every potential node, from the first, with the attempt's cycle
// state and PodDisruptionBudgets. A decision from a dry run that stops
// early, as both schedulers' do, can only be checked against the full
// one's best candidates when every stretch of nodes the early stop
// leaves holds one of them, as the Preemption workload's do: Reference
// fails if upstream's own decision does not pass
// [PreemptionReference.Check]. It also fails when pod fits a node, the
// dry run fails on a node, or a victim's place in the order of victims
// depends on the clock (a pod without status.startTime among equally
// important ones).
func (p *UpstreamPreemption) Reference(ctx context.Context, pod *v1.Pod) (*PreemptionReference, error) {
	p.u.mu.Lock()
	defer p.u.mu.Unlock()
	c, err := p.attempt(ctx, pod)
	if err != nil {
		return nil, err
	}
	ref := &PreemptionReference{Upstream: PreemptionDecision{Message: c.fitErr.Error(), NominatedNodeName: c.nominated}}
	if c.nominated != "" {
		p.mu.Lock()
		victims := p.victims
		p.mu.Unlock()
		if victims == nil {
			return nil, fmt.Errorf("upstream nominated %s without handing its executor any victims", c.nominated)
		}
		ref.Upstream.Victims, ref.Upstream.NumPDBViolations = victimNames(victims.Pods), int(victims.NumPDBViolations)
	}

	ev := p.plugin.Evaluator
	ctx = klog.NewContext(ctx, klog.Background())
	if ok, _ := p.plugin.PodEligibleToPreemptOthers(ctx, pod, c.fitErr.Diagnosis.NodeToStatus.Get(pod.Status.NominatedNodeName)); ok {
		potential, err := c.fitErr.Diagnosis.NodeToStatus.NodesForStatusCode(p.u.snapshot.NodeInfos(), fwk.Unschedulable)
		if err != nil {
			return nil, err
		}
		if clockDependent(potential, pod) {
			return nil, errors.New("on some node, the order of victims depends on the clock: a pod has no status.startTime")
		}
		pdbs, err := ev.PdbLister.List(labels.Everything())
		if err != nil {
			return nil, err
		}
		candidates, _, err := ev.DryRunPreemption(ctx, c.state, pod, potential, pdbs, 0, int32(len(potential)))
		if err != nil {
			return nil, fmt.Errorf("upstream's dry run over every node: %w", err)
		}
		for _, cand := range candidates {
			ref.Candidates = append(ref.Candidates, PreemptionCandidate{
				Node: cand.Name(), Victims: victimNames(cand.Victims().Pods), NumPDBViolations: cand.Victims().NumPDBViolations,
			})
		}
		slices.SortFunc(ref.Candidates, func(a, b PreemptionCandidate) int { return cmp.Compare(a.Node, b.Node) })
		ref.BestCandidates = bestCandidates(candidates)
	}
	if err := ref.Check(ref.Upstream); err != nil {
		return nil, fmt.Errorf("upstream's own decision fails the check, so the workload's best candidates are too rare for a dry run that stops early: %w", err)
	}
	return ref, nil
}

// Check returns an error unless d is a decision upstream could make: the
// same message, and, when upstream nominates a node, one of the best
// candidates with the victims (in the same order) and the PDB violations
// the full dry run found there; otherwise no node.
func (r *PreemptionReference) Check(d PreemptionDecision) error {
	if withoutNominee(d.Message) != withoutNominee(r.Upstream.Message) {
		return fmt.Errorf("message\n  got  %q\n  want %q", d.Message, r.Upstream.Message)
	}
	if r.Upstream.NominatedNodeName == "" {
		if d.NominatedNodeName != "" {
			return fmt.Errorf("nominated %s, upstream nominates no node", d.NominatedNodeName)
		}
		return nil
	}
	if !slices.Contains(r.BestCandidates, d.NominatedNodeName) {
		return fmt.Errorf("nominated %s, not one of the %d best candidates %v", d.NominatedNodeName, len(r.BestCandidates), r.BestCandidates)
	}
	i, ok := slices.BinarySearchFunc(r.Candidates, d.NominatedNodeName, func(c PreemptionCandidate, name string) int { return cmp.Compare(c.Node, name) })
	if !ok {
		return fmt.Errorf("nominated %s, not a candidate of the full dry run", d.NominatedNodeName)
	}
	want := r.Candidates[i]
	if !slices.Equal(d.Victims, want.Victims) || int64(d.NumPDBViolations) != want.NumPDBViolations {
		return fmt.Errorf("on %s: victims %v with %d PDB violations, upstream %v with %d", d.NominatedNodeName, d.Victims, d.NumPDBViolations, want.Victims, want.NumPDBViolations)
	}
	return nil
}

// nomineeInMessage is the node a successful preemption's message names
// (v1.37 on). Which of several equally good nodes upstream picks depends
// on where its dry run started; the node is compared on its own, against
// all of them.
var nomineeInMessage = regexp.MustCompile(`found a potential placement for pod on node (\S+), preempting`)

// withoutNominee returns msg without the node its preemption names.
func withoutNominee(msg string) string {
	return nomineeInMessage.ReplaceAllString(msg, "found a potential placement for pod on node <node>, preempting")
}

// victimNames returns the pods as namespace/name.
func victimNames(pods []*v1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Namespace + "/" + p.Name
	}
	return names
}
