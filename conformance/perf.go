//go:build !kubernetes_1_36

package conformance

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
)

// PerfWorkload is a cluster shaped like kube-scheduler's scheduler_perf
// tests and the pod to place in it, for side-by-side timing.
type PerfWorkload struct {
	// Name is the workload, one of [PerfWorkloadNames].
	Name string
	// Nodes are the cluster's nodes.
	Nodes []*v1.Node
	// Pods are bound, spread round-robin over Nodes (for Preemption,
	// filling every node).
	Pods []*v1.Pod
	// Pod is the pending pod to place.
	Pod *v1.Pod
	// Objects are the cluster objects the workload needs besides nodes and
	// pods (testcluster.Objects): for DRA, the DeviceClass, a ResourceSlice
	// per node and the claims; for Preemption, PodDisruptionBudgets; none
	// for the others.
	Objects []runtime.Object
}

// PerfWorkloadNames are the workloads timed side by side: those of
// testcluster.Workloads, whose pod fits some node, then
// testcluster.Preemption, whose pod fits none, so that its scheduling
// attempt goes on to PostFilter and DefaultPreemption.
var PerfWorkloadNames = append(slices.Clone(testcluster.Workloads), testcluster.Preemption)

// PerfWorkloads returns every workload of [PerfWorkloadNames] over
// numNodes nodes of 4 CPU, 32Gi and 110 pods, spread over three zones,
// running numPods pods of 100m and 500Mi (of the workload's own kind for
// the pod-affinity workloads). Basic's pod asks for 100m and 500Mi;
// NodeAffinity's also requires one of two zones, so a third of the nodes
// are filtered out, and prefers one of them; see testcluster.Pod for the
// others. Preemption ignores numPods: its nodes are full
// (testcluster.PreemptionPods).
//
// The clusters come from internal/testcluster, which the root module's
// benchmarks build theirs with, so both time exactly the same clusters.
// NodeAffinity's preferred term makes NodeAffinity score as well as
// filter, as in scheduler_perf; it costs both schedulers alike.
// numNodes must be positive.
func PerfWorkloads(numNodes, numPods int) []PerfWorkload {
	perf := make([]PerfWorkload, len(PerfWorkloadNames))
	for i, name := range PerfWorkloadNames {
		perf[i] = NewPerfWorkload(name, numNodes, numPods)
	}
	return perf
}

// NewPerfWorkload builds one workload of [PerfWorkloads], for callers that
// time one workload at a time and want the others' clusters not to weigh
// on the garbage collector meanwhile.
func NewPerfWorkload(name string, numNodes, numPods int) PerfWorkload {
	nodes := testcluster.Nodes(numNodes, name)
	var pods []*v1.Pod
	if name == testcluster.Preemption {
		pods = testcluster.PreemptionPods(nodes)
	} else {
		pods = testcluster.ExistingPods(numPods, nodes, name)
	}
	return PerfWorkload{
		Name:    name,
		Nodes:   nodes,
		Pods:    pods,
		Pod:     testcluster.Pod("incoming", name),
		Objects: testcluster.Objects(nodes, pods, "incoming", name),
	}
}

// DecisionOf returns kubesched's decision as fe records it.
func DecisionOf(fe *framework.FitError) PreemptionDecision {
	d := PreemptionDecision{Message: fe.Error()}
	if p := fe.Preemption; p != nil {
		d.NominatedNodeName, d.Victims, d.NumPDBViolations = p.NominatedNodeName, victimNames(p.Victims), p.NumPDBViolations
	}
	return d
}
