package filter

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/testcluster"
)

// TestPodRequestsAsComponentHelpersWorksThemOut: the shortcut for pods
// of one plain container gives what PodRequests gives, and every other
// kind of pod still goes through PodRequests.
func TestPodRequestsAsComponentHelpersWorksThemOut(t *testing.T) {
	requests := testcluster.Requests
	container := func(r v1.ResourceRequirements) v1.Container { return v1.Container{Name: "c", Resources: r} }
	always := v1.ContainerRestartPolicyAlways
	tests := []struct {
		name string
		spec v1.PodSpec
	}{
		{"one container with requests", v1.PodSpec{Containers: []v1.Container{container(requests("cpu", "250m", "memory", "1Gi", "example.com/gpu", "1"))}}},
		{"one container requesting nothing", v1.PodSpec{Containers: []v1.Container{container(v1.ResourceRequirements{})}}},
		{"one container with limits alone", v1.PodSpec{Containers: []v1.Container{container(v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}})}}},
		{"two containers add up", v1.PodSpec{Containers: []v1.Container{container(requests("cpu", "250m")), container(requests("cpu", "0.0001", "memory", "1"))}}},
		{"an init container larger than the container", v1.PodSpec{
			InitContainers: []v1.Container{container(requests("cpu", "2"))},
			Containers:     []v1.Container{container(requests("cpu", "250m"))}}},
		{"a sidecar adds to the container", v1.PodSpec{
			InitContainers: []v1.Container{{Name: "s", RestartPolicy: &always, Resources: requests("cpu", "100m")}},
			Containers:     []v1.Container{container(requests("cpu", "250m"))}}},
		{"overhead adds to the container", v1.PodSpec{
			Overhead:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m")},
			Containers: []v1.Container{container(requests("cpu", "250m"))}}},
		{"pod-level resources take over", v1.PodSpec{
			Resources:  &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}},
			Containers: []v1.Container{container(requests("cpu", "250m"))}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: tc.spec}
			got, want := podRequests(pod), resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
			if len(got) == 0 && len(want) == 0 {
				return
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("requests %v, want %v", got, want)
			}
		})
	}
}
