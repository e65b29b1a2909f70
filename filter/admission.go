package filter

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/taints"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// AdmissionResult is one reason a node cannot admit a pod: a plugin's
// name and reason, or the resource the node lacks.
type AdmissionResult struct {
	// Name is the plugin's name; empty for a resource shortfall.
	Name string
	// Reason is the plugin's reason string; empty for a resource shortfall.
	Reason string
	// InsufficientResource is the resource the node lacks, if that is the
	// reason.
	InsufficientResource *InsufficientResource
}

// AdmissionCheck runs the checks that kube-scheduler shares with the
// kubelet's admission, in its order: resources (nothing ignored), the
// pod's required node affinity and node selector, spec.nodeName, and host
// ports. Without includeAllFailures it stops at the first failing check
// (all of a resource shortfall's resources are still listed). Empty means
// the node admits the pod. A nil pod is admitted; a NodeInfo without a
// node admits nothing (it fails node affinity, node name and resources as
// an empty node would). It is safe for concurrent use.
func AdmissionCheck(pod *v1.Pod, ni *nodeinfo.NodeInfo, includeAllFailures bool) []AdmissionResult {
	if pod == nil {
		return nil
	}
	var results []AdmissionResult
	for _, r := range InsufficientResources(pod, ni) {
		results = append(results, AdmissionResult{InsufficientResource: &r})
	}
	if len(results) > 0 && !includeAllFailures {
		return results
	}
	node := ni.Node()
	checks := []struct {
		ok           bool
		name, reason string
	}{
		{node != nil && nodeaffinity.RequiredOf(pod).Matches(node), names.NodeAffinity, ErrReasonPod},
		{pod.Spec.NodeName == "" || node != nil && pod.Spec.NodeName == node.Name, names.NodeName, ErrReasonNodeName},
		{portsFree(pod, ni), names.NodePorts, ErrReasonNodePorts},
	}
	for _, c := range checks {
		if c.ok {
			continue
		}
		results = append(results, AdmissionResult{Name: c.name, Reason: c.reason})
		if !includeAllFailures {
			return results
		}
	}
	return results
}

func portsFree(pod *v1.Pod, ni *nodeinfo.NodeInfo) bool {
	if ni == nil {
		return true
	}
	for _, p := range nodeinfo.HostPorts(pod) {
		if ni.UsedPorts().CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}

// PreCheckForNode returns the check (a queue.PreEnqueueCheck) that the
// seed's node event handlers pass along with a node's add or update
// event, for queue.PriorityQueue.MoveAllToActiveOrBackoffQueue: a pod moves only if the node
// passes [AdmissionCheck] and has no NoSchedule or NoExecute taint the
// pod does not tolerate. It ignores preemption, so in rare cases (a node
// that grew) a pod it holds back could have fit after preempting; such
// pods move on the next event or timeout.
//
// No supported kube-scheduler release applies it: with queueing hints
// (GA) they pass no check and let each plugin's registered events decide,
// as kubesched's queue does; v1.37 removed it. Use it when registrations
// are coarse and node events frequent. A nil NodeInfo or one without a node holds every pod back.
func PreCheckForNode(ni *nodeinfo.NodeInfo) func(pod *v1.Pod) bool {
	return func(pod *v1.Pod) bool {
		node := ni.Node()
		if pod == nil || node == nil || len(AdmissionCheck(pod, ni, false)) > 0 {
			return false
		}
		return taints.FirstUntolerated(node.Spec.Taints, pod.Spec.Tolerations, false) < 0
	}
}
