package kubesched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

// gpuSlice publishes n GPUs on node.
func gpuSlice(node string, n int) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   "gpu.example.com",
			NodeName: &node,
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for i := range n {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i)})
	}
	return s
}

// addGPUNodes adds nodes node-0, node-1, ... of 16 CPUs and 64Gi to c and
// returns a ResourceSlice of gpus GPUs for each.
func addGPUNodes(t testing.TB, c *cache.Cache, nodes, gpus int) []runtime.Object {
	t.Helper()
	var slices []runtime.Object
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		if _, err := c.AddNode(&v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("16"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110"),
			}},
		}); err != nil {
			t.Fatal(err)
		}
		slices = append(slices, gpuSlice(name, gpus))
	}
	return slices
}

func TestPlacingClaimingPodsThroughTheCacheNeverHandsADeviceOutTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	const numNodes, gpusPerNode, numPods = 5, 2, 14
	slices := addGPUNodes(t, c, numNodes, gpusPerNode)
	_, class := gpuCluster()
	listers, err := fwk.NewListers(append([]runtime.Object{class[1]}, slices...)...)
	if err != nil {
		t.Fatal(err)
	}
	listers.ResourceClaims = c.ResourceClaims()
	fw, err := kubesched.DefaultFramework(framework.WithListers(listers))
	if err != nil {
		t.Fatal(err)
	}

	var pods []*v1.Pod
	for i := range numPods {
		pod, claim := gpuPod(fmt.Sprintf("pod-%d", i), fmt.Sprintf("claim-%d", i))
		pod.UID = types.UID(fmt.Sprintf("uid-pod-%d", i))
		if err := c.AddClaim(claim); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod)
	}

	place := func(pod *v1.Pod) (*framework.Result, error) {
		res, err := fw.ScheduleSnapshot(ctx, pod, c.Snapshot())
		if err != nil {
			return nil, err
		}
		bound := pod.DeepCopy()
		bound.Spec.NodeName = res.SuggestedHost
		return res, c.AssumePod(bound, filter.Claims(res)...)
	}
	holder := map[string]string{} // device ID -> pod
	var placed []*v1.Pod
	for _, pod := range pods {
		res, err := place(pod)
		var fitErr *framework.FitError
		if errors.As(err, &fitErr) {
			if got := fitErr.Diagnosis.NodeStatus("node-0").Message(); got != "cannot allocate all claims" {
				t.Errorf("%s: node-0 says %q, want cannot allocate all claims", pod.Name, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", pod.Name, err)
		}
		if len(filter.Claims(res)) != 1 || filter.Claims(res)[0].Status.Allocation == nil {
			t.Fatalf("%s: claims %v, want one allocated", pod.Name, filter.Claims(res))
		}
		for _, r := range filter.Claims(res)[0].Status.Allocation.Devices.Results {
			if r.Pool != res.SuggestedHost {
				t.Errorf("%s placed on %s got device %s of pool %s", pod.Name, res.SuggestedHost, r.Device, r.Pool)
			}
			id := r.Pool + "/" + r.Device
			if prev, taken := holder[id]; taken {
				t.Errorf("device %s given to %s and %s", id, prev, pod.Name)
			}
			holder[id] = pod.Name
		}
		placed = append(placed, pod)
	}
	if len(placed) != numNodes*gpusPerNode {
		t.Fatalf("placed %d pods, want one per GPU: %d", len(placed), numNodes*gpusPerNode)
	}

	// Forgetting a placed pod gives its GPU back to the next pod.
	gone := placed[3].DeepCopy()
	claim, err := c.ResourceClaims().Get("default", "claim-3")
	if err != nil {
		t.Fatal(err)
	}
	gone.Spec.NodeName = claim.Status.Allocation.Devices.Results[0].Pool
	if err := c.ForgetPod(gone); err != nil {
		t.Fatal(err)
	}
	if claim, _ := c.ResourceClaims().Get("default", "claim-3"); claim.Status.Allocation != nil {
		t.Fatalf("claim-3 still allocated after ForgetPod: %v", claim.Status.Allocation)
	}
	res, err := place(pods[numPods-1])
	if err != nil {
		t.Fatalf("after ForgetPod, %s: %v", pods[numPods-1].Name, err)
	}
	if res.SuggestedHost != gone.Spec.NodeName {
		t.Errorf("after ForgetPod, %s went to %s, want the freed GPU's node %s", pods[numPods-1].Name, res.SuggestedHost, gone.Spec.NodeName)
	}
}

func TestPlacingPodsAskingForDRABackedExtendedResourcesThroughTheCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	const numNodes, gpusPerNode = 3, 2
	objects := []runtime.Object{&resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourceapi.DeviceClassSpec{
			ExtendedResourceName: new("example.com/gpu"),
			Selectors:            []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
		},
	}}
	objects = append(objects, addGPUNodes(t, c, numNodes, gpusPerNode)...)
	listers, err := fwk.NewListers(objects...)
	if err != nil {
		t.Fatal(err)
	}
	listers.ResourceClaims = c.ResourceClaims()
	fw, err := kubesched.DefaultFramework(framework.WithListers(listers))
	if err != nil {
		t.Fatal(err)
	}

	holder := map[string]string{} // device ID -> pod
	names := map[string]bool{}
	for i := range numNodes*gpusPerNode + 1 {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{"example.com/gpu": resource.MustParse("1")},
				Limits:   v1.ResourceList{"example.com/gpu": resource.MustParse("1")},
			}}}},
		}
		res, err := fw.ScheduleSnapshot(ctx, pod, c.Snapshot())
		if i == numNodes*gpusPerNode {
			// Every GPU is taken: NodeResourcesFit lets the pod through
			// (the nodes do not offer example.com/gpu themselves) and
			// DynamicResources finds no device.
			var fitErr *framework.FitError
			if !errors.As(err, &fitErr) {
				t.Fatalf("%s with every GPU taken: %v, want a FitError", pod.Name, err)
			}
			if got, want := fitErr.Error(), "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."; got != want {
				t.Errorf("%s: %q, want %q", pod.Name, got, want)
			}
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", pod.Name, err)
		}
		if len(filter.Claims(res)) != 1 || filter.ExtendedResourceClaimStatus(res) == nil {
			t.Fatalf("%s: claims %v, status %v; want the extended-resource claim and its status", pod.Name, filter.Claims(res), filter.ExtendedResourceClaimStatus(res))
		}
		claim := filter.Claims(res)[0]
		if names[claim.Name] || filter.ExtendedResourceClaimStatus(res).ResourceClaimName != claim.Name {
			t.Errorf("%s: claim named %q (status names %q), want a new name", pod.Name, claim.Name, filter.ExtendedResourceClaimStatus(res).ResourceClaimName)
		}
		names[claim.Name] = true
		for _, r := range claim.Status.Allocation.Devices.Results {
			id := r.Pool + "/" + r.Device
			if prev, taken := holder[id]; taken || r.Pool != res.SuggestedHost {
				t.Errorf("device %s (on %s) given to %s and %s", id, res.SuggestedHost, prev, pod.Name)
			}
			holder[id] = pod.Name
		}
		bound := pod.DeepCopy()
		bound.Spec.NodeName = res.SuggestedHost
		bound.Status.ExtendedResourceClaimStatus = filter.ExtendedResourceClaimStatus(res)
		if err := c.AssumePod(bound, filter.Claims(res)...); err != nil {
			t.Fatal(err)
		}
	}
	if len(holder) != numNodes*gpusPerNode {
		t.Errorf("%d GPUs handed out, want all %d", len(holder), numNodes*gpusPerNode)
	}
}
