// Package testcluster builds the scheduler_perf-shaped clusters that the
// benchmarks here and the side-by-side comparison in conformance/ share, so
// both always measure the same thing.
package testcluster

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Zones is how many zones the nodes are spread over.
const Zones = 3

// ZoneLabel is the well-known zone label.
const ZoneLabel = "topology.kubernetes.io/zone"

// Workload names, after kube-scheduler's scheduler_perf.
const (
	Basic                = "Basic"
	NodeAffinity         = "NodeAffinity"
	Taints               = "Taints"
	TopologySpreading    = "TopologySpreading"
	PodAntiAffinity      = "PodAntiAffinity"
	PreferredPodAffinity = "PreferredPodAffinity"
	// Pinned is a DaemonSet's pod: its required node affinity names one
	// node by metadata.name, which kube-scheduler's NodeAffinity PreFilter
	// turns into a PreFilterResult of that node, so only one node is
	// filtered and nothing is scored. It times what a scheduler spends per
	// pod regardless of the cluster's size.
	Pinned = "Pinned"
	// DRA is a pod claiming one GPU through a ResourceClaimTemplate, on
	// nodes that each publish [GPUsPerNode] GPUs in a ResourceSlice; each
	// existing pod holds one. Its cluster objects come from [Objects].
	DRA = "DRA"
	// Preemption is a pod of priority [PreemptorPriority] asking for a
	// CPU on nodes that pods of priority 0 to 10 fill
	// ([PreemptionPods]), some of them under PodDisruptionBudgets
	// ([Objects]): no node fits it, and DefaultPreemption nominates it to
	// a node where evicting one to three pods makes room. It is not in
	// [Workloads], whose pods fit.
	Preemption = "Preemption"
)

// PinnedNode is the node the Pinned workload's pod is bound to. It is the
// first node [Nodes] returns, so it exists in every cluster whatever its
// size, and it carries no taint in any workload's cluster but Taints'.
const PinnedNode = "node-00000"

// Workloads lists the workloads the benchmarks run: those whose pod fits
// some node.
var Workloads = []string{Basic, NodeAffinity, Taints, TopologySpreading, PodAntiAffinity, PreferredPodAffinity, Pinned, DRA}

// podAffinityWorkload reports whether a workload's running pods are its own
// kind of pod (labelled, with affinity terms), as in scheduler_perf.
func podAffinityWorkload(workload string) bool {
	return workload == TopologySpreading || workload == PodAntiAffinity || workload == PreferredPodAffinity
}

// Nodes returns n nodes of 4 CPU, 32Gi and 110 pods, round-robin over
// Zones zones, each with a hostname label. For the Taints workload every
// third node has a NoSchedule taint and every other node a
// PreferNoSchedule one.
func Nodes(n int, workload string) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		// PinnedNode is this name for i == 0.
		name := fmt.Sprintf("node-%05d", i)
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"kubernetes.io/hostname": name,
				ZoneLabel:                fmt.Sprintf("zone-%d", i%Zones),
			}},
			Status: v1.NodeStatus{
				Allocatable: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("4"),
					v1.ResourceMemory: resource.MustParse("32Gi"),
					v1.ResourcePods:   resource.MustParse("110"),
				},
			},
		}
		node.Status.Capacity = node.Status.Allocatable
		if workload == Taints {
			if i%3 == 0 {
				node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule})
			}
			if i%2 == 0 {
				node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule})
			}
		}
		nodes[i] = node
	}
	return nodes
}

// ExistingPods returns n pods of 100m / 500Mi bound round-robin to nodes:
// for the pod-affinity workloads, pods of the workload's own kind; plain
// pods otherwise.
func ExistingPods(n int, nodes []*v1.Node, workload string) []*v1.Pod {
	kind := Basic
	if podAffinityWorkload(workload) || workload == DRA {
		kind = workload
	}
	pods := make([]*v1.Pod, n)
	for i := range pods {
		p := Pod(fmt.Sprintf("existing-%05d", i), kind)
		p.Spec.NodeName = nodes[i%len(nodes)].Name
		pods[i] = p
	}
	return pods
}

// Pod returns a pending pod of 100m / 500Mi for workload: NodeAffinity
// requires two of the three zones and prefers one; Taints tolerates the
// NoSchedule taint; TopologySpreading spreads over zones with maxSkew 5
// (DoNotSchedule); PodAntiAffinity repels pods of its kind from its node;
// PreferredPodAffinity prefers nodes already running pods of its kind. The
// last three carry the label app=<workload>. Pinned requires the node
// [PinnedNode] by a matchFields term on metadata.name and carries the
// tolerations the DaemonSet controller adds to its pods, as the
// controller would create it for that node. DRA claims one GPU through a
// template (see [Objects]). Preemption asks for 1 CPU and 2Gi at priority
// [PreemptorPriority].
func Pod(name, workload string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:  "c",
			Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("100m"),
				v1.ResourceMemory: resource.MustParse("500Mi"),
			}},
		}}},
	}
	switch workload {
	case NodeAffinity:
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: ZoneLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"zone-0", "zone-1"}}},
			}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight:     10,
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: ZoneLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"zone-1"}}}},
			}},
		}}
	case Taints:
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule}}
	case TopologySpreading:
		p.Labels = map[string]string{"app": workload}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 5, TopologyKey: ZoneLabel, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: p.Labels},
		}}
	case PodAntiAffinity:
		p.Labels = map[string]string{"app": workload}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: p.Labels},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}}
	case PreferredPodAffinity:
		p.Labels = map[string]string{"app": workload}
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
				Weight: 1,
				PodAffinityTerm: v1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchLabels: p.Labels},
					TopologyKey:   "kubernetes.io/hostname",
				},
			}},
		}}
	case Pinned:
		// The DaemonSet controller pins each pod to its node with a
		// matchFields term on the node's name, not with spec.nodeName,
		// so that the pod still goes through the scheduler.
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{PinnedNode}}},
			}}},
		}}
		p.Spec.Tolerations = daemonTolerations()
	case DRA:
		draPod(p)
	case Preemption:
		p.Spec.Priority = new(PreemptorPriority)
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("1"),
			v1.ResourceMemory: resource.MustParse("2Gi"),
		}
	}
	return p
}

// daemonTolerations returns the tolerations kube-scheduler v1.36's
// DaemonSet controller gives every pod it creates (pkg/controller/daemon/util,
// AddOrUpdateDaemonPodTolerations) for a pod without host networking: its
// pods must survive a node's problems that evict or repel other pods.
func daemonTolerations() []v1.Toleration {
	exists := func(key string, effect v1.TaintEffect) v1.Toleration {
		return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
	}
	return []v1.Toleration{
		exists(v1.TaintNodeNotReady, v1.TaintEffectNoExecute),
		exists(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute),
		exists(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule),
	}
}

// Requests returns resource requirements requesting kv's resources:
// names and quantities in turn ("cpu", "250m", "memory", "1Gi").
func Requests(kv ...string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{Requests: v1.ResourceList{}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Requests[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return r
}
