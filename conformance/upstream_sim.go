package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// This file is what turns [Upstream] into a simulation, the way
// cluster-autoscaler simulates scheduling: one framework over one snapshot,
// whose NodeInfos the pods placed so far are added to, so that each
// placement sees the ones before. Upstream's snapshot is the scheduler's
// own, refreshed from its cache before every placement; adding a pod to
// the cache makes the next refresh copy that pod's node alone, as in
// kube-scheduler itself.

// ErrNoNodeFits is returned, wrapped with the pod's name, by
// [Upstream.FirstFit] for a pod that no node fits.
var ErrNoNodeFits = errors.New("no node fits the pod")

// Bind adds a copy of pod, bound to the node called node, to the
// scheduler's cache, as its informer would when the binding lands; the
// next placement or Schedule sees it. [Upstream.Unbind] takes it out again.
// It returns an error for a node not in the cluster, or a pod whose UID
// the cache holds already.
func (u *Upstream) Bind(pod *v1.Pod, node string) error {
	if pod == nil {
		return errors.New("no pod to bind")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bind(pod, node)
}

// bind is [Upstream.Bind]'s work. The caller holds u.mu.
func (u *Upstream) bind(pod *v1.Pod, node string) error {
	// The snapshot knows every node: SetCluster, the only thing that
	// changes them, refreshes it.
	if _, err := u.snapshot.Get(node); err != nil {
		return fmt.Errorf("binding pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	bound := pod.DeepCopy()
	bound.Spec.NodeName = node
	if err := u.sched.Cache.AddPod(u.logger, bound); err != nil {
		return fmt.Errorf("binding pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	u.bound = append(u.bound, bound)
	return nil
}

// Unbind removes every pod [Upstream.Bind], [Upstream.Place] and
// [Upstream.FirstFit] added to the cluster since [Upstream.SetCluster],
// newest first, so that the cluster is SetCluster's again: a timing round
// undoes its placements with it and the next one starts from the same
// cluster. The next refresh of the snapshot copies the nodes they were on.
func (u *Upstream) Unbind() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.unbind()
}

// unbind is [Upstream.Unbind]'s work. The caller holds u.mu.
func (u *Upstream) unbind() error {
	var errs []error
	for _, p := range slices.Backward(u.bound) {
		if err := u.sched.Cache.RemovePod(u.logger, p); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s from upstream's cache: %w", p.Name, err))
		}
	}
	u.bound = nil
	return errors.Join(errs...)
}

// Place places pod as kube-scheduler does and commits it, as a simulation
// of kube-scheduler's decisions would: the cycle [Upstream.Schedule] runs
// (SchedulePod at the profile's percentageOfNodesToScore, with the
// per-pod work around it), then the Reserve plugins on the chosen node,
// as schedulingCycle runs them, then [Upstream.Bind]. The next placement
// sees the pod. It returns Schedule's result and error (a
// *framework.FitError, with nothing committed, when no node fits), or the
// Reserve plugins' error.
func (u *Upstream) Place(ctx context.Context, pod *v1.Pod) (scheduler.ScheduleResult, error) {
	if pod == nil {
		return scheduler.ScheduleResult{}, errors.New("no pod to place")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	state, res, err := u.cycle(ctx, pod)
	if err != nil {
		return res, err
	}
	if status := u.fw.RunReservePluginsReserve(ctx, state, pod, res.SuggestedHost); !status.IsSuccess() {
		return res, fmt.Errorf("reserving %s for pod %s/%s: %w", res.SuggestedHost, pod.Namespace, pod.Name, status.AsError())
	}
	return res, u.bind(pod, res.SuggestedHost)
}

// FirstFit places pod on the first node that fits it, searching the nodes
// called order round-robin from order[start], and commits it: it is
// cluster-autoscaler's SchedulerPluginRunner.RunFiltersUntilPassingNode
// followed by what its cluster snapshot's SchedulePod does with the node
// found. It refreshes the snapshot, runs the PreFilter plugins once on a
// new cycle state, then for each node in turn skips it if the
// PreFilterResult leaves it out or it is marked unschedulable (a
// shortcut cluster-autoscaler takes, since NodeUnschedulable would reject
// it), and runs the Filter plugins on a clone of the state. The first
// node they pass takes the pod: the Reserve plugins run on it with that
// clone, and the pod is bound there ([Upstream.Bind]). It returns the
// node's name and its index in order, for the caller's next search to
// start past it, as cluster-autoscaler's does.
//
// cluster-autoscaler filters the nodes in parallel
// (workqueue.ParallelizeUntil) and takes whichever passing node a worker
// reports first, so that its answer depends on timing whenever several
// nodes near the start fit. FirstFit searches them one after another, so
// that its answer is always the first passing node in order, the one
// kubesched's first fit must agree with; cluster-autoscaler's parallel
// search filters more nodes than that for the same answer.
//
// It returns an error wrapping ErrNoNodeFits when PreFilter rejects the
// pod or no node passes; a plugin's error, a node of order not in the
// cluster, or a start outside order otherwise.
func (u *Upstream) FirstFit(ctx context.Context, pod *v1.Pod, order []string, start int) (string, int, error) {
	if pod == nil {
		return "", 0, errors.New("no pod to place")
	}
	n := len(order)
	if n == 0 {
		return "", 0, scheduler.ErrNoNodesAvailable
	}
	if start < 0 || start >= n {
		return "", 0, fmt.Errorf("first fit starting at node %d of %d", start, n)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.sched.Cache.UpdateSnapshot(u.logger, u.snapshot); err != nil {
		return "", 0, err
	}
	// cluster-autoscaler's cycle state is a bare one: no plugin metrics,
	// nor the pods-to-activate entry a scheduling queue would read.
	state := schedframework.NewCycleState()
	preResult, status, _ := u.fw.RunPreFilterPlugins(ctx, state, pod)
	if !status.IsSuccess() {
		if status.IsRejected() {
			return "", 0, fmt.Errorf("pod %s/%s: %w: %s", pod.Namespace, pod.Name, ErrNoNodeFits, status.Message())
		}
		return "", 0, status.AsError()
	}
	for k := range n {
		i := (start + k) % n
		name := order[i]
		if !preResult.AllNodes() && !preResult.NodeNames.Has(name) {
			continue
		}
		nodeInfo, err := u.snapshot.Get(name)
		if err != nil {
			return "", 0, err
		}
		if nodeInfo.Node().Spec.Unschedulable {
			continue
		}
		// Filter plugins may write to the state; each node gets its own
		// copy, as each of cluster-autoscaler's parallel workers needs.
		cloned := state.Clone()
		status := u.fw.RunFilterPlugins(ctx, cloned, pod, nodeInfo)
		if status.Code() == fwk.Error {
			// cluster-autoscaler would only see a node that does not
			// pass; here a plugin's error is a finding.
			return "", 0, status.AsError()
		}
		if !status.IsSuccess() {
			continue
		}
		if status := u.fw.RunReservePluginsReserve(ctx, cloned, pod, name); !status.IsSuccess() {
			return "", 0, fmt.Errorf("reserving %s for pod %s/%s: %w", name, pod.Namespace, pod.Name, status.AsError())
		}
		if err := u.bind(pod, name); err != nil {
			return "", 0, err
		}
		return name, i, nil
	}
	return "", 0, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, ErrNoNodeFits)
}

// UpstreamVerdict is upstream's verdict on a pod over every node of an
// [Upstream]'s cluster as it stands, from [Upstream.Evaluate].
type UpstreamVerdict struct {
	// Feasible are the sorted names of the nodes that pass PreFilter and
	// every Filter; none when the pod fits nowhere.
	Feasible []string
	// Best are the sorted names of the feasible nodes sharing the highest
	// total score: those kube-scheduler, filtering and scoring every node
	// (percentageOfNodesToScore 100), chooses among at random. A lone
	// feasible node, which upstream takes without scoring, is the best.
	Best []string
}

// Evaluate refreshes the snapshot and runs a scheduling cycle for pod
// over every node, whatever u's percentageOfNodesToScore, with the
// oracle's code ([Oracle] and Evaluate share it), and returns the
// feasible and best nodes; nothing is committed. It is what a best-fit
// placement is checked against, one pod after another, with each
// placement bound ([Upstream.Bind]) before the next pod is evaluated. It
// returns an error when a plugin fails.
func (u *Upstream) Evaluate(ctx context.Context, pod *v1.Pod) (UpstreamVerdict, error) {
	if pod == nil {
		return UpstreamVerdict{}, errors.New("no pod to evaluate")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.sched.Cache.UpdateSnapshot(u.logger, u.snapshot); err != nil {
		return UpstreamVerdict{}, err
	}
	c, err := runCycle(ctx, u.fw, u.snapshot.NodeInfos(), pod)
	if err != nil {
		return UpstreamVerdict{}, err
	}
	if len(c.errors) > 0 {
		return UpstreamVerdict{}, fmt.Errorf("upstream's cycle for pod %s/%s failed: %s", pod.Namespace, pod.Name, strings.Join(c.errors, "; "))
	}
	var v UpstreamVerdict
	for _, nodeInfo := range c.Feasible {
		v.Feasible = append(v.Feasible, nodeInfo.Node().Name)
	}
	slices.Sort(v.Feasible)
	v.Best = c.topNodes()
	return v, nil
}

// UpstreamSim is upstream's side of a simulation over an [Upstream]
// holding a cluster: pods placed one after another, each committed before
// the next, by best fit ([Upstream.Place]) or by first fit
// ([Upstream.FirstFit]) from just past the node the last search chose, as
// cluster-autoscaler searches. cmd/simbyside times it, in its own process
// or, for a release it cannot link, in the oracle's.
type UpstreamSim struct {
	u        *Upstream
	firstFit bool
	// order is the nodes' names in the order first fit searches them,
	// kubesched's: the order the cluster lists them in.
	order []string
	// next is where the next first-fit search starts in order.
	next int
}

// NewUpstreamSim returns a simulation over u, which holds the cluster of
// nodes; firstFit chooses first fit over best fit.
func NewUpstreamSim(u *Upstream, nodes []*v1.Node, firstFit bool) *UpstreamSim {
	s := &UpstreamSim{u: u, firstFit: firstFit, order: make([]string, len(nodes))}
	for i, n := range nodes {
		s.order[i] = n.Name
	}
	return s
}

// Upstream is the Upstream the simulation places pods on.
func (s *UpstreamSim) Upstream() *Upstream { return s.u }

// Place places pod and commits it, returning its node, or "" when it fits
// nowhere.
func (s *UpstreamSim) Place(ctx context.Context, pod *v1.Pod) (string, error) {
	if s.firstFit {
		node, i, err := s.u.FirstFit(ctx, pod, s.order, s.next)
		if errors.Is(err, ErrNoNodeFits) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		s.next = (i + 1) % len(s.order)
		return node, nil
	}
	res, err := s.u.Place(ctx, pod)
	var fitErr *schedframework.FitError
	if errors.As(err, &fitErr) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return res.SuggestedHost, nil
}

// PlaceAll places pods one after another, as Place does, and returns how
// many fit nowhere.
func (s *UpstreamSim) PlaceAll(ctx context.Context, pods []*v1.Pod) (int, error) {
	unplaced := 0
	for _, pod := range pods {
		node, err := s.Place(ctx, pod)
		if err != nil {
			return 0, fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		if node == "" {
			unplaced++
		}
	}
	return unplaced, nil
}

// Undo takes back every placement since the cluster was set
// ([Upstream.Unbind]); first fit's next search starts where it would
// have.
func (s *UpstreamSim) Undo() error { return s.u.Unbind() }
