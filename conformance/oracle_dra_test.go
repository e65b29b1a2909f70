package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// deviceClass selects GPUs of model, or every GPU when model is empty,
// and backs extended when that is not empty.
func deviceClass(name, model, extended string, created time.Time) *resourceapi.DeviceClass {
	expression := `device.driver == "gpu.example.com"`
	if model != "" {
		expression += fmt.Sprintf(` && device.attributes["gpu.example.com"].model == %q`, model)
	}
	c := &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec:       resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expression}}}},
	}
	if extended != "" {
		c.Spec.ExtendedResourceName = ptr.To(extended)
	}
	return c
}

// gpuSlice publishes GPUs gpu-0, gpu-1, ... of models on node.
func gpuSlice(node string, models ...string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: driverGPU, NodeName: ptr.To(node),
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for i, model := range models {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{
			Name:       fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To(model)}},
		})
	}
	return s
}

// heldClaim is allocated device of node's pool, for a pod gone since.
func heldClaim(name, node, device string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest("gpu", "gpu", 1)}}},
	}
	c.Status.Allocation = &resourceapi.AllocationResult{
		Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: driverGPU, Pool: node, Device: device},
		}},
		NodeSelector: (&draDevice{node: node}).allocationSelector(),
	}
	return c
}

// TestOracleTracksAllocatedDevicesAcrossScenarios: the devices allocated
// claims hold are those of the scenario being run, whichever scenarios
// ran before, although upstream's tracker of allocated devices ignores a
// claim's update from one allocation to another.
func TestOracleTracksAllocatedDevicesAcrossScenarios(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	nodes := []*v1.Node{node("n1", 4000)}
	classes := []runtime.Object{deviceClass("gpu", "", "", classCreation), deviceClass("a100", "a100", "", classCreation)}
	want := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "want", Namespace: metav1.NamespaceDefault, UID: "uid-want"},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest("gpu", "a100", 1)}}},
	}
	pod := podRequesting("p", 100)
	addPodClaim(pod, "gpu", "want", "")
	scenario := func(held string) *Scenario {
		return &Scenario{Nodes: nodes, Pod: pod, Objects: append(slices.Clone(classes), gpuSlice("n1", "a100", "t4"), want, heldClaim("held", "n1", held))}
	}
	for i, tc := range []struct {
		held string
		want string
	}{
		{held: "gpu-1", want: "feasible"},
		{held: "gpu-0", want: "cannot allocate all claims"},
		{held: "gpu-1", want: "feasible"},
		{held: "gpu-0", want: "cannot allocate all claims"},
	} {
		res, err := testOracle.RunScenario(context.Background(), scenario(tc.held))
		if err != nil {
			t.Fatal(err)
		}
		if got := verdict(res.Nodes["n1"]); got != tc.want {
			t.Errorf("run %d, the other claim holding %s: n1 is %s, want %s", i, tc.held, got, tc.want)
		}
	}
}

// TestOracleResolvesExtendedResourcesAsAStartingScheduler: DeviceClasses
// back extended resources as they would in a scheduler that started with
// the scenario's classes, whichever scenarios ran before. Of two classes
// backing example.com/gpu, the newer backs it; the older, which comes
// second in name order, is dropped whole, so that its own
// deviceclass.resource.kubernetes.io/ name is not backed either.
func TestOracleResolvesExtendedResourcesAsAStartingScheduler(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	nodes := []*v1.Node{node("n1", 4000)}
	newer := deviceClass("a", "", string(gpu), classCreation.Add(time.Hour))
	older := deviceClass("b", "", string(gpu), classCreation)
	slice := gpuSlice("n1", "a100")
	gpuPod := requesting(podRequesting("gpu", 100), gpu)
	olderPod := requesting(podRequesting("older", 100), v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+"b"))
	for i, tc := range []struct {
		classes []runtime.Object
		pod     *v1.Pod
		want    string
	}{
		{classes: []runtime.Object{newer, older}, pod: gpuPod, want: "feasible"},
		{classes: []runtime.Object{newer, older}, pod: olderPod, want: "Insufficient deviceclass.resource.kubernetes.io/b"},
		{classes: []runtime.Object{older}, pod: gpuPod, want: "feasible"},
		{classes: []runtime.Object{older}, pod: olderPod, want: "feasible"},
		{classes: []runtime.Object{newer, older}, pod: olderPod, want: "Insufficient deviceclass.resource.kubernetes.io/b"},
		{classes: []runtime.Object{newer}, pod: gpuPod, want: "feasible"},
		{classes: nil, pod: gpuPod, want: "Insufficient example.com/gpu"},
	} {
		s := &Scenario{Nodes: nodes, Pod: tc.pod, Objects: append(slices.Clone(tc.classes), slice)}
		res, err := testOracle.RunScenario(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if got := verdict(res.Nodes["n1"]); got != tc.want {
			t.Errorf("run %d, pod %s with %d classes: n1 is %s, want %s", i, tc.pod.Name, len(tc.classes), got, tc.want)
		}
	}
}

// requesting has p's container ask for one of name.
func requesting(p *v1.Pod, name v1.ResourceName) *v1.Pod {
	one := *resource.NewQuantity(1, resource.DecimalSI)
	c := &p.Spec.Containers[0]
	c.Resources.Requests[name] = one
	c.Resources.Limits = v1.ResourceList{name: one}
	return p
}

// verdict is "feasible" or the rejection's reasons.
func verdict(o NodeOutcome) string {
	if o.Feasible {
		return "feasible"
	}
	return strings.Join(o.Reasons, "; ")
}

// TestOracleReportsDynamicResourcesVerdicts pins the verdicts, reasons
// and errors of upstream's DynamicResources that kubesched must repeat
// word for word, on a cluster of two nodes with one A100 and one T4.
func TestOracleReportsDynamicResourcesVerdicts(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	nodes := []*v1.Node{node("n1", 4000), node("n2", 4000)}
	cluster := []runtime.Object{
		deviceClass("gpu", "", "", classCreation), deviceClass("a100", "a100", "", classCreation),
		gpuSlice("n1", "a100"), gpuSlice("n2", "t4"),
	}
	claim := func(name string, requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
		return &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
			Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}},
		}
	}
	broken := deviceClass("broken", "", "", classCreation)
	broken.Spec.Selectors[0].CEL.Expression = "device.driver =="
	firstAvailable := resourceapi.DeviceRequest{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "a100", DeviceClassName: "a100", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		{Name: "any", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
	}}
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		want    string
	}{
		{name: "a claim that does not exist keeps the pod from being tried", want: `not tried: DynamicResources UnschedulableAndUnresolvable could not find ResourceClaim "default/c"`},
		{name: "a claim naming a class that does not exist turns the pod down in PreFilter",
			objects: []runtime.Object{claim("c", exactRequest("gpu", "tpu", 1))}, want: "0/2 nodes are available: request gpu: device class tpu does not exist."},
		{name: "a claim for an A100 fits where there is one",
			objects: []runtime.Object{claim("c", exactRequest("gpu", "a100", 1))}, want: "n1: feasible; n2: cannot allocate all claims"},
		{name: "a claim allocated on n2 fits only there",
			objects: []runtime.Object{heldClaim("c", "n2", "gpu-0")}, want: "n1: resourceclaim not available on the node; n2: feasible"},
		// 8 less the choice's index, 8 and 7, normalized to 100 and 87,
		// and weighed 2.
		{name: "a prioritized list scores the node with its first choice higher",
			objects: []runtime.Object{claim("c", firstAvailable)}, want: "n1: feasible, DynamicResources 200; n2: feasible, DynamicResources 174"},
		{name: "a malformed selector ends the cycle with an error",
			objects: []runtime.Object{broken, claim("c", exactRequest("gpu", "broken", 1))},
			want:    "error: running \"DynamicResources\" filter plugin: class broken: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | device.driver ==\n | ................^"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := podRequesting("p", 100)
			addPodClaim(pod, "gpu", "c", "")
			res, err := testOracle.RunScenario(context.Background(), &Scenario{Nodes: nodes, Pod: pod, Objects: append(slices.Clone(cluster), tc.objects...)})
			if err != nil {
				t.Fatal(err)
			}
			if got := draSummary(res); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// draSummary is the oracle's errors, or its FitError, or for each node
// its verdict and DynamicResources' weighted score.
func draSummary(res *OracleResult) string {
	switch {
	case res.NotTried != nil:
		return fmt.Sprintf("not tried: %s %v %s", res.NotTried.Plugin, res.NotTried.Code, res.NotTried.Message)
	case len(res.Errors) > 0:
		return "error: " + strings.Join(res.Errors, "; ")
	case res.FitErrorMessage != "" && !res.Nodes["n1"].Feasible && !res.Nodes["n2"].Feasible:
		return res.FitErrorMessage
	}
	var lines []string
	for _, name := range []string{"n1", "n2"} {
		line := name + ": " + verdict(res.Nodes[name])
		if score, ok := res.Nodes[name].Scores["DynamicResources"]; ok {
			line += fmt.Sprintf(", DynamicResources %d", score)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "; ")
}
