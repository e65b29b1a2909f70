package filter

import (
	"testing"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestWhichFiltersAreNodeLocal: the framework remembers a node-local
// filter's verdict per node generation, so a filter that reads anything
// but the pod and the node must not say it is node-local, and one that
// does not say so is judged afresh on every node every cycle.
func TestWhichFiltersAreNodeLocal(t *testing.T) {
	t.Parallel()
	plain := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
	}}}}}
	extended := plain.DeepCopy()
	extended.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
	for _, tc := range []struct {
		name string
		pl   fwk.Plugin
		pod  *v1.Pod
		want bool
	}{
		{"NodeUnschedulable reads the node alone", &NodeUnschedulable{}, plain, true},
		{"NodeName reads the node alone", &NodeName{}, plain, true},
		{"TaintToleration reads the node alone", &TaintToleration{}, plain, true},
		{"NodeDeclaredFeatures reads the node alone", &NodeDeclaredFeatures{}, plain, true},
		{"NodePorts reads the node alone", &NodePorts{}, plain, true},
		{"NodeAffinity reads the node alone", &NodeAffinity{}, plain, true},
		{"NodeResourcesFit reads the node alone for CPU", &NodeResourcesFit{}, plain, true},
		{"NodeResourcesFit counts devices for an extended resource", &NodeResourcesFit{}, extended, false},
		{"InterPodAffinity reads other nodes", &InterPodAffinity{}, plain, false},
		{"PodTopologySpread reads other nodes", &PodTopologySpread{}, plain, false},
		{"VolumeBinding reads volumes", &VolumeBinding{}, plain, false},
		{"DynamicResources reads claims", &DynamicResources{}, plain, false},
	} {
		nl, ok := tc.pl.(fwk.NodeLocalPlugin)
		if got := ok && nl.NodeLocal(tc.pod); got != tc.want {
			t.Errorf("%s: node-local %v, want %v", tc.name, got, tc.want)
		}
	}
}
