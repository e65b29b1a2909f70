package fwk

import (
	"context"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Extender is a scheduler extender: a decision-maker outside the profile
// that kube-scheduler consults after its filters (to narrow the feasible
// nodes), after its scores (to add its own) and, optionally, to bind. It
// is a framework's view of an entry of KubeSchedulerConfiguration's
// `extenders:`; package extender implements it over HTTP, and a simulation
// may implement it in process.
//
// Implementations must be safe for concurrent use: concurrent Schedule
// calls share them, and the Prioritize calls of several extenders run at
// once. They must not modify the pod or the nodes.
type Extender interface {
	// Name identifies the extender in NodePluginScores and logs;
	// kube-scheduler names an HTTP extender by its URL prefix.
	Name() string
	// IsInterested reports whether the extender takes part in scheduling
	// pod at all. If not, none of its other methods is called for pod.
	IsInterested(pod *v1.Pod) bool
	// IsIgnorable reports whether an error from Filter or Bind should skip
	// the extender instead of failing the pod.
	IsIgnorable() bool
	// IsFilter, IsPrioritizer and IsBinder report the phases the extender
	// takes part in. Filter, Prioritize and Bind are called only for them.
	IsFilter() bool
	IsPrioritizer() bool
	IsBinder() bool
	// Filter returns the nodes among nodes where pod may run, and why the
	// others may not. It is called with the nodes that passed the filters
	// and the extenders before it; it must neither keep nor change the
	// slice.
	Filter(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (ExtenderFilterResult, error)
	// Prioritize scores nodes for pod and returns the weight the scores are
	// multiplied by. Scores are meant to lie in
	// [extenderv1.MinExtenderPriority, extenderv1.MaxExtenderPriority], but,
	// as in kube-scheduler, nothing checks them. Hosts not among nodes are
	// ignored.
	Prioritize(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (scores extenderv1.HostPriorityList, weight int64, err error)
	// Bind binds the pod binding names to binding.Target.Name: it is the
	// extender's job to tell the API server.
	Bind(ctx context.Context, binding *v1.Binding) error
}

// PreemptionExtender is an [Extender] that takes part in preemption, as
// an HTTP extender with a preemptVerb does: DefaultPreemption hands it
// the candidate nodes with their victims, and keeps only the nodes (and
// victims) it returns.
type PreemptionExtender interface {
	Extender
	// SupportsPreemption reports whether ProcessPreemption may be called.
	SupportsPreemption() bool
	// ProcessPreemption returns the candidates the extender accepts, with
	// the victims it wants evicted on each; every node it returns must
	// have at least one victim. nodeInfo looks up the cycle's nodes, to
	// find the pods an extender names by UID.
	ProcessPreemption(ctx context.Context, pod *v1.Pod, victims map[string]*extenderv1.Victims, nodeInfo func(name string) (*nodeinfo.NodeInfo, bool)) (map[string]*extenderv1.Victims, error)
}

// ExtenderFilterResult is an extender's answer to [Extender.Filter].
type ExtenderFilterResult struct {
	// Nodes are the nodes that pass, in the extender's order. They need not
	// be the NodeInfos the extender was given: kube-scheduler's HTTP
	// extender, when an extender answers with Node objects rather than
	// names, wraps each in a new NodeInfo that holds no pods, and the score
	// plugins then see those.
	Nodes []*nodeinfo.NodeInfo
	// Failed maps the names of rejected nodes to the extender's message.
	// They are Unschedulable: preemption might make room.
	Failed map[string]string
	// FailedAndUnresolvable maps the names of nodes that preemption would
	// not help to the extender's message. A node in both maps counts here.
	FailedAndUnresolvable map[string]string
}
