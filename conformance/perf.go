package conformance

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/testcluster"
)

// PerfWorkload is a cluster shaped like kube-scheduler's scheduler_perf
// tests and the pod to place in it, for side-by-side timing.
type PerfWorkload struct {
	// Name is the workload, one of testcluster.Workloads.
	Name string
	// Nodes are the cluster's nodes.
	Nodes []*v1.Node
	// Pods are bound, spread round-robin over Nodes.
	Pods []*v1.Pod
	// Pod is the pending pod to place.
	Pod *v1.Pod
	// Objects are the cluster objects the workload needs besides nodes and
	// pods (testcluster.Objects): for DRA, the DeviceClass, a ResourceSlice
	// per node and the claims; none for the others.
	Objects []runtime.Object
}

// PerfWorkloads returns every workload of testcluster.Workloads over
// numNodes nodes of 4 CPU, 32Gi and 110 pods, spread over three zones,
// running numPods pods of 100m and 500Mi (of the workload's own kind for
// the pod-affinity workloads). Basic's pod asks for 100m and 500Mi;
// NodeAffinity's also requires one of two zones, so a third of the nodes
// are filtered out, and prefers one of them; see testcluster.Pod for the
// others.
//
// The clusters come from internal/testcluster, which the root module's
// benchmarks build theirs with, so both time exactly the same clusters.
// NodeAffinity's preferred term makes NodeAffinity score as well as
// filter, as in scheduler_perf; it costs both schedulers alike.
// numNodes must be positive.
func PerfWorkloads(numNodes, numPods int) []PerfWorkload {
	perf := make([]PerfWorkload, len(testcluster.Workloads))
	for i, name := range testcluster.Workloads {
		perf[i] = NewPerfWorkload(name, numNodes, numPods)
	}
	return perf
}

// NewPerfWorkload builds one workload of [PerfWorkloads], for callers that
// time one workload at a time and want the others' clusters not to weigh
// on the garbage collector meanwhile.
func NewPerfWorkload(name string, numNodes, numPods int) PerfWorkload {
	nodes := testcluster.Nodes(numNodes, name)
	pods := testcluster.ExistingPods(numPods, nodes, name)
	return PerfWorkload{
		Name:    name,
		Nodes:   nodes,
		Pods:    pods,
		Pod:     testcluster.Pod("incoming", name),
		Objects: testcluster.Objects(nodes, pods, "incoming", name),
	}
}
