package conformance

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// PerfWorkload is a cluster shaped like kube-scheduler's scheduler_perf
// tests and the pod to place in it, for side-by-side timing.
type PerfWorkload struct {
	// Name is the scheduler_perf workload it imitates.
	Name  string
	Nodes []*v1.Node
	// Pods are bound, spread round-robin over Nodes.
	Pods []*v1.Pod
	Pod  *v1.Pod
}

// perfZones are the zones perf nodes are spread over.
var perfZones = []string{"zone-0", "zone-1", "zone-2"}

// PerfWorkloads returns the Basic and NodeAffinity workloads over numNodes
// nodes of 4 CPU, 32Gi and 110 pods, spread over three zones, running
// numPods pods of 100m and 500Mi. Basic's pod asks for 100m and 500Mi;
// NodeAffinity's also requires one of two zones, so a third of the nodes
// are filtered out.
func PerfWorkloads(numNodes, numPods int) []PerfWorkload {
	nodes := make([]*v1.Node, numNodes)
	for i := range nodes {
		nodes[i] = perfNode(fmt.Sprintf("node-%d", i), perfZones[i%len(perfZones)])
	}
	pods := make([]*v1.Pod, numPods)
	for i := range pods {
		pods[i] = perfPod(fmt.Sprintf("running-%d", i))
		pods[i].Spec.NodeName = nodes[i%numNodes].Name
	}

	affinityPod := perfPod("incoming")
	ensureNodeAffinity(affinityPod).RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
			Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: perfZones[:2],
		}}}},
	}
	return []PerfWorkload{
		{Name: "Basic", Nodes: nodes, Pods: pods, Pod: perfPod("incoming")},
		{Name: "NodeAffinity", Nodes: nodes, Pods: pods, Pod: affinityPod},
	}
}

func perfNode(name, zone string) *v1.Node {
	allocatable := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{
			v1.LabelHostname: name, v1.LabelTopologyZone: zone,
		}},
		Status: v1.NodeStatus{Allocatable: allocatable, Capacity: allocatable},
	}
}

func perfPod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:  "pause",
			Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("100m"),
				v1.ResourceMemory: resource.MustParse("500Mi"),
			}},
		}}},
	}
}

// SelectHost schedules pod on the cluster installed by [Oracle.SetCluster]
// the way upstream's schedulePod does: PreFilter, Filter, PreScore and Score
// over every node, as in [Oracle.Run], then the feasible node with the
// highest total score (the first one on ties, where upstream picks at
// random). It returns upstream's *FitError when no node fits. It must not
// be called concurrently with [Oracle.Run].
func (o *Oracle) SelectHost(ctx context.Context, pod *v1.Pod) (string, error) {
	c, err := o.cycle(ctx, pod)
	if err != nil {
		return "", err
	}
	switch {
	case len(c.Feasible) == 0:
		return "", &schedframework.FitError{Pod: pod, NumAllNodes: len(c.all), Diagnosis: c.Diagnosis}
	case c.Scores == nil:
		return c.Feasible[0].Node().Name, nil
	}
	best := c.Scores[0]
	for _, s := range c.Scores[1:] {
		if s.TotalScore > best.TotalScore {
			best = s
		}
	}
	return best.Name, nil
}
