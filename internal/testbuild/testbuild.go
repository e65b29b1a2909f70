// Package testbuild holds the small builders the plugin tests of several
// packages share, so that a filter and its scorer are tested on the same
// objects. It is imported by tests only.
package testbuild

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesched/kubesched/nodeinfo"
)

// List builds a ResourceList from name, quantity pairs.
func List(kv ...string) v1.ResourceList {
	rl := v1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		rl[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

// PodBuilder grows a pod one part at a time; each part's requests are
// name, quantity pairs.
type PodBuilder struct{ *v1.Pod }

// Pod returns a pod with one container ("c0") requesting reqs.
func Pod(reqs ...string) PodBuilder {
	return PodBuilder{&v1.Pod{}}.Container(reqs...)
}

// Container adds a container.
func (b PodBuilder) Container(reqs ...string) PodBuilder {
	name := fmt.Sprintf("c%d", len(b.Spec.Containers))
	b.Spec.Containers = append(b.Spec.Containers, v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: List(reqs...)}})
	return b
}

// Init adds an init container.
func (b PodBuilder) Init(reqs ...string) PodBuilder {
	name := fmt.Sprintf("i%d", len(b.Spec.InitContainers))
	b.Spec.InitContainers = append(b.Spec.InitContainers, v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: List(reqs...)}})
	return b
}

// Sidecar adds a restartable init container.
func (b PodBuilder) Sidecar(reqs ...string) PodBuilder {
	b = b.Init(reqs...)
	always := v1.ContainerRestartPolicyAlways
	b.Spec.InitContainers[len(b.Spec.InitContainers)-1].RestartPolicy = &always
	return b
}

// Overhead sets the pod overhead.
func (b PodBuilder) Overhead(reqs ...string) PodBuilder {
	b.Spec.Overhead = List(reqs...)
	return b
}

// PodLevel sets pod-level requests.
func (b PodBuilder) PodLevel(reqs ...string) PodBuilder {
	b.Spec.Resources = &v1.ResourceRequirements{Requests: List(reqs...)}
	return b
}

// Resized reports reqs as the first container's actual requests, as the
// kubelet does after an in-place resize.
func (b PodBuilder) Resized(reqs ...string) PodBuilder {
	b.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", Resources: &v1.ResourceRequirements{Requests: List(reqs...)}}}
	return b
}

// NodeWith returns a NodeInfo for a node named "node" with the given
// allocatable, running the given pods.
func NodeWith(allocatable v1.ResourceList, running ...*v1.Pod) *nodeinfo.NodeInfo {
	node := &v1.Node{Status: v1.NodeStatus{Allocatable: allocatable}}
	node.Name = "node"
	return nodeinfo.New(node, running...)
}
