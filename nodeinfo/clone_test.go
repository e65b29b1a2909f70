package nodeinfo

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestSetImageStatesReplacesTheMapAndBumpsTheGeneration(t *testing.T) {
	t.Parallel()
	ni := New(node("n", v1.ContainerImage{Names: []string{"nginx:1"}, SizeBytes: 10}))
	clone := ni.Clone()
	before := ni.Generation

	states := map[string]*ImageStateSummary{"nginx:1": {Size: 10, NumNodes: 3}}
	ni.SetImageStates(states)

	if ni.Generation <= before {
		t.Errorf("Generation = %d after SetImageStates, want more than %d", ni.Generation, before)
	}
	if got := ni.ImageStates["nginx:1"].NumNodes; got != 3 {
		t.Errorf("NumNodes = %d, want 3", got)
	}
	if got := clone.ImageStates["nginx:1"].NumNodes; got != 1 {
		t.Errorf("a clone taken before sees NumNodes = %d, want its own 1", got)
	}
}
