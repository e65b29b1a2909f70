package nodeinfo

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestSetImageStatesReplacesTheMapAndBumpsTheGeneration(t *testing.T) {
	t.Parallel()
	ni := New(node("n", v1.ContainerImage{Names: []string{"nginx:1"}, SizeBytes: 10}))
	clone := ni.Clone()
	before := ni.generation

	states := map[string]*ImageStateSummary{"nginx:1": {Size: 10, NumNodes: 3}}
	ni.SetImageStates(states)

	if ni.generation <= before {
		t.Errorf("Generation = %d after SetImageStates, want more than %d", ni.generation, before)
	}
	if got := ni.imageStates["nginx:1"].NumNodes; got != 3 {
		t.Errorf("NumNodes = %d, want 3", got)
	}
	if got := clone.imageStates["nginx:1"].NumNodes; got != 1 {
		t.Errorf("a clone taken before sees NumNodes = %d, want its own 1", got)
	}
}

func TestCloneWithImageStatesKeepsTheGeneration(t *testing.T) {
	t.Parallel()
	ni := New(node("n", v1.ContainerImage{Names: []string{"nginx:1"}, SizeBytes: 10}))
	states := map[string]*ImageStateSummary{"nginx:1": {Size: 10, NumNodes: 3}}
	c := ni.CloneWithImageStates(states)
	if c.Generation() != ni.Generation() {
		t.Errorf("the copy's Generation is %d, want the original's %d", c.Generation(), ni.Generation())
	}
	if got := c.ImageStates()["nginx:1"].NumNodes; got != 3 {
		t.Errorf("the copy counts %d nodes, want the 3 it was given", got)
	}
	if got := ni.ImageStates()["nginx:1"].NumNodes; got != 1 {
		t.Errorf("the original counts %d nodes, want its own 1", got)
	}
	c.AddPod(&v1.Pod{})
	if len(ni.Pods()) != 0 {
		t.Error("a pod added to the copy reached the original")
	}
}

// TestAccessorsReadWhatTheMethodsMaintain: a NodeInfo's content changes
// only through its methods, which keep its generation honest; the
// accessors hand out what a caller may read.
func TestAccessorsReadWhatTheMethodsMaintain(t *testing.T) {
	t.Parallel()
	ni := New(node("n", v1.ContainerImage{Names: []string{"nginx:1"}, SizeBytes: 10}))
	gen := ni.Generation()
	p := &v1.Pod{}
	p.Name = "web"
	p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}}}}
	ni.AddPod(p)
	if ni.Generation() <= gen {
		t.Errorf("Generation %d after AddPod, want more than %d", ni.Generation(), gen)
	}
	if len(ni.Pods()) != 1 || ni.Pods()[0].Pod != p {
		t.Errorf("Pods() = %v, want the pod added", ni.Pods())
	}
	if got := ni.Requested().MilliCPU; got != 250 {
		t.Errorf("Requested().MilliCPU = %d, want 250", got)
	}
	if got := ni.NonZeroRequested().Memory; got == 0 {
		t.Error("NonZeroRequested().Memory is 0, want the default for an unset request")
	}
}
