package cache

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/nodeinfo"
)

func newCache(t interface{ Fatal(...any) }, opts ...Option) *Cache {
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func node(name, zone string, images ...string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
	if zone != "" {
		n.Labels[v1.LabelTopologyZone] = zone
	}
	for _, img := range images {
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{img}, SizeBytes: 100 << 20})
	}
	return n
}

func pod(uid, nodeName, cpu string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-" + uid, Namespace: "default", UID: types.UID(uid)},
		Spec:       v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "c"}}},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

func names(infos []*nodeinfo.NodeInfo) []string {
	out := make([]string, len(infos))
	for i, ni := range infos {
		out[i] = ni.Name()
	}
	return out
}

// diffNodeInfo describes how got differs from want in what plugins read,
// or returns "". Pod order, generations and zero-valued scalar resources
// left behind by removed pods do not count.
func diffNodeInfo(got, want *nodeinfo.NodeInfo) string {
	switch {
	case got.Node() != want.Node():
		return "different node objects"
	case got.Name() != want.Name() || !reflect.DeepEqual(got.Labels(), want.Labels()) ||
		!reflect.DeepEqual(got.Taints(), want.Taints()) || got.Unschedulable() != want.Unschedulable():
		return "different node fields"
	case !sameResource(*got.Requested(), *want.Requested()):
		return fmt.Sprintf("Requested %+v, want %+v", got.Requested(), want.Requested())
	case !sameResource(*got.NonZeroRequested(), *want.NonZeroRequested()):
		return fmt.Sprintf("NonZeroRequested %+v, want %+v", got.NonZeroRequested(), want.NonZeroRequested())
	case !sameResource(*got.Allocatable(), *want.Allocatable()):
		return fmt.Sprintf("Allocatable %+v, want %+v", got.Allocatable(), want.Allocatable())
	case !slices.Equal(podKeys(got.Pods()), podKeys(want.Pods())):
		return fmt.Sprintf("Pods %v, want %v", podKeys(got.Pods()), podKeys(want.Pods()))
	case !slices.Equal(podKeys(got.PodsWithAffinity()), podKeys(want.PodsWithAffinity())):
		return fmt.Sprintf("PodsWithAffinity %v, want %v", podKeys(got.PodsWithAffinity()), podKeys(want.PodsWithAffinity()))
	case !slices.Equal(podKeys(got.PodsWithRequiredAntiAffinity()), podKeys(want.PodsWithRequiredAntiAffinity())):
		return "different PodsWithRequiredAntiAffinity"
	case got.UsedPorts().Len() != want.UsedPorts().Len() || (got.UsedPorts().Len() > 0 && !reflect.DeepEqual(got.UsedPorts(), want.UsedPorts())):
		return fmt.Sprintf("UsedPorts %v, want %v", got.UsedPorts(), want.UsedPorts())
	case len(got.PVCRefCounts()) != len(want.PVCRefCounts()) || (len(got.PVCRefCounts()) > 0 && !maps.Equal(got.PVCRefCounts(), want.PVCRefCounts())):
		return fmt.Sprintf("PVCRefCounts %v, want %v", got.PVCRefCounts(), want.PVCRefCounts())
	case !sameImages(got.ImageStates(), want.ImageStates()):
		return fmt.Sprintf("ImageStates %v, want %v", imageSummary(got.ImageStates()), imageSummary(want.ImageStates()))
	}
	return ""
}

// podKeys lists the pods' UIDs and the objects' addresses, sorted.
func podKeys(pis []*nodeinfo.PodInfo) []string {
	keys := make([]string, len(pis))
	for i, pi := range pis {
		keys[i] = fmt.Sprintf("%s@%p", pi.Pod.UID, pi.Pod)
	}
	slices.Sort(keys)
	return keys
}

func sameResource(a, b nodeinfo.Resource) bool {
	a.ScalarResources, b.ScalarResources = nonZero(a.ScalarResources), nonZero(b.ScalarResources)
	return reflect.DeepEqual(a, b)
}

func nonZero(m map[v1.ResourceName]int64) map[v1.ResourceName]int64 {
	out := map[v1.ResourceName]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func sameImages(a, b map[string]*nodeinfo.ImageStateSummary) bool {
	return maps.Equal(imageSummary(a), imageSummary(b))
}

func imageSummary(m map[string]*nodeinfo.ImageStateSummary) map[string]nodeinfo.ImageStateSummary {
	out := make(map[string]nodeinfo.ImageStateSummary, len(m))
	for k, v := range m {
		out[k] = *v
	}
	return out
}
