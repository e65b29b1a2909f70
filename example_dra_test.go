package kubesched_test

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// gpuCluster is two nodes, one of which has a GPU published in a
// ResourceSlice by the driver gpu.example.com, and a DeviceClass selecting
// that driver's devices.
func gpuCluster() ([]*nodeinfo.NodeInfo, []runtime.Object) {
	var nodes []*v1.Node
	for _, name := range []string{"cpu-only", "gpu-node"} {
		nodes = append(nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110"),
			}},
		})
	}
	nodeName := "gpu-node"
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   "gpu.example.com",
			NodeName: &nodeName,
			Pool:     resourceapi.ResourcePool{Name: "gpu-node", Generation: 1, ResourceSliceCount: 1},
			Devices:  []resourceapi.Device{{Name: "gpu-0"}},
		},
	}
	class := &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`},
		}}},
	}
	return nodeinfo.Build(nodes, nil), []runtime.Object{slice, class}
}

// gpuPod returns a pod using the ResourceClaim claimName, and that claim,
// asking for one device of the class gpu.example.com.
func gpuPod(name, claimName string) (*v1.Pod, *resourceapi.ResourceClaim) {
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName, Namespace: "default", UID: types.UID("uid-claim-" + name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name:    "gpu",
			Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{
			Containers:     []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}}},
			ResourceClaims: []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claimName}},
		},
	}
	return pod, claim
}

// A pod claiming one GPU goes to the node whose ResourceSlice has one, and
// the Result carries the claim allocated as kube-scheduler would write it.
// Once that claim is in the cluster, a second pod claiming a GPU fits
// nowhere: the only GPU is taken.
func Example_dynamicResources() {
	ctx := context.Background()
	nodes, objects := gpuCluster()
	training, trainingClaim := gpuPod("training", "training-gpu")
	inference, inferenceClaim := gpuPod("inference", "inference-gpu")

	fw, err := kubesched.DefaultFramework(framework.WithObjects(append(objects, trainingClaim, inferenceClaim)...))
	if err != nil {
		panic(err)
	}
	res, err := fw.Schedule(ctx, training, nodes)
	if err != nil {
		panic(err)
	}
	allocated := filter.Claims(res)[0]
	fmt.Println(res.SuggestedHost, allocated.Name, allocated.Status.Allocation.Devices.Results[0].Device, allocated.Status.ReservedFor[0].Name)

	// The cluster after binding: the allocated claim replaces the original.
	fw, err = kubesched.DefaultFramework(framework.WithObjects(append(objects, allocated, inferenceClaim)...))
	if err != nil {
		panic(err)
	}
	_, err = fw.Schedule(ctx, inference, nodes)
	var fitErr *framework.FitError
	fmt.Println(errors.As(err, &fitErr), err)
	// Output:
	// gpu-node training-gpu gpu-0 training
	// true 0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.
}
