package kubesched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/framework"
)

// maintenanceRule taints gpu-node's GPU with key "maintenance".
func maintenanceRule(effect resourceapi.DeviceTaintEffect) *resourceapi.DeviceTaintRule {
	driver, pool := "gpu.example.com", "gpu-node"
	return &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "maintenance"},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: &driver, Pool: &pool},
			Taint:          resourceapi.DeviceTaint{Key: "maintenance", Effect: effect},
		},
	}
}

func TestEachReleaseAppliesDeviceTaintRulesAsItsKubeScheduler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, release string
		effect        resourceapi.DeviceTaintEffect
		tolerate      bool
		// want is the node chosen, "" for none.
		want string
	}{
		{"v1.37.2 keeps a pod off the node whose only GPU a NoSchedule rule taints", "1.37", resourceapi.DeviceTaintEffectNoSchedule, false, ""},
		{"v1.37.2 keeps a pod off the node whose only GPU a NoExecute rule taints", "1.37", resourceapi.DeviceTaintEffectNoExecute, false, ""},
		{"v1.37.2 gives the tainted GPU to a claim tolerating the taint", "1.37", resourceapi.DeviceTaintEffectNoSchedule, true, "gpu-node"},
		{"v1.37.2 gives the GPU when the rule's effect is None", "1.37", resourceapi.DeviceTaintEffectNone, false, "gpu-node"},
		{"v1.36.3, without DRADeviceTaintRules, ignores the rule", "1.36", resourceapi.DeviceTaintEffectNoSchedule, false, "gpu-node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes, objects := gpuCluster()
			pod, claim := gpuPod("training", "training-gpu")
			if tc.tolerate {
				claim.Spec.Devices.Requests[0].Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: "maintenance", Operator: resourceapi.DeviceTolerationOpExists}}
			}
			fw, err := mustRelease(t, tc.release).DefaultFramework(framework.WithObjects(append(objects, claim, maintenanceRule(tc.effect))...))
			if err != nil {
				t.Fatal(err)
			}
			res, err := fw.Schedule(context.Background(), pod, nodes)
			var fitErr *framework.FitError
			switch {
			case tc.want == "" && !errors.As(err, &fitErr):
				t.Fatalf("Schedule = %v, %v; want a FitError", res, err)
			case tc.want == "":
				if got, want := fitErr.Diagnosis.NodeStatus("gpu-node").Message(), "cannot allocate all claims"; got != want {
					t.Errorf("gpu-node rejected with %q, want %q", got, want)
				}
			case err != nil:
				t.Fatalf("Schedule: %v", err)
			case res.SuggestedHost != tc.want:
				t.Errorf("Schedule chose %s, want %s", res.SuggestedHost, tc.want)
			}
		})
	}
}

// BenchmarkPlacingClaimingPodsWithDeviceTaintRules is
// BenchmarkPlacingClaimingPods with DeviceTaintRules in the cluster: none
// selecting a device, or one per tenth node tainting its gpu-0.
func BenchmarkPlacingClaimingPodsWithDeviceTaintRules(b *testing.B) {
	const numNodes = 5000
	var rules []runtime.Object
	for i := 0; i < numNodes; i += 10 {
		r := maintenanceRule(resourceapi.DeviceTaintEffectNoSchedule)
		r.Name = fmt.Sprintf("maintenance-%d", i)
		pool, device := fmt.Sprintf("node-%d", i), "gpu-0"
		r.Spec.DeviceSelector.Pool, r.Spec.DeviceSelector.Device = &pool, &device
		rules = append(rules, r)
	}
	nothing := maintenanceRule(resourceapi.DeviceTaintEffectNoSchedule)
	other := "nic.example.com"
	nothing.Spec.DeviceSelector.Driver = &other
	for _, bc := range []struct {
		name  string
		rules []runtime.Object
	}{
		{"1ruleSelectingNothing", []runtime.Object{nothing}},
		{"500rules", rules},
	} {
		for _, pct := range []int32{0, 100} {
			b.Run(fmt.Sprintf("%dnodes/pct%d/%s", numNodes, pct, bc.name), func(b *testing.B) {
				placeClaimingPods(b, numNodes, pct, bc.rules...)
			})
		}
	}
}
