package fwk

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// PostFilterPlugin runs when no node fits a pod, to make it fit in a later
// cycle: DefaultPreemption chooses pods to evict, DynamicResources a
// ResourceClaim to deallocate. kubesched changes nothing in the cluster;
// a plugin returns what kube-scheduler would do (a [Preemption], a
// nomination to clear, or [Outputs] under keys of the plugin's own, as
// DynamicResources its claim to deallocate) and the framework hands it to
// the caller in its FitError.
type PostFilterPlugin interface {
	Plugin
	// PostFilter returns Success (nil or with a message) when it made the
	// pod schedulable, which ends the PostFilter phase; Unschedulable,
	// with a reason, when it could not, and the next plugin runs;
	// UnschedulableAndUnresolvable or Error to end the phase with its
	// message. The result, which may be nil, counts whatever the status.
	// filtered holds the verdict on every node; state is the cycle's,
	// after Filter. A plugin that re-runs filters reaches the framework
	// through [HandleOf].
	PostFilter(ctx context.Context, state *CycleState, pod *v1.Pod, filtered NodeToStatus) (*PostFilterResult, *Status)
}

// NodeToStatus holds the Filter phase's verdict on each node of a cycle.
type NodeToStatus interface {
	// NodeStatus returns the verdict on the node called name: nil for a
	// node that passed every filter or that the cycle did not reach.
	NodeStatus(name string) *Status
}

// PostFilterResult is what a PostFilter plugin asks of the caller.
type PostFilterResult struct {
	// Preemption, when set, nominates the pod to a node and names the
	// pods to evict there first.
	Preemption *Preemption
	// ClearNomination asks for the pod's status.nominatedNodeName to be
	// cleared, as kube-scheduler does when preemption finds no node.
	ClearNomination bool
	// Outputs are anything else the plugin leaves for the caller, under
	// keys of its own.
	Outputs Outputs
}

// Preemption is DefaultPreemption's decision for a pod no node fits: the
// node to nominate it to and the pods to evict there first.
type Preemption struct {
	// NominatedNodeName is the node kube-scheduler nominates the pod to:
	// it writes it into the pod's status.nominatedNodeName and schedules
	// the pod there once the victims are gone.
	NominatedNodeName string
	// Victims are the pods to evict on that node, most important first.
	// kube-scheduler marks each with the DisruptionTarget condition
	// (reason PreemptionByScheduler) and deletes it.
	Victims []*v1.Pod
	// NumPDBViolations counts the victims whose eviction a
	// PodDisruptionBudget does not allow.
	NumPDBViolations int
	// NominationsToClear are the pods of lower priority nominated to
	// that node, whose status.nominatedNodeName kube-scheduler clears:
	// the room is the preemptor's now. It clears them as it starts
	// evicting, so none when every victim is already being deleted. The
	// framework fills it from its nominator; plugins leave it empty.
	NominationsToClear []*v1.Pod
}

// Handle is what a framework offers the plugins of its cycles beyond the
// state: re-running the filters on a changed node, its random source,
// its worker count and its extenders. DefaultPreemption's dry run is
// built on it.
type Handle interface {
	// RunFilterPluginsWithNominatedPods runs the filters that take part
	// in the cycle of state on ni for pod, counting the pods nominated to
	// ni, and returns the first rejection.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *Status
	// RunPreFilterExtensionAddPod updates state as if podToAdd had been
	// added to ni, through the PreFilterExtensions of the cycle's
	// PreFilter plugins; the caller adds it to ni.
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podToAdd *nodeinfo.PodInfo, ni *nodeinfo.NodeInfo) *Status
	// RunPreFilterExtensionRemovePod is RunPreFilterExtensionAddPod for
	// a pod removed from ni.
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podToRemove *nodeinfo.PodInfo, ni *nodeinfo.NodeInfo) *Status
	// IntN returns a number in [0, n) from the framework's random
	// source; n must be positive.
	IntN(n int) int
	// Parallelism returns how many goroutines the framework works with.
	Parallelism() int
	// Extenders returns the framework's extenders, in the order they run.
	Extenders() []Extender
}

// handleKey is the slot a framework writes its Handle in.
var handleKey = NewStateKey[Handle]()

// HandleOf returns the framework running the cycle of state; nil for a
// state made outside a framework.
func HandleOf(state *CycleState) Handle {
	h, _ := handleKey.Read(state)
	return h
}

// SetHandle records h as the framework running the cycle of state, for
// [HandleOf]. Frameworks call it as a cycle starts.
func SetHandle(state *CycleState, h Handle) {
	handleKey.Write(state, h)
}

// FitMessage returns kube-scheduler's account of a pod no node fits,
// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had
// untolerated taint(s).": each reason with the number of nodes that gave
// it, sorted as strings. statuses are the verdicts on the nodes rejected
// one by one; the numAllNodes - len(statuses) others share others, which
// may be nil.
func FitMessage(numAllNodes int, statuses map[string]*Status, others *Status) string {
	counts := map[string]int{}
	for _, s := range statuses {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	if rest := numAllNodes - len(statuses); rest > 0 && others != nil {
		for _, r := range others.Reasons() {
			counts[r] += rest
		}
	}
	parts := make([]string, 0, len(counts))
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available:", numAllNodes)
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}
