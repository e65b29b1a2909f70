package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ExtenderName is the name kube-scheduler adds to
// [Diagnosis.UnschedulablePlugins] when extenders left out some of the nodes
// that passed the filters. The statuses extenders give to nodes name no
// plugin.
const ExtenderName = "Extender"

// extenderScoreScale turns an extender's score, at most
// extenderv1.MaxExtenderPriority (10), into the plugins' range, at most
// MaxNodeScore (100).
const extenderScoreScale = fwk.MaxNodeScore / extenderv1.MaxExtenderPriority

// WithExtender adds a scheduler extender, consulted after the profile's
// filters and after its scores as kube-scheduler consults its
// `extenders:`. Extenders run in the order added, except that ignorable
// ones run after all the others, as kube-scheduler orders them. At most
// one extender of a framework may bind.
func WithExtender(e fwk.Extender) Option {
	return func(c *config) error {
		if e == nil {
			return errors.New("WithExtender: nil extender")
		}
		c.extenders = append(c.extenders, e)
		return nil
	}
}

// orderExtenders puts the ignorable extenders last, keeping the order
// within each group, and checks that at most one extender binds.
func orderExtenders(es []fwk.Extender) ([]fwk.Extender, error) {
	if len(es) == 0 {
		return nil, nil
	}
	ordered := make([]fwk.Extender, 0, len(es))
	binders := 0
	for _, ignorable := range []bool{false, true} {
		for _, e := range es {
			if e.IsIgnorable() == ignorable {
				ordered = append(ordered, e)
			}
		}
	}
	for _, e := range es {
		if e.IsBinder() {
			binders++
		}
	}
	if binders > 1 {
		return nil, fmt.Errorf("found %d extenders implementing bind; only one extender can implement bind", binders)
	}
	return ordered, nil
}

// extendersRank reports whether any extender filters or prioritizes. Like
// score plugins, such an extender needs more than the first feasible node
// to choose from.
func (f *Framework) extendersRank() bool {
	for _, e := range f.extenders {
		if e.IsFilter() || e.IsPrioritizer() {
			return true
		}
	}
	return false
}

// filterWithExtenders passes the nodes that passed the filters through the
// filtering extenders interested in pod, one after the other: each sees
// what the previous one kept. The nodes an extender rejects get its message
// as their status in d (FailedAndUnresolvable over Failed), with no plugin
// name. An error fails the cycle, unless the extender is ignorable: then it
// is skipped.
//
// record is set for the search over all nodes, not for the nominated node:
// there, as in kube-scheduler, [ExtenderName] joins d.UnschedulablePlugins
// when the extenders changed the number of nodes.
//
// When the extenders changed the node list in any way, the scores sc
// computed while filtering no longer line up with it: sc then scores again
// from PreScore on, over the nodes the extenders kept.
func (f *Framework) filterWithExtenders(ctx context.Context, pod *v1.Pod, found searched, idx nodeIndex, d *Diagnosis, sc *scoring, record bool) (searched, error) {
	if len(f.extenders) == 0 {
		return found, nil
	}
	feasible := found.nodes
	for _, e := range f.extenders {
		if len(feasible) == 0 {
			break
		}
		if !e.IsFilter() || !e.IsInterested(pod) {
			continue
		}
		res, err := e.Filter(ctx, pod, feasible)
		if err == nil && slices.Contains(res.Nodes, nil) {
			err = fmt.Errorf("extender %q returned a nil node", e.Name())
		}
		if err != nil {
			if e.IsIgnorable() {
				logr.FromContextOrDiscard(ctx).Info("Ignoring an ignorable extender's filter error", "extender", e.Name(), "err", err)
				continue
			}
			return searched{}, err
		}
		for name, msg := range res.FailedAndUnresolvable {
			d.SetNodeStatus(name, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg))
		}
		for name, msg := range res.Failed {
			if _, both := res.FailedAndUnresolvable[name]; !both {
				d.SetNodeStatus(name, fwk.NewStatus(fwk.Unschedulable, msg))
			}
		}
		feasible = res.Nodes
	}
	if record && len(feasible) != len(found.nodes) {
		if d.UnschedulablePlugins == nil {
			d.UnschedulablePlugins = sets.New[string]()
		}
		d.UnschedulablePlugins.Insert(ExtenderName)
	}
	if slices.Equal(feasible, found.nodes) {
		return found, nil
	}
	// The scores computed while filtering no longer line up with the nodes.
	sc.early = false
	out := searched{nodes: feasible, pos: make([]int32, 0, len(feasible))}
	for _, ni := range feasible {
		i, ok := idx.position(ni.Name())
		if !ok {
			return searched{}, fmt.Errorf("an extender returned node %q, which is not one of the nodes", ni.Name())
		}
		out.pos = append(out.pos, int32(i))
	}
	return out, nil
}

// scoreWithExtenders adds the scores of the extenders interested in pod to
// totals and to t, as kube-scheduler does after its score plugins: an
// extender's score of a node, times its weight, times
// MaxNodeScore/MaxExtenderPriority (10), appears under the extender's name
// after the plugins' scores. An interested extender that does not
// prioritize appears with 0 on every node, as in kube-scheduler. A
// Prioritize error, ignorable or not, only means that extender gives no
// scores.
//
// nodes, t's nodes and totals are index-aligned. The extenders are asked
// concurrently; their scores are added in extender order.
func (f *Framework) scoreWithExtenders(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, t *scoreTable, totals []int64) {
	var interested []fwk.Extender
	for _, e := range f.extenders {
		if e.IsInterested(pod) {
			interested = append(interested, e)
		}
	}
	if len(interested) == 0 {
		return
	}
	lists := make([]extenderv1.HostPriorityList, len(interested))
	weights := make([]int64, len(interested))
	var wg sync.WaitGroup
	for k, e := range interested {
		if !e.IsPrioritizer() {
			// Every node, with 0, as kube-scheduler's client answers.
			lists[k] = make(extenderv1.HostPriorityList, len(nodes))
			for i, ni := range nodes {
				lists[k][i].Host = ni.Name()
			}
			continue
		}
		wg.Go(func() {
			list, weight, err := e.Prioritize(ctx, pod, nodes)
			if err != nil {
				logr.FromContextOrDiscard(ctx).V(5).Info("Extender gives no scores: its prioritize call failed", "extender", e.Name(), "err", err)
				return
			}
			lists[k], weights[k] = list, weight
		})
	}
	wg.Wait()

	index := make(map[string]int, len(nodes))
	for i, ni := range nodes {
		index[ni.Name()] = i
	}
	t.ext = make([][]PluginScore, len(nodes))
	for k, list := range lists {
		for _, hp := range list {
			i, ok := index[hp.Host]
			if !ok {
				continue
			}
			score := hp.Score * weights[k] * extenderScoreScale
			totals[i] += score
			t.ext[i] = append(t.ext[i], PluginScore{Name: interested[k].Name(), Score: score})
		}
	}
}

// BindWithExtenders offers the binding of pod to the node named nodeName
// to the framework's extenders, as kube-scheduler does before its own bind
// plugins: the first binding extender interested in the pod binds it. An
// error from an ignorable extender passes the binding on to the next one.
//
// It reports whether an extender took the binding, and that extender's
// error. When none did, the caller binds the pod itself; with client-go,
// by creating a v1.Binding for the pod (Pods(ns).Bind). It returns false
// and an error for a nil pod or an empty node name.
func (f *Framework) BindWithExtenders(ctx context.Context, pod *v1.Pod, nodeName string) (bool, error) {
	if pod == nil {
		return false, errors.New("bind: nil pod")
	}
	if nodeName == "" {
		return false, fmt.Errorf("bind: empty node name for pod %s/%s", pod.Namespace, pod.Name)
	}
	for _, e := range f.extenders {
		if !e.IsBinder() || !e.IsInterested(pod) {
			continue
		}
		err := e.Bind(ctx, &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
		})
		if err != nil && e.IsIgnorable() {
			logr.FromContextOrDiscard(ctx).Info("Ignoring an ignorable extender's bind error", "extender", e.Name(), "err", err)
			continue
		}
		return true, err
	}
	return false, nil
}

// Filter runs the profile's PreFilter and Filter plugins over nodes, as
// Schedule does before scoring, and returns the feasible nodes, in the
// order given, with the Diagnosis of the others. It is what an extender
// serving kubesched plugins answers a filter call with (package
// extender/server).
//
// Unlike Schedule it gives every node a verdict (percentageOfNodesToScore
// does not apply), does not try a nominated node first, and consults no
// extenders. It returns an error for bad input (nil pod, a nil node,
// duplicate names), a cancelled context, or a plugin Error; "no node fits"
// is an empty result, not an error. It does not modify pod or nodes and is
// safe to call concurrently.
func (f *Framework) Filter(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, Diagnosis, error) {
	if pod == nil {
		return nil, Diagnosis{}, errors.New("filter: nil pod")
	}
	if len(nodes) == 0 {
		return nil, Diagnosis{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, Diagnosis{}, err
	}
	idx, err := f.indexSlice(nodes)
	if err != nil {
		return nil, Diagnosis{}, fmt.Errorf("filter: %w", err)
	}
	state := endable(f.newCycleState(nodes, idx))
	defer endCycle(state)
	d := Diagnosis{nodes: idx}
	preRes, status, narrowedBy := f.runPreFilter(ctx, state, pod, nodes)
	if narrowedBy.Len() > 0 {
		d.UnschedulablePlugins = narrowedBy
	}
	if status != nil {
		if !status.IsRejected() {
			return nil, d, status.AsError()
		}
		d.rejectAll(status)
		return nil, d, nil
	}
	s := search{nodes: nodes}
	if !preRes.AllNodes() {
		s.pos = f.narrow(idx, preRes, &d)
	}
	filters := cycleOf(state).plugins.filters
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := s.len()
	statuses := make([]*fwk.Status, n)
	var firstErr atomic.Pointer[fwk.Status]
	parallel.Until(ctx, f.parallelism, n, func(j int) {
		st := runFilters(ctx, filters, state, pod, nodes[s.position(j)])
		if st.IsSuccess() || st.IsRejected() {
			statuses[j] = st
			return
		}
		firstErr.CompareAndSwap(nil, st)
		cancel()
	})
	if st := firstErr.Load(); st != nil {
		return nil, d, st.AsError()
	}
	if err := parent.Err(); err != nil {
		return nil, d, err
	}
	feasible := make([]*nodeinfo.NodeInfo, 0, n)
	for j, st := range statuses {
		ni := nodes[s.position(j)]
		if st != nil {
			d.SetNodeStatus(ni.Name(), st)
			d.addPluginStatus(st)
			continue
		}
		feasible = append(feasible, ni)
	}
	return feasible, d, nil
}

// Score runs the profile's PreScore, Score and NormalizeScore plugins over
// nodes, which are taken to be feasible, applies the weights, and returns
// each node's scores as [Result.NodeScores] does, in the order given.
// PreFilter runs first, since score plugins may read what it computes;
// its verdict is ignored, its errors are not.
//
// It is what an extender serving kubesched plugins answers a prioritize
// call with (package extender/server). It consults no extenders, returns
// an error for bad input, a cancelled context or a plugin error, and is
// safe to call concurrently.
func (f *Framework) Score(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]NodePluginScores, error) {
	if pod == nil {
		return nil, errors.New("score: nil pod")
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx, err := f.indexSlice(nodes)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	state := endable(f.newCycleState(nodes, idx))
	defer endCycle(state)
	if _, s, _ := f.runPreFilter(ctx, state, pod, nodes); s != nil && !s.IsRejected() {
		return nil, s.AsError()
	}
	sc := f.newScoring()
	defer sc.release()
	found := searched{nodes: nodes, pos: make([]int32, len(nodes))}
	for i := range found.pos {
		found.pos[i] = int32(i)
	}
	var t scoreTable
	if _, err := f.scoreNodes(ctx, state, pod, found, sc, idx, &t); err != nil {
		return nil, err
	}
	return t.list(), nil
}
