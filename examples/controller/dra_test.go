package main

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// draObjects is a class "gpu" of the driver gpu.example.com's devices,
// which also provides the extended resource example.com/gpu, one device
// on node small, and a claim per name asking for one.
func draObjects(claims ...string) []runtime.Object {
	objs := []runtime.Object{
		&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
			Selectors: []resourceapi.DeviceSelector{{
				CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`},
			}},
			ExtendedResourceName: new(gpuResource),
		}},
		&resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "small-gpus"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: new("small"), Pool: resourceapi.ResourcePool{Name: "small", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourceapi.Device{{Name: "gpu-0"}},
		}},
	}
	for _, name := range claims {
		objs = append(objs, &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
			}}}},
		})
	}
	return objs
}

// claiming is a kubesched pod using the claim.
func claiming(name, claim string) *v1.Pod {
	p := testPod(name, "100m", "kubesched")
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new(claim)}}
	p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	return p
}

func TestControllerAllocatesClaimsBeforeBinding(t *testing.T) {
	t.Parallel()
	objs := append(draObjects("first", "second"), testNode("small", "4"), testNode("big", "4"), claiming("a", "first"))
	client := newFakeCluster(objs...)
	ctrl, err := New(client, Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	getPod := podGetter(ctx, t, client)
	eventually(t, "a is bound", func() bool { return getPod("a").Spec.NodeName != "" })
	if got := getPod("a").Spec.NodeName; got != "small" {
		t.Errorf("a went to %s; only small has a device", got)
	}
	claim, err := client.ResourceV1().ResourceClaims("default").Get(ctx, "first", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := claim.Status.Allocation; a == nil || len(a.Devices.Results) != 1 || a.Devices.Results[0].Device != "gpu-0" {
		t.Errorf("claim first allocated %+v, want gpu-0", claim.Status.Allocation)
	}
	if len(claim.Status.ReservedFor) != 1 || claim.Status.ReservedFor[0].Name != "a" {
		t.Errorf("claim first reserved for %+v, want pod a", claim.Status.ReservedFor)
	}
	if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
		t.Errorf("claim first has finalizers %v, want %s", claim.Finalizers, resourceapi.Finalizer)
	}
	// As kube-scheduler with NominatedNodeNameForExpectation: the pod is
	// nominated to its node before its claims are written.
	if got := getPod("a").Status.NominatedNodeName; got != "small" {
		t.Errorf("a is nominated to %q, want small", got)
	}
	nominated, allocated := -1, -1
	for i, a := range client.Actions() {
		switch {
		case a.Matches("patch", "pods") && a.GetSubresource() == "status" && nominated < 0 &&
			strings.Contains(string(a.(clienttesting.PatchAction).GetPatch()), `"nominatedNodeName":"small"`):
			nominated = i
		case a.Matches("update", "resourceclaims") && a.GetSubresource() == "status" && allocated < 0:
			allocated = i
		}
	}
	if nominated < 0 || allocated < 0 || nominated > allocated {
		t.Errorf("the nomination is action %d and the allocation action %d; want the nomination first", nominated, allocated)
	}

	// The only device is taken: a second pod claiming one fits nowhere,
	// as kube-scheduler says it.
	if _, err := client.CoreV1().Pods("default").Create(ctx, claiming("b", "second"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b is reported unschedulable", func() bool {
		for _, c := range getPod("b").Status.Conditions {
			if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonUnschedulable {
				return c.Message == "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
			}
		}
		return false
	})
}

func TestControllerUnreservesClaimsWhenBindingFails(t *testing.T) {
	t.Parallel()
	objs := append(draObjects("first"), testNode("small", "4"), claiming("a", "first"))
	client := newFakeCluster(objs...)
	// Every binding is refused.
	var refused atomic.Int32
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		refused.Add(1)
		return true, nil, errors.New("the API server says no")
	})
	ctrl, err := New(client, Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	eventually(t, "a binding is refused", func() bool { return refused.Load() > 0 })
	eventually(t, "the claim is no longer reserved for the pod", func() bool {
		claim, err := client.ResourceV1().ResourceClaims("default").Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return claim.Status.Allocation != nil && len(claim.Status.ReservedFor) == 0
	})
}

func TestControllerAppliesDeviceTaintRulesAndRetriesWhenOneGoes(t *testing.T) {
	t.Parallel()
	rule := &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: "maintenance"},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: new("gpu.example.com"), Pool: new("small")},
			Taint:          resourceapi.DeviceTaint{Key: "maintenance", Effect: resourceapi.DeviceTaintEffectNoSchedule},
		},
	}
	objs := append(draObjects("first"), rule, testNode("small", "4"), claiming("a", "first"))
	client := newFakeCluster(objs...)
	ctrl, err := New(client, Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	getPod := podGetter(ctx, t, client)
	eventually(t, "a is reported unschedulable: the rule taints the only device", func() bool {
		for _, c := range getPod("a").Status.Conditions {
			if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonUnschedulable {
				return strings.Contains(c.Message, "1 cannot allocate all claims")
			}
		}
		return false
	})
	if err := client.ResourceV1().DeviceTaintRules().Delete(ctx, "maintenance", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a is bound to small once the rule is gone", func() bool { return getPod("a").Spec.NodeName == "small" })
}
