package framework

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Nominator tells the framework which pending pods are nominated to run on
// which nodes: pods that preemption made room for, waiting for their
// victims to leave. kube-scheduler keeps that room for them, and so does
// [Framework.Schedule] once given a Nominator with [WithNominator].
type Nominator interface {
	// NominatedPods returns, for each node name, the pods nominated to it
	// in the order they were nominated; nil or empty when there are none.
	// Schedule calls it once per cycle and reads the result from several
	// goroutines, so the map and its slices must never change afterwards:
	// return a copy, or a version that later changes replace rather than
	// modify, as [Nominations] does.
	NominatedPods() map[string][]*nodeinfo.PodInfo
}

// WithNominator makes Schedule account for nominated pods as
// kube-scheduler's RunFilterPluginsWithNominatedPods does. On a node with
// pods nominated to it whose priority is at least the pod's (the pod
// itself aside), the filters run twice: first with those pods added to
// the node and to the PreFilter state (through [fwk.PreFilterExtensions]),
// then, if that passes, without them; the node is feasible only if both
// pass, and a rejection reports the first pass that failed. Adding them
// makes resource and anti-affinity checks stricter, leaving them out
// makes affinity checks stricter, and a nominated pod may yet land
// elsewhere, so the pod must fit either way. Lower-priority nominations
// are ignored: the pod may take the room freed for them. Scores are
// computed without nominated pods, as in kube-scheduler.
//
// Nodes without such pods are filtered once, as without a nominator: the
// nominations are read once per cycle, after PreFilter, and a cycle
// without any relevant one costs nothing more. [Framework.Filter] does not
// consult the nominator. A later WithNominator replaces an earlier one.
func WithNominator(n Nominator) Option {
	return func(c *config) error {
		if n == nil {
			return errors.New("WithNominator: nil nominator")
		}
		c.nominator = n
		return nil
	}
}

// nominatedPodsKey holds, for the cycle's pod, the nominated pods that
// count on each node: those of equal or higher priority, other than the
// pod itself. It is written only when some node has one.
var nominatedPodsKey = fwk.NewStateKey[map[string][]*nodeinfo.PodInfo]()

// recordNominations keeps in state, for the cycle's pod, the nominations
// that count for it on each node. Schedule calls it after PreFilter.
func (f *Framework) recordNominations(state *fwk.CycleState, pod *v1.Pod) {
	if f.nominator == nil {
		return
	}
	all := f.nominator.NominatedPods()
	if len(all) == 0 {
		return
	}
	priority := corev1helpers.PodPriority(pod)
	var counted map[string][]*nodeinfo.PodInfo
	for node, pods := range all {
		var keep []*nodeinfo.PodInfo
		for _, pi := range pods {
			if corev1helpers.PodPriority(pi.Pod) >= priority && !samePod(pi.Pod, pod) {
				keep = append(keep, pi)
			}
		}
		if len(keep) > 0 {
			if counted == nil {
				counted = map[string][]*nodeinfo.PodInfo{}
			}
			counted[node] = keep
		}
	}
	if counted != nil {
		nominatedPodsKey.Write(state, counted)
	}
}

// runFiltersWithNominatedPods is runFilters with kube-scheduler's two
// passes, for a node with nominated pods that count for pod (see
// [WithNominator]): the node must pass with them added, then without.
func (f *Framework) runFiltersWithNominatedPods(ctx context.Context, filters []fwk.FilterPlugin, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, pods []*nodeinfo.PodInfo) *fwk.Status {
	withState, withNode, err := f.addNominatedPods(ctx, state, pod, ni, pods)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s := runFilters(ctx, filters, withState, pod, withNode); !s.IsSuccess() {
		return s
	}
	return runFilters(ctx, filters, state, pod, ni)
}

// addNominatedPods returns copies of state and ni with pods added, through
// the PreFilterExtensions of the plugins that did not skip.
func (f *Framework) addNominatedPods(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, pods []*nodeinfo.PodInfo) (*fwk.CycleState, *nodeinfo.NodeInfo, error) {
	node := ni.Clone()
	withState := state.Clone()
	extensions := f.extensions(state)
	for _, pi := range pods {
		node.AddPodInfo(pi)
		for _, ext := range extensions {
			if s := ext.AddPod(ctx, withState, pod, pi, node); !s.IsSuccess() {
				return nil, nil, fmt.Errorf("running AddPod on PreFilter plugin %q: %w", ext.name, s.AsError())
			}
		}
	}
	return withState, node, nil
}

// filtersOf returns the Filter plugins state's cycle runs: all of f's for a
// state that no cycle of f made.
func (f *Framework) filtersOf(state *fwk.CycleState) []fwk.FilterPlugin {
	d := cycleOf(state)
	if d == nil || d.plugins == nil || d.fw != f {
		return f.cyclePlugins(skipSet{}).filters
	}
	return d.plugins.filters
}

// extensions returns the PreFilterExtensions state's cycle runs: all of
// f's for a state that no cycle of f made.
func (f *Framework) extensions(state *fwk.CycleState) []namedExtensions {
	d := cycleOf(state)
	if d == nil || d.plugins == nil || d.fw != f {
		return f.cyclePlugins(skipSet{}).extensions
	}
	return d.plugins.extensions
}

// samePod matches pods by UID, or by namespace and name when either has
// no UID.
func samePod(a, b *v1.Pod) bool {
	if a.UID != "" && b.UID != "" {
		return a.UID == b.UID
	}
	return a.Namespace == b.Namespace && a.Name == b.Name
}

// Nominations records which node each pending pod is nominated to: the
// node preemption made room on, or the pod's status.nominatedNodeName.
// It is the [Nominator] a scheduling loop keeps up to date from its
// queue (package queue keeps one) and hands to [WithNominator].
//
// It is safe for concurrent use. Readers get immutable versions, replaced
// on every change, so a scheduling cycle reading nominations never holds
// up the event handlers changing them. Pods are matched by UID, or by
// namespace and name without one. Methods given a nil pod do nothing.
type Nominations struct {
	mu sync.Mutex
	// nodeOf maps pod keys to the node each is nominated to.
	nodeOf map[string]string
	// byNode is the current version; never modified once stored.
	byNode atomic.Pointer[map[string][]*nodeinfo.PodInfo]
}

var _ Nominator = (*Nominations)(nil)

// NewNominations returns an empty set of nominations.
func NewNominations() *Nominations {
	return &Nominations{nodeOf: map[string]string{}}
}

// Add nominates pod to nodeName, replacing any earlier nomination of it.
// An empty nodeName takes the pod's status.nominatedNodeName; when that
// is empty too, the pod's nomination is removed. A pod already bound
// (spec.nodeName set) is not nominated, as in kube-scheduler.
func (n *Nominations) Add(pod *v1.Pod, nodeName string) {
	if pod == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.set(pod, nodeName)
}

// Update records a pending pod's new state, keeping its nomination: a pod
// nominated to a node by Add keeps it when neither state names a
// nominated node (the API may not show it yet); otherwise newPod's
// status.nominatedNodeName decides.
func (n *Nominations) Update(oldPod, newPod *v1.Pod) {
	if oldPod == nil || newPod == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	nodeName := ""
	if oldPod.Status.NominatedNodeName == "" && newPod.Status.NominatedNodeName == "" {
		nodeName = n.nodeOf[nominationKey(oldPod)]
	}
	n.remove(oldPod)
	n.set(newPod, nodeName)
}

// Delete removes pod's nomination, if any.
func (n *Nominations) Delete(pod *v1.Pod) {
	if pod == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.remove(pod)
}

// NominatedNodeName returns the node pod is nominated to, or "".
func (n *Nominations) NominatedNodeName(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nodeOf[nominationKey(pod)]
}

// NominatedPodsForNode returns the pods nominated to nodeName, in the
// order nominated. The slice is shared: do not modify it.
func (n *Nominations) NominatedPodsForNode(nodeName string) []*nodeinfo.PodInfo {
	return n.NominatedPods()[nodeName]
}

// NominatedPods implements [Nominator]. The map is an immutable version:
// later changes replace it.
func (n *Nominations) NominatedPods() map[string][]*nodeinfo.PodInfo {
	if m := n.byNode.Load(); m != nil {
		return *m
	}
	return nil
}

// set nominates pod (not nominated now) to nodeName, or to its
// status.nominatedNodeName when nodeName is empty.
func (n *Nominations) set(pod *v1.Pod, nodeName string) {
	n.remove(pod)
	if nodeName == "" {
		nodeName = pod.Status.NominatedNodeName
	}
	if nodeName == "" || pod.Spec.NodeName != "" {
		return
	}
	n.nodeOf[nominationKey(pod)] = nodeName
	next := maps.Clone(n.NominatedPods())
	if next == nil {
		next = map[string][]*nodeinfo.PodInfo{}
	}
	next[nodeName] = append(slices.Clip(next[nodeName]), nodeinfo.NewPodInfo(pod))
	n.byNode.Store(&next)
}

func (n *Nominations) remove(pod *v1.Pod) {
	key := nominationKey(pod)
	nodeName, ok := n.nodeOf[key]
	if !ok {
		return
	}
	delete(n.nodeOf, key)
	next := maps.Clone(n.NominatedPods())
	pods := slices.DeleteFunc(slices.Clone(next[nodeName]), func(pi *nodeinfo.PodInfo) bool { return nominationKey(pi.Pod) == key })
	if len(pods) == 0 {
		delete(next, nodeName)
	} else {
		next[nodeName] = pods
	}
	n.byNode.Store(&next)
}

func nominationKey(pod *v1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}
