package testcluster

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// GPUsPerNode is how many GPUs each node's ResourceSlice publishes in the
// DRA workload.
const GPUsPerNode = 8

// gpuDriver is the DRA workload's driver, and its DeviceClass's name.
const gpuDriver = "gpu.example.com"

// claimTemplate is the ResourceClaimTemplate the DRA workload's pods name.
const claimTemplate = "one-gpu"

// draPod makes p claim one GPU through the template, as the
// resourceclaim controller leaves a pod once it has generated the claim:
// status.resourceClaimStatuses names the claim <pod>-gpu.
func draPod(p *v1.Pod) {
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new(claimTemplate)}}
	p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: new(p.Name + "-gpu")}}
}

// Objects returns the cluster objects workload needs besides nodes and
// pods. For DRA: a DeviceClass selecting the driver's devices, one
// ResourceSlice of [GPUsPerNode] GPUs per node, each existing pod's claim
// (allocated gpu-0 of its node and reserved for it; a node with several
// existing pods gives each its own GPU), and the claim generated for the
// pending pod called pending. For Preemption: PodDisruptionBudgets over
// the pods of apps batch-0 (no disruption allowed), batch-1 (one) and
// batch-2 (none). None for the others.
func Objects(nodes []*v1.Node, existing []*v1.Pod, pending, workload string) []runtime.Object {
	if workload == Preemption {
		return preemptionObjects()
	}
	if workload != DRA {
		return nil
	}
	objs := []runtime.Object{&resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: gpuDriver},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", gpuDriver)},
		}}},
	}}
	for _, n := range nodes {
		s := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-" + gpuDriver},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   gpuDriver,
				NodeName: new(n.Name),
				Pool:     resourceapi.ResourcePool{Name: n.Name, Generation: 1, ResourceSliceCount: 1},
			},
		}
		for i := range GPUsPerNode {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i)})
		}
		objs = append(objs, s)
	}
	used := map[string]int{}
	for _, p := range existing {
		c := claimFor(p.Name, p.UID)
		gpu := used[p.Spec.NodeName]
		used[p.Spec.NodeName]++
		c.Status.Allocation = &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
				Request: "gpu", Driver: gpuDriver, Pool: p.Spec.NodeName, Device: fmt.Sprintf("gpu-%d", gpu%GPUsPerNode),
			}}},
			NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{p.Spec.NodeName}}},
			}}},
		}
		c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
		objs = append(objs, c)
	}
	return append(objs, claimFor(pending, types.UID(pending)))
}

// claimFor returns the claim generated from the template for the pod.
func claimFor(pod string, uid types.UID) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod + "-gpu", Namespace: "default", UID: types.UID(pod + "-gpu"),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod, UID: uid, Controller: new(true)}},
		},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "gpu",
			Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: gpuDriver, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
			},
		}}}},
	}
}
