package score

import (
	"testing"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestWhichScorersAreNodeLocal: the framework remembers a node-local
// plugin's score per node generation, so a scorer that reads anything but
// the pod, the number of nodes and the node must not say it is
// node-local, and one that does not say so scores every node every cycle.
func TestWhichScorersAreNodeLocal(t *testing.T) {
	t.Parallel()
	plain := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
	}}}}}
	for _, tc := range []struct {
		name string
		pl   fwk.Plugin
		want bool
	}{
		{"TaintToleration reads the node alone", &TaintToleration{}, true},
		{"ImageLocality reads the node and the number of nodes", &ImageLocality{}, true},
		{"NodeAffinity reads the node alone", &NodeAffinity{}, true},
		{"NodeResourcesFit reads the node alone for CPU and memory", &NodeResourcesFit{}, true},
		{"NodeResourcesBalancedAllocation reads the node alone for CPU and memory", &NodeResourcesBalancedAllocation{}, true},
		{"DynamicResources scores 0 for a pod without claims", &DynamicResources{}, true},
		{"InterPodAffinity reads other nodes", &InterPodAffinity{}, false},
		{"PodTopologySpread reads other nodes", &PodTopologySpread{}, false},
		{"VolumeBinding reads volumes", &VolumeBinding{}, false},
	} {
		nl, ok := tc.pl.(fwk.NodeLocalPlugin)
		if got := ok && nl.NodeLocal(plain); got != tc.want {
			t.Errorf("%s: node-local %v, want %v", tc.name, got, tc.want)
		}
	}
}
