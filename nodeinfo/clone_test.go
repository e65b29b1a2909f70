package nodeinfo

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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

func TestPodByUID(t *testing.T) {
	t.Parallel()
	ni := New(node("n"), pod("a", "n"), pod("b", "n"))
	var nilInfo *NodeInfo
	for _, tc := range []struct {
		name string
		ni   *NodeInfo
		uid  types.UID
		want string
	}{
		{name: "a pod on the node is found", ni: ni, uid: "b", want: "b"},
		{name: "an unknown uid finds nothing", ni: ni, uid: "c"},
		{name: "an empty uid finds nothing", ni: ni, uid: ""},
		{name: "a nil NodeInfo has no pods", ni: nilInfo, uid: "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.ni.PodByUID(tc.uid)
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("PodByUID(%q) = %s, want nil", tc.uid, got.Pod.Name)
			case tc.want != "" && (got == nil || got.Pod.Name != tc.want):
				t.Errorf("PodByUID(%q) = %v, want pod %s", tc.uid, got, tc.want)
			}
		})
	}
}
