package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// TestDRAAllocationAgrees gives each scheduler, on a fresh control plane,
// three devices on two nodes and four pods each claiming one: both must
// bind three pods to the nodes of the devices their claims got, hand no
// device out twice, and report the fourth unschedulable with the same
// message.
func TestDRAAllocationAgrees(t *testing.T) {
	messages := map[string]string{}
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		t.Run(scheduler, func(t *testing.T) {
			ctx := context.Background()
			cp, client := startControlPlaneOpts(t, ctx, false)
			for i := range 3 {
				if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "4", "8Gi", nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			createGPUs(ctx, t, client, "")
			claims := client.ResourceV1().ResourceClaims(metav1.NamespaceDefault)
			pods := client.CoreV1().Pods(metav1.NamespaceDefault)
			for i := range 4 {
				name := fmt.Sprintf("gpu-%d", i)
				claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
					Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
				}}}}}
				if _, err := claims.Create(ctx, claim, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if scheduler == v1.DefaultSchedulerName {
				if err := cp.StartScheduler(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false")
			}
			// One after another, so that the fourth is the one left.
			for i := range 4 {
				p := pod(fmt.Sprintf("trainer-%d", i), scheduler, "100m", "64Mi")
				p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new(fmt.Sprintf("gpu-%d", i))}}
				p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if i < 3 {
					eventually(t, time.Minute, p.Name+" is bound", func() (bool, error) {
						got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
						return err == nil && got.Spec.NodeName != "", err
					})
				}
			}
			messages[scheduler] = awaitNoDeviceLeft(ctx, t, pods, "trainer-3")
			// Each bound pod's claim holds a device of its node, reserved
			// for it, and no device is held twice.
			held := map[string]string{}
			for i := range 3 {
				p, err := pods.Get(ctx, fmt.Sprintf("trainer-%d", i), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				c, err := claims.Get(ctx, fmt.Sprintf("gpu-%d", i), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				a := c.Status.Allocation
				if a == nil || len(a.Devices.Results) != 1 {
					t.Fatalf("claim %s of bound pod %s not allocated: %+v", c.Name, p.Name, a)
				}
				r := a.Devices.Results[0]
				if r.Pool != p.Spec.NodeName {
					t.Errorf("%s runs on %s with device %s/%s of another node", p.Name, p.Spec.NodeName, r.Pool, r.Device)
				}
				if len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].Name != p.Name {
					t.Errorf("claim %s reserved for %+v, want %s", c.Name, c.Status.ReservedFor, p.Name)
				}
				device := r.Pool + "/" + r.Device
				if other, dup := held[device]; dup {
					t.Errorf("device %s held by %s and %s", device, other, p.Name)
				}
				held[device] = p.Name
			}
			t.Logf("%s: devices %v; trainer-3: %s", scheduler, held, messages[scheduler])
		})
	}
	if a, b := messages[v1.DefaultSchedulerName], messages[kubeschedName]; a != b {
		t.Errorf("the pod left without a device:\n kube-scheduler: %s\n kubesched:      %s", a, b)
	}
}

// awaitNoDeviceLeft waits until the pod called name is reported
// unschedulable, failing the test should it be bound (no device is left
// for it), and returns its PodScheduled condition's reason and message.
func awaitNoDeviceLeft(ctx context.Context, t *testing.T, pods corev1client.PodInterface, name string) string {
	t.Helper()
	var message string
	eventually(t, time.Minute, name+" is reported unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("%s was bound to %s with no device left", name, p.Spec.NodeName)
		}
		if c := scheduledCondition(p); c != nil && c.Status == v1.ConditionFalse {
			message = c.Reason + ": " + c.Message
			return true, nil
		}
		return false, nil
	})
	return message
}

// createGPUs creates the DeviceClass gpu, selecting the driver
// gpu.example.com's devices (and providing them as extendedResource when
// not empty), and ResourceSlices of that driver with two devices on
// node-0 and one on node-1.
func createGPUs(ctx context.Context, t *testing.T, client kubernetes.Interface, extendedResource string) {
	t.Helper()
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
	}}
	if extendedResource != "" {
		class.Spec.ExtendedResourceName = new(extendedResource)
	}
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for node, devices := range map[string][]string{"node-0": {"gpu-0", "gpu-1"}, "node-1": {"gpu-0"}} {
		slice := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: new(node), Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		}}
		for _, d := range devices {
			slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{Name: d})
		}
		if _, err := client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
