package fwk

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Score bounds: a Score plugin's scores, after NormalizeScore, must lie in
// [MinNodeScore, MaxNodeScore].
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
)

// Plugin is anything with a name. A plugin takes part in the phases whose
// interfaces it implements; the framework finds them by type assertion.
type Plugin interface {
	// Name is the plugin's name as kube-scheduler reports it, for example
	// "NodeResourcesFit".
	Name() string
}

// PreFilterPlugin runs once per pod before any Filter call, to check the
// pod on its own and to compute what its Filter needs on every node.
type PreFilterPlugin interface {
	Plugin
	// PreFilter may return a [PreFilterResult] naming the only nodes worth
	// filtering (nil means all), Skip to have its Filter not called for this
	// pod, or a rejection, which rejects the pod on every node. nodes are
	// all the nodes of the cycle. It must not modify them. The framework
	// keeps a returned result's NodeNames (a Result's Diagnosis reads it):
	// return a set the plugin never changes afterwards.
	PreFilter(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*PreFilterResult, *Status)
}

// PreEnqueuePlugin decides whether kube-scheduler tries to schedule a pod
// at all: a pod it turns down waits in the scheduling queue and never
// reaches PreFilter. framework.Framework.Schedule runs these plugins
// first and returns a *framework.NotTriedError for a pod one turns down;
// package queue keeps
// such pods out of its active queue.
type PreEnqueuePlugin interface {
	Plugin
	// PreEnqueue returns nil to admit pod, and a non-nil Status, usually
	// UnschedulableAndUnresolvable, to turn it down. listers are the
	// cluster objects the framework (or queue) was given. It must not
	// modify pod.
	PreEnqueue(ctx context.Context, listers Listers, pod *v1.Pod) *Status
}

// PreFilterExtensions is implemented by PreFilter plugins whose per-pod
// state depends on the pods already placed: it updates that state as if a
// pod were added to or removed from a node, so that callers can evaluate
// "what if" placements (nominated pods, preemption victims) without
// running PreFilter again. Both work on a state the caller owns; clone it
// first ([CycleState.Clone]) to keep the original.
type PreFilterExtensions interface {
	PreFilterPlugin
	// AddPod updates state, which the plugin's PreFilter wrote for
	// podToSchedule, as if podToAdd ran on node. A non-nil status is an
	// Error.
	AddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podToAdd *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *Status
	// RemovePod updates state as if podToRemove, which runs on node, were
	// gone. A non-nil status is an Error.
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podToRemove *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *Status
}

// FilterPlugin decides whether a pod may run on one node.
type FilterPlugin interface {
	Plugin
	// Filter returns nil if the pod fits node, a rejection with kube-scheduler's
	// reasons if not, or Error for broken input. It is called concurrently for
	// different nodes and must not modify pod, node or state.
	Filter(ctx context.Context, state *CycleState, pod *v1.Pod, node *nodeinfo.NodeInfo) *Status
}

// PreScorePlugin runs once per pod before scoring, with the feasible nodes.
type PreScorePlugin interface {
	Plugin
	// PreScore may return Skip to have its Score not called for this pod.
	// It must not modify nodes.
	PreScore(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) *Status
}

// ScorePlugin ranks a feasible node for a pod.
type ScorePlugin interface {
	Plugin
	// Score returns the node's raw score. Unless the plugin also normalizes,
	// it must lie in [MinNodeScore, MaxNodeScore]. Called concurrently for
	// different nodes.
	Score(ctx context.Context, state *CycleState, pod *v1.Pod, node *nodeinfo.NodeInfo) (int64, *Status)
}

// NormalizeScorePlugin rescales a ScorePlugin's raw scores once all nodes
// are scored, for example relative to the best node.
type NormalizeScorePlugin interface {
	ScorePlugin
	// NormalizeScore rewrites scores in place into [MinNodeScore,
	// MaxNodeScore]; scores[i] is the raw score of nodes[i]. Plain integers
	// rather than (name, score) pairs keep the per-node score buffers free of
	// pointers, which the garbage collector then never scans.
	NormalizeScore(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, scores []int64) *Status
}

// NodeLocalPlugin is implemented by a Filter or Score plugin that says
// for which pods it is node-local: its Filter verdict and its Score on a
// node depend only on the pod, the plugin's own configuration, the number
// of nodes in the cycle and that node's NodeInfo, which its Generation
// names — never on other nodes, listers or cluster objects. The framework
// then remembers those verdicts and scores per pod shape and node
// generation, so that placing pod after pod of one kind, where one node
// changes per placement, asks the plugin about that node alone. A plugin
// that does not implement it is never treated as node-local.
//
// A node-local plugin that normalizes its scores must, when every node
// scores 0, give every node the normalized score it gives a single node
// scoring 0: the framework then normalizes that one 0 instead of a score
// per node.
type NodeLocalPlugin interface {
	Plugin
	// NodeLocal reports whether the plugin is node-local for pod. It is
	// called once per pod and plugin, and must not modify pod.
	NodeLocal(pod *v1.Pod) bool
}

// ReservePlugin is told the chosen node once per placement, as
// kube-scheduler's Reserve extension point is, and records in out (the
// Result's [Outputs]), under keys of its own, what the placement takes
// there beyond the pod itself (DynamicResources the ResourceClaims it
// allocates). It is not called when the pod fits nowhere.
type ReservePlugin interface {
	Plugin
	// Reserve may add to out; a non-nil status fails the placement with
	// that status as the error.
	Reserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string, out *Outputs) *Status
}

// PreFilterResult narrows the nodes worth filtering. A nil result, or one
// with nil NodeNames, means every node.
type PreFilterResult struct {
	// NodeNames are the names of the nodes worth filtering; the others
	// are rejected without running Filter. Nil means every node, and an
	// empty set none.
	NodeNames sets.Set[string]
}

// AllNodes reports whether the result keeps every node.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	switch {
	case r.AllNodes() && o.AllNodes():
		return nil
	case r.AllNodes():
		return &PreFilterResult{NodeNames: o.NodeNames.Clone()}
	case o.AllNodes():
		return &PreFilterResult{NodeNames: r.NodeNames.Clone()}
	}
	return &PreFilterResult{NodeNames: r.NodeNames.Intersection(o.NodeNames)}
}
