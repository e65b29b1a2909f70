package filter

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

func admissionNode(taints ...v1.Taint) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"disk": "ssd"}},
		Spec:       v1.NodeSpec{Taints: taints},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi"), v1.ResourcePods: resource.MustParse("10"),
		}},
	}
}

// admissionPod requests cpu, selects nodes by disk, names a node and
// binds a host port, each if given.
func admissionPod(cpu, disk, nodeName string, hostPort int32) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{NodeName: nodeName}}
	c := v1.Container{Name: "c"}
	if cpu != "" {
		c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	}
	if hostPort != 0 {
		c.Ports = []v1.ContainerPort{{HostPort: hostPort, ContainerPort: 80}}
	}
	p.Spec.Containers = []v1.Container{c}
	if disk != "" {
		p.Spec.NodeSelector = map[string]string{"disk": disk}
	}
	return p
}

func reasons(results []AdmissionResult) []string {
	var out []string
	for _, r := range results {
		if r.InsufficientResource != nil {
			out = append(out, r.InsufficientResource.Reason)
			continue
		}
		out = append(out, r.Name+": "+r.Reason)
	}
	return out
}

func TestAdmissionCheck(t *testing.T) {
	t.Parallel()
	running := admissionPod("", "", "n", 8080)
	ni := nodeinfo.New(admissionNode(), running)
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		all   bool
		ni    *nodeinfo.NodeInfo
		wants []string
	}{
		{name: "a pod that fits is admitted", pod: admissionPod("500m", "ssd", "n", 80), ni: ni},
		{name: "too much cpu", pod: admissionPod("2", "", "", 0), ni: ni, wants: []string{"Insufficient cpu"}},
		{name: "the wrong disk", pod: admissionPod("", "hdd", "", 0), ni: ni, wants: []string{"NodeAffinity: node(s) didn't match Pod's node affinity/selector"}},
		{name: "another node's name", pod: admissionPod("", "", "m", 0), ni: ni, wants: []string{"NodeName: node(s) didn't match the requested node name"}},
		{name: "a taken host port", pod: admissionPod("", "", "", 8080), ni: ni, wants: []string{"NodePorts: node(s) didn't have free ports for the requested pod ports"}},
		{name: "only the first failure by default", pod: admissionPod("2", "hdd", "m", 8080), ni: ni, wants: []string{"Insufficient cpu"}},
		{name: "every failure when asked, in kube-scheduler's order", pod: admissionPod("2", "hdd", "m", 8080), ni: ni, all: true, wants: []string{
			"Insufficient cpu",
			"NodeAffinity: node(s) didn't match Pod's node affinity/selector",
			"NodeName: node(s) didn't match the requested node name",
			"NodePorts: node(s) didn't have free ports for the requested pod ports",
		}},
		{name: "a nil pod is admitted", ni: ni},
		{name: "a NodeInfo without a node admits nothing", pod: admissionPod("", "", "", 0), ni: nodeinfo.New(nil), wants: []string{"Too many pods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := reasons(AdmissionCheck(tc.pod, tc.ni, tc.all)); !slices.Equal(got, tc.wants) {
				t.Errorf("AdmissionCheck = %q, want %q", got, tc.wants)
			}
		})
	}
}

func TestPreCheckForNode(t *testing.T) {
	t.Parallel()
	tainted := nodeinfo.New(admissionNode(v1.Taint{Key: "gpu", Effect: v1.TaintEffectNoSchedule}))
	preferred := nodeinfo.New(admissionNode(v1.Taint{Key: "gpu", Effect: v1.TaintEffectPreferNoSchedule}))
	tolerating := admissionPod("", "", "", 0)
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
	for _, tc := range []struct {
		name string
		ni   *nodeinfo.NodeInfo
		pod  *v1.Pod
		want bool
	}{
		{name: "a pod the node admits moves", ni: nodeinfo.New(admissionNode()), pod: admissionPod("", "", "", 0), want: true},
		{name: "a pod the node cannot admit stays", ni: nodeinfo.New(admissionNode()), pod: admissionPod("2", "", "", 0)},
		{name: "a pod not tolerating a NoSchedule taint stays", ni: tainted, pod: admissionPod("", "", "", 0)},
		{name: "a pod tolerating it moves", ni: tainted, pod: tolerating, want: true},
		{name: "PreferNoSchedule taints do not matter", ni: preferred, pod: admissionPod("", "", "", 0), want: true},
		{name: "no node, nothing moves", ni: nil, pod: admissionPod("", "", "", 0)},
		{name: "a nil pod stays", ni: nodeinfo.New(admissionNode())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := PreCheckForNode(tc.ni)(tc.pod); got != tc.want {
				t.Errorf("PreCheckForNode = %v, want %v", got, tc.want)
			}
		})
	}
}
