package filter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

func draPtr[T any](v T) *T { return &v }

// The DRA fixtures: driver gpu.example.com publishes devices per node in a
// pool named after the node; the class "gpu" selects all of them.
const draDriver = "gpu.example.com"

func draNode(name string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}})
}

func draClass(name, expression string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: expression},
		}}},
	}
}

var draGPUClass = draClass("gpu", `device.driver == "gpu.example.com"`)

// draDevice is a device with a model attribute.
func draDevice(name, model string) resourceapi.Device {
	return resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"model": {StringValue: draPtr(model)},
	}}
}

// draSlice publishes devices on node, in the pool named after node.
func draSlice(node string, devices ...resourceapi.Device) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + draDriver},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   draDriver,
			NodeName: draPtr(node),
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices:  devices,
		},
	}
}

// draGPUs returns n devices gpu-0... of model a100.
func draGPUs(n int) []resourceapi.Device {
	var out []resourceapi.Device
	for i := range n {
		out = append(out, draDevice(fmt.Sprintf("gpu-%d", i), "a100"))
	}
	return out
}

func draExactly(name, class string, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count,
	}}
}

func draFirstAvailable(name string, subs ...resourceapi.DeviceSubRequest) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, FirstAvailable: subs}
}

func draSub(name, class string) resourceapi.DeviceSubRequest {
	return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}
}

// draClaim is a claim in namespace default.
func draClaim(name string, requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-claim-" + name)},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}},
	}
}

// draAllocated returns a copy of c allocated on node (empty node: available
// everywhere) with one result per device for c's first request.
func draAllocated(c *resourceapi.ResourceClaim, node string, devices ...string) *resourceapi.ResourceClaim {
	c = c.DeepCopy()
	a := &resourceapi.AllocationResult{}
	for _, d := range devices {
		a.Devices.Results = append(a.Devices.Results, resourceapi.DeviceRequestAllocationResult{
			Request: c.Spec.Devices.Requests[0].Name, Driver: draDriver, Pool: node, Device: d,
		})
	}
	if node != "" {
		a.NodeSelector = draOnNode(node)
	}
	c.Status.Allocation = a
	return c
}

// draPod is a pod in namespace default using the named claims, each under
// its own name.
func draPod(name string, claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
	for _, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: c, ResourceClaimName: draPtr(c)})
	}
	return p
}

// draTemplatePod is pod p whose claim "gpu" comes from a template, with a
// status entry naming the generated claim (nil: none generated) when
// withEntry.
func draTemplatePod(status *string, withEntry bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"}}
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: draPtr("gpu-template")}}
	if withEntry {
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: status}}
	}
	return p
}

// draOwnedBy makes c controlled by pod, as the claim controller makes the
// claims it generates from templates.
func draOwnedBy(c *resourceapi.ResourceClaim, pod *v1.Pod) *resourceapi.ResourceClaim {
	c = c.DeepCopy()
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: draPtr(true)}}
	return c
}

func draState(t testing.TB, nodes []*nodeinfo.NodeInfo, objs ...runtime.Object) *fwk.CycleState {
	t.Helper()
	l, err := fwk.NewListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return fwk.NewCycleState(nodes).SetListers(l)
}

func checkStatus(t *testing.T, what string, got *fwk.Status, code fwk.Code, message string) {
	t.Helper()
	if got.Code() != code || got.Message() != message {
		t.Errorf("%s = %v, want %v %q", what, got, code, message)
	}
}

func TestDynamicResourcesPreFilter(t *testing.T) {
	t.Parallel()
	gpu := draClaim("gpu", draExactly("gpu", "gpu", 1))
	deleting := gpu.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	templatePod := draTemplatePod(draPtr("p-gpu"), true)
	generated := draClaim("p-gpu", draExactly("gpu", "gpu", 1))
	badSelector := draAllocated(gpu, "n1", "gpu-0")
	badSelector.Status.Allocation.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Operator = "Bogus"
	otherNamespace := gpu.DeepCopy()
	otherNamespace.Namespace = "other"

	tests := []struct {
		name    string
		pod     *v1.Pod
		objs    []runtime.Object
		code    fwk.Code
		message string
	}{
		{"a pod without claims is skipped", draPod("p"), []runtime.Object{gpu, draGPUClass}, fwk.Skip, ""},
		{"a claim that exists with an existing class passes", draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass}, fwk.Success, ""},
		{"a claim that does not exist turns the pod down", draPod("p", "gpu"), []runtime.Object{draGPUClass}, fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/gpu"`},
		{"a claim of that name in another namespace is not the pod's", draPod("p", "gpu"), []runtime.Object{otherNamespace, draGPUClass}, fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/gpu"`},
		{"a claim being deleted turns the pod down", draPod("p", "gpu"), []runtime.Object{deleting, draGPUClass}, fwk.UnschedulableAndUnresolvable, `resourceclaim "gpu" is being deleted`},
		{"a template claim not generated yet turns the pod down", draTemplatePod(nil, false), []runtime.Object{draGPUClass}, fwk.UnschedulableAndUnresolvable, `pod "default/p": ResourceClaim not created yet`},
		{"a template status entry without a name skips the pod's only claim", draTemplatePod(nil, true), []runtime.Object{draGPUClass}, fwk.Skip, ""},
		{"a template claim controlled by the pod passes", templatePod, []runtime.Object{draOwnedBy(generated, templatePod), draGPUClass}, fwk.Success, ""},
		{"a template claim not controlled by the pod turns the pod down", templatePod, []runtime.Object{generated, draGPUClass}, fwk.UnschedulableAndUnresolvable, "ResourceClaim default/p-gpu was not created for Pod default/p (Pod is not owner)"},
		{"a template claim controlled by another pod turns the pod down", templatePod, []runtime.Object{draOwnedBy(generated, draPod("q")), draGPUClass}, fwk.UnschedulableAndUnresolvable, "ResourceClaim default/p-gpu was not created for Pod default/p (Pod is not owner)"},
		{
			"a pod claim naming neither a claim nor a template turns the pod down",
			&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{{Name: "gpu"}}}},
			nil, fwk.UnschedulableAndUnresolvable, `pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set`,
		},
		{"a request naming a missing class turns the pod down", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu", "missing", 1)), draGPUClass}, fwk.UnschedulableAndUnresolvable, "request gpu: device class missing does not exist"},
		{"a later request naming a missing class turns the pod down too", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("a", "gpu", 1), draExactly("b", "missing", 1)), draGPUClass}, fwk.UnschedulableAndUnresolvable, "request b: device class missing does not exist"},
		{
			"a subrequest naming a missing class turns the pod down",
			draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draFirstAvailable("gpu", draSub("big", "gpu"), draSub("small", "missing"))), draGPUClass},
			fwk.UnschedulableAndUnresolvable, "request gpu/small: device class missing does not exist",
		},
		{
			"a request with neither exactly nor firstAvailable turns the pod down",
			draPod("p", "gpu"), []runtime.Object{draClaim("gpu", resourceapi.DeviceRequest{Name: "r"}), draGPUClass},
			fwk.UnschedulableAndUnresolvable, "resource claim default/gpu, request r: unknown request type",
		},
		{"an exact request with an empty class name is an error", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("r", "", 1)), draGPUClass}, fwk.Error, "request r: unsupported request type"},
		{"a subrequest with an empty class name is an error", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draFirstAvailable("r", draSub("s", ""))), draGPUClass}, fwk.Error, "request r/s: unsupported request type"},
		{"an allocated claim's classes are not checked", draPod("p", "gpu"), []runtime.Object{draAllocated(draClaim("gpu", draExactly("gpu", "gone", 1)), "n1", "gpu-0")}, fwk.Success, ""},
		{
			"an allocated claim with an unparsable node selector is an error",
			draPod("p", "gpu"), []runtime.Object{badSelector, draGPUClass},
			fwk.Error, `nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Bogus": supported values: "In", "NotIn"`,
		},
		{"the first failing claim of several is reported", draPod("p", "gpu", "absent"), []runtime.Object{gpu, draGPUClass}, fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/absent"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := []*nodeinfo.NodeInfo{draNode("n1")}
			state := draState(t, nodes, tc.objs...)
			res, got := (&DynamicResources{}).PreFilter(context.Background(), state, tc.pod, nodes)
			if res != nil {
				t.Errorf("PreFilterResult = %v, want nil (every node)", res)
			}
			checkStatus(t, "PreFilter", got, tc.code, tc.message)
		})
	}
}

// draTolerating makes the request tolerate device taints with key.
func draTolerating(r resourceapi.DeviceRequest, key string) resourceapi.DeviceRequest {
	r.Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: key, Operator: resourceapi.DeviceTolerationOpExists}}
	return r
}

func draTainted(d resourceapi.Device, key string, effect resourceapi.DeviceTaintEffect) resourceapi.Device {
	d.Taints = []resourceapi.DeviceTaint{{Key: key, Value: "true", Effect: effect}}
	return d
}

// draBinding returns a copy of the allocated claim c whose results wait
// for the condition "attached" and fail on "failed", with conditions in
// status.devices as a driver reports them (none: no device status) and
// allocated as the allocation time (zero: none).
func draBinding(c *resourceapi.ResourceClaim, allocated time.Time, conditions ...metav1.Condition) *resourceapi.ResourceClaim {
	c = c.DeepCopy()
	for i := range c.Status.Allocation.Devices.Results {
		r := &c.Status.Allocation.Devices.Results[i]
		r.BindingConditions = []string{"attached"}
		r.BindingFailureConditions = []string{"failed"}
		if conditions != nil {
			c.Status.Devices = append(c.Status.Devices, resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device, Conditions: conditions})
		}
	}
	if !allocated.IsZero() {
		c.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: allocated}
	}
	return c
}

func draCondition(typ string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "Driver", Message: "said so"}
}

func TestDynamicResourcesFilter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	gpu := draClaim("gpu", draExactly("gpu", "gpu", 1))
	oneGPU := draSlice("n1", draGPUs(1)...)
	twoGPUs := draSlice("n1", draGPUs(2)...)
	allGPUs := draClaim("gpu", resourceapi.DeviceRequest{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeAll}})
	sameModel := draClaim("gpu", draExactly("a", "gpu", 1), draExactly("b", "gpu", 1))
	sameModel.Spec.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: draPtr(resourceapi.FullyQualifiedName(draDriver + "/model"))}}
	mixedModels := draSlice("n1", draDevice("gpu-0", "a100"), draDevice("gpu-1", "h100"))
	pairedModels := draSlice("n1", draDevice("gpu-0", "a100"), draDevice("gpu-1", "h100"), draDevice("gpu-2", "h100"))
	adminHeld := draAllocated(draClaim("admin", draExactly("gpu", "gpu", 1)), "n1", "gpu-0")
	adminHeld.Status.Allocation.Devices.Results[0].AdminAccess = draPtr(true)
	held := draAllocated(draClaim("other", draExactly("gpu", "gpu", 1)), "n1", "gpu-0")
	bound := draAllocated(gpu, "n1", "gpu-0")
	everywhere := draAllocated(gpu, "", "gpu-0")
	prefer := draClaim("gpu", draFirstAvailable("gpu", draSub("big", "big"), draSub("small", "gpu")))
	bigClass := draClass("big", `device.attributes["gpu.example.com"].model == "h100"`)
	tolerant := draClaim("gpu", draTolerating(draExactly("gpu", "gpu", 1), "broken"))
	withoutCEL := draClaim("gpu", draExactly("gpu", "gpu", 1))
	withoutCEL.Spec.Devices.Requests[0].Exactly.Selectors = []resourceapi.DeviceSelector{{}}
	stale := now.Add(-601 * time.Second)
	fresh := now.Add(-599 * time.Second)

	tests := []struct {
		name    string
		pod     *v1.Pod
		objs    []runtime.Object
		node    string
		code    fwk.Code
		message string
	}{
		{"a pod without claims fits", draPod("p"), nil, "n1", fwk.Success, ""},
		{"an allocated claim fits the node its node selector admits", draPod("p", "gpu"), []runtime.Object{bound}, "n1", fwk.Success, ""},
		{"an allocated claim does not fit a node its node selector excludes", draPod("p", "gpu"), []runtime.Object{bound}, "n2", fwk.UnschedulableAndUnresolvable, ErrReasonClaimNotAvailable},
		{"an allocated claim without a node selector fits every node", draPod("p", "gpu"), []runtime.Object{everywhere}, "n2", fwk.Success, ""},
		{"an unallocated claim fits a node with a matching device", draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, oneGPU}, "n1", fwk.Success, ""},
		{"an unallocated claim does not fit a node without devices", draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, oneGPU}, "n2", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a device another allocated claim holds is not handed out again", draPod("p", "gpu"), []runtime.Object{gpu, held, draGPUClass, oneGPU}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a free device beside a held one is handed out", draPod("p", "gpu"), []runtime.Object{gpu, held, draGPUClass, twoGPUs}, "n1", fwk.Success, ""},
		{"a device held with admin access is still free", draPod("p", "gpu"), []runtime.Object{gpu, adminHeld, draGPUClass, oneGPU}, "n1", fwk.Success, ""},
		{"a class selecting nothing leaves nothing to allocate", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu", "none", 1)), draClass("none", `device.driver == "other.example.com"`), oneGPU}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"two devices do not fit a node with one", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu", "gpu", 2)), draGPUClass, oneGPU}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"two devices fit a node with two", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu", "gpu", 2)), draGPUClass, twoGPUs}, "n1", fwk.Success, ""},
		{"allocation mode All fits a node with devices", draPod("p", "gpu"), []runtime.Object{allGPUs, draGPUClass, twoGPUs}, "n1", fwk.Success, ""},
		{"allocation mode All does not fit a node without devices", draPod("p", "gpu"), []runtime.Object{allGPUs, draGPUClass, twoGPUs}, "n2", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"allocation mode All does not fit when a device is held", draPod("p", "gpu"), []runtime.Object{allGPUs, held, draGPUClass, twoGPUs}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a matchAttribute constraint rejects devices that differ", draPod("p", "gpu"), []runtime.Object{sameModel, draGPUClass, mixedModels}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a matchAttribute constraint accepts two devices that agree", draPod("p", "gpu"), []runtime.Object{sameModel, draGPUClass, pairedModels}, "n1", fwk.Success, ""},
		{"a prioritized list falls back to a later subrequest", draPod("p", "gpu"), []runtime.Object{prefer, draGPUClass, bigClass, oneGPU}, "n1", fwk.Success, ""},
		{"a prioritized list with no subrequest that fits rejects", draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draFirstAvailable("gpu", draSub("big", "big"))), bigClass, oneGPU}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a device with an untolerated NoSchedule taint is not used", draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, draSlice("n1", draTainted(draDevice("gpu-0", "a100"), "broken", resourceapi.DeviceTaintEffectNoSchedule))}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a device with an untolerated NoExecute taint is not used", draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, draSlice("n1", draTainted(draDevice("gpu-0", "a100"), "broken", resourceapi.DeviceTaintEffectNoExecute))}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a device with a tolerated NoSchedule taint is used", draPod("p", "gpu"), []runtime.Object{tolerant, draGPUClass, draSlice("n1", draTainted(draDevice("gpu-0", "a100"), "broken", resourceapi.DeviceTaintEffectNoSchedule))}, "n1", fwk.Success, ""},
		{"a device with a None taint is used", draPod("p", "gpu"), []runtime.Object{gpu, draGPUClass, draSlice("n1", draTainted(draDevice("gpu-0", "a100"), "broken", resourceapi.DeviceTaintEffectNone))}, "n1", fwk.Success, ""},
		{
			"a class whose CEL does not compile (not a boolean) is an error",
			draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu", "broken", 1)), draClass("broken", `device.driver`), oneGPU}, "n1",
			fwk.Error, "class broken: selector #0: CEL compile error: must evaluate to bool or the unknown type, not string",
		},
		{
			"a class whose CEL fails on a device is an error",
			draPod("p", "gpu"), []runtime.Object{draClaim("gpu", draExactly("gpu", "broken", 1)), draClass("broken", `device.attributes["gpu.example.com"].healthy`), oneGPU}, "n1",
			fwk.Error, "class broken: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such key: healthy. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
		},
		{
			"a claim whose CEL fails on a device is an error",
			draPod("p", "gpu"), []runtime.Object{draClaim("gpu", resourceapi.DeviceRequest{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
				Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.attributes["gpu.example.com"].healthy`}}},
			}}), draGPUClass, oneGPU}, "n1",
			fwk.Error, "claim default/gpu: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such key: healthy. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
		},
		{"a claim selector without cel is an error", draPod("p", "gpu"), []runtime.Object{withoutCEL, draGPUClass, oneGPU}, "n1", fwk.Error, "claim default/gpu, request gpu, selector #0: CEL expression empty (unsupported selector type?)"},
		{"an allocated claim whose binding failed fits no node", draPod("p", "gpu"), []runtime.Object{draBinding(bound, fresh, draCondition("failed", metav1.ConditionTrue))}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonClaimNotAvailable},
		{"a false binding failure condition does not reject", draPod("p", "gpu"), []runtime.Object{draBinding(bound, stale, draCondition("failed", metav1.ConditionFalse), draCondition("attached", metav1.ConditionTrue))}, "n1", fwk.Success, ""},
		{"an allocated claim not ready past the binding timeout fits no node", draPod("p", "gpu"), []runtime.Object{draBinding(bound, stale, draCondition("attached", metav1.ConditionFalse))}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonClaimNotAvailable},
		{"an allocated claim without device status past the binding timeout fits no node", draPod("p", "gpu"), []runtime.Object{draBinding(bound, stale)}, "n1", fwk.UnschedulableAndUnresolvable, ErrReasonClaimNotAvailable},
		{"an allocated claim not ready within the binding timeout fits", draPod("p", "gpu"), []runtime.Object{draBinding(bound, fresh, draCondition("attached", metav1.ConditionFalse))}, "n1", fwk.Success, ""},
		{"an allocated claim ready past the binding timeout fits", draPod("p", "gpu"), []runtime.Object{draBinding(bound, stale, draCondition("attached", metav1.ConditionTrue))}, "n1", fwk.Success, ""},
		{"an allocated claim not ready without an allocation time fits", draPod("p", "gpu"), []runtime.Object{draBinding(bound, time.Time{}, draCondition("attached", metav1.ConditionFalse))}, "n1", fwk.Success, ""},
		{"an unavailable allocated claim rejects even when the other claims allocate", draPod("p", "gpu", "other"), []runtime.Object{bound, draClaim("other", draExactly("gpu", "gpu", 1)), draGPUClass, draSlice("n2", draGPUs(1)...)}, "n2", fwk.UnschedulableAndUnresolvable, ErrReasonClaimNotAvailable},
		{"an allocated claim and an unallocated one both fit", draPod("p", "gpu", "other"), []runtime.Object{bound, draClaim("other", draExactly("gpu", "gpu", 1)), draGPUClass, twoGPUs}, "n1", fwk.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := []*nodeinfo.NodeInfo{draNode("n1"), draNode("n2")}
			state := draState(t, nodes, tc.objs...)
			pl := withDRA(dra.Args{Now: func() time.Time { return now }})
			if _, s := pl.PreFilter(context.Background(), state, tc.pod, nodes); !s.IsSuccess() && !s.IsSkip() {
				t.Fatalf("PreFilter: %v", s)
			}
			ni := nodes[0]
			if tc.node == "n2" {
				ni = nodes[1]
			}
			checkStatus(t, "Filter", pl.Filter(context.Background(), state, tc.pod, ni), tc.code, tc.message)
		})
	}
}

func TestDynamicResourcesFilterWordsCELErrorsAsTheReleaseDoes(t *testing.T) {
	t.Parallel()
	broken := []runtime.Object{draClaim("gpu", draExactly("gpu", "broken", 1)), draClass("broken", `device.attributes["gpu.example.com"].healthy`), draSlice("n1", draGPUs(1)...)}
	tests := []struct {
		name     string
		features *feature.Features
		message  string
	}{
		{"v1.37 names the device and hints at optional chaining", nil,
			"class broken: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such key: healthy. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields"},
		{"v1.36 does neither", &feature.Features{}, "class broken: selector #0: CEL runtime error: no such key: healthy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := []*nodeinfo.NodeInfo{draNode("n1")}
			state := draState(t, nodes, broken...)
			pl := withDRA(dra.Args{})
			pl.Features = tc.features
			if _, s := pl.PreFilter(context.Background(), state, draPod("p", "gpu"), nodes); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			checkStatus(t, "Filter", pl.Filter(context.Background(), state, draPod("p", "gpu"), nodes[0]), fwk.Error, tc.message)
		})
	}
}

func TestDynamicResourcesFilterWithoutPreFilter(t *testing.T) {
	t.Parallel()
	nodes := []*nodeinfo.NodeInfo{draNode("n1"), draNode("n2")}
	objs := []runtime.Object{draClaim("gpu", draExactly("gpu", "gpu", 1)), draGPUClass, draSlice("n1", draGPUs(1)...)}
	tests := []struct {
		name    string
		pod     *v1.Pod
		node    *nodeinfo.NodeInfo
		code    fwk.Code
		message string
	}{
		{"a node with the device fits", draPod("p", "gpu"), nodes[0], fwk.Success, ""},
		{"a node without it does not", draPod("p", "gpu"), nodes[1], fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate},
		{"a missing claim turns the pod down on every node", draPod("p", "absent"), nodes[0], fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/absent"`},
		{"a pod without claims fits", draPod("p"), nodes[1], fwk.Success, ""},
		{"a pod whose only claim was deliberately not generated fits", draTemplatePod(nil, true), nodes[1], fwk.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkStatus(t, "Filter", (&DynamicResources{}).Filter(context.Background(), draState(t, nodes, objs...), tc.pod, tc.node), tc.code, tc.message)
		})
	}
}

func TestDynamicResourcesFilterStopsWhenAsked(t *testing.T) {
	t.Parallel()
	// Four requests over four devices make the allocator search, so it
	// looks at its context.
	claim := draClaim("gpu", draExactly("a", "gpu", 1), draExactly("b", "gpu", 1), draExactly("c", "gpu", 1), draExactly("d", "gpu", 1))
	objs := []runtime.Object{claim, draGPUClass, draSlice("n1", draGPUs(4)...)}
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("test canceling Filter"))
		return ctx
	}
	plainCancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	tests := []struct {
		name    string
		args    dra.Args
		ctx     func() context.Context
		code    fwk.Code
		message string
	}{
		{"a cancelled context rejects the node with the cause", dra.Args{}, cancelled, fwk.UnschedulableAndUnresolvable, "asked by caller to stop allocating devices: test canceling Filter"},
		{"a context cancelled without a cause says so", dra.Args{}, plainCancelled, fwk.UnschedulableAndUnresolvable, "asked by caller to stop allocating devices: context canceled"},
		{"a cancelled context wins over a filter timeout", dra.Args{FilterTimeout: time.Nanosecond}, cancelled, fwk.UnschedulableAndUnresolvable, "asked by caller to stop allocating devices: test canceling Filter"},
		{"a filter timeout is an error naming the node", dra.Args{FilterTimeout: time.Nanosecond}, context.Background, fwk.Error, "node n1: timed out trying to allocate devices"},
		{"a negative filter timeout means no limit", dra.Args{FilterTimeout: -1}, context.Background, fwk.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := []*nodeinfo.NodeInfo{draNode("n1")}
			state := draState(t, nodes, objs...)
			pl := withDRA(tc.args)
			if _, s := pl.PreFilter(context.Background(), state, draPod("p", "gpu"), nodes); s != nil {
				t.Fatalf("PreFilter: %v", s)
			}
			checkStatus(t, "Filter", pl.Filter(tc.ctx(), state, draPod("p", "gpu"), nodes[0]), tc.code, tc.message)
		})
	}
}

func TestDynamicResourcesFilterRejectsANodeInfoWithoutNode(t *testing.T) {
	t.Parallel()
	objs := []runtime.Object{draClaim("gpu", draExactly("gpu", "gpu", 1)), draGPUClass, draSlice("n1", draGPUs(1)...)}
	tests := []struct {
		name      string
		prefilter bool
	}{
		{"after PreFilter", true},
		{"without PreFilter", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := []*nodeinfo.NodeInfo{draNode("n1")}
			state := draState(t, nodes, objs...)
			pl := &DynamicResources{}
			if tc.prefilter {
				if _, s := pl.PreFilter(context.Background(), state, draPod("p", "gpu"), nodes); s != nil {
					t.Fatalf("PreFilter: %v", s)
				}
			}
			checkStatus(t, "Filter", pl.Filter(context.Background(), state, draPod("p", "gpu"), nodeinfo.New(nil)), fwk.Error, "node not found: NodeInfo has no Node")
		})
	}
}

// Filter runs concurrently over nodes in a framework; under -race this
// shows the per-node allocations it records do not race.
func TestDynamicResourcesFilterConcurrently(t *testing.T) {
	t.Parallel()
	var nodes []*nodeinfo.NodeInfo
	objs := []runtime.Object{draClaim("gpu", draExactly("gpu", "gpu", 1)), draGPUClass}
	for i := range 64 {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, draNode(name))
		if i%2 == 0 {
			objs = append(objs, draSlice(name, draGPUs(1)...))
		}
	}
	state := draState(t, nodes, objs...)
	pl := &DynamicResources{}
	pod := draPod("p", "gpu")
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); s != nil {
		t.Fatalf("PreFilter: %v", s)
	}
	got := make([]*fwk.Status, len(nodes))
	done := make(chan int)
	for i := range nodes {
		go func() {
			got[i] = pl.Filter(context.Background(), state, pod, nodes[i])
			done <- i
		}()
	}
	for range nodes {
		<-done
	}
	for i, s := range got {
		if i%2 == 0 {
			checkStatus(t, nodes[i].Name(), s, fwk.Success, "")
		} else {
			checkStatus(t, nodes[i].Name(), s, fwk.UnschedulableAndUnresolvable, ErrReasonCannotAllocate)
		}
	}
}

func TestDynamicResourcesReserve(t *testing.T) {
	t.Parallel()
	nodes := []*nodeinfo.NodeInfo{draNode("n1"), draNode("n2")}
	gpu := draClaim("gpu", draExactly("gpu", "gpu", 1))
	objs := []runtime.Object{gpu, draGPUClass, draSlice("n1", draGPUs(1)...)}
	tests := []struct {
		name    string
		pod     *v1.Pod
		node    string
		claims  int
		code    fwk.Code
		message string
	}{
		{"a node Filter found feasible gets the claim", draPod("p", "gpu"), "n1", 1, fwk.Success, ""},
		{"a node Filter rejected is an error", draPod("p", "gpu"), "n2", 0, fwk.Error, "claim allocation not found for node n2"},
		{"a node Filter never saw is an error", draPod("p", "gpu"), "n3", 0, fwk.Error, "claim allocation not found for node n3"},
		{"a pod without claims adds none", draPod("p"), "n2", 0, fwk.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			state := draState(t, nodes, objs...)
			pl := &DynamicResources{}
			if _, s := pl.PreFilter(context.Background(), state, tc.pod, nodes); !s.IsSuccess() && !s.IsSkip() {
				t.Fatalf("PreFilter: %v", s)
			}
			for _, ni := range nodes {
				pl.Filter(context.Background(), state, tc.pod, ni)
			}
			var r framework.Result
			checkStatus(t, "Reserve", pl.Reserve(context.Background(), state, tc.pod, tc.node, &r.Outputs), tc.code, tc.message)
			if len(Claims(&r)) != tc.claims {
				t.Fatalf("Reserve added %d claims, want %d", len(Claims(&r)), tc.claims)
			}
			if tc.claims == 1 {
				c := Claims(&r)[0]
				if c == gpu || c.Status.Allocation == nil || len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].UID != tc.pod.UID {
					t.Errorf("Reserve's claim = %+v, want a copy allocated and reserved for the pod", c)
				}
				if gpu.Status.Allocation != nil || len(gpu.Status.ReservedFor) != 0 || len(gpu.Finalizers) != 0 {
					t.Errorf("Reserve modified the listed claim: %+v", gpu)
				}
			}
		})
	}
}

// draOnNode is the node selector the allocator gives a node-local
// allocation, and the one draAllocated sets.
func draOnNode(node string) *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
}

// draReserved returns a copy of c as Reserve writes it for pod: reserved,
// and, when allocated here, with the finalizer and the result on node.
func draReserved(c *resourceapi.ResourceClaim, pod *v1.Pod, node string, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	c = c.DeepCopy()
	if results != nil {
		c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}, NodeSelector: draOnNode(node)}
	}
	c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
	return c
}

func draResult(request, node, device string) resourceapi.DeviceRequestAllocationResult {
	return resourceapi.DeviceRequestAllocationResult{Request: request, Driver: draDriver, Pool: node, Device: device}
}

func draJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// The claims a placement returns, through a framework with the filter and
// the scorer, as kube-scheduler writes them on binding.
func TestDynamicResourcesResultClaims(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := draPod("p", "gpu")
	gpu := draClaim("gpu", draExactly("gpu", "gpu", 1))
	other := draClaim("other", draExactly("gpu", "gpu", 1))
	held := draAllocated(draClaim("held", draExactly("gpu", "gpu", 1)), "n1", "gpu-0")
	onN2 := draAllocated(gpu, "n2", "gpu-0")
	alreadyReserved := draReserved(onN2, pod, "")
	sharedWithQ := draReserved(onN2, draPod("q"), "")
	withFinalizer := gpu.DeepCopy()
	withFinalizer.Finalizers = []string{resourceapi.Finalizer}
	attaching := draSlice("n1", draGPUs(1)...)
	attaching.Spec.Devices[0].BindingConditions = []string{"attached"}
	attaching.Spec.Devices[0].BindingFailureConditions = []string{"failed"}
	attachingResult := draResult("gpu", "n1", "gpu-0")
	attachingResult.BindingConditions = []string{"attached"}
	attachingResult.BindingFailureConditions = []string{"failed"}
	withTime := func(c *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		c.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: now}
		return c
	}

	tests := []struct {
		name string
		pod  *v1.Pod
		objs []runtime.Object
		host string
		want []*resourceapi.ResourceClaim
	}{
		{
			"an unallocated claim comes back allocated on the chosen node, reserved, with the finalizer",
			pod, []runtime.Object{gpu, draGPUClass, draSlice("n1", draGPUs(1)...)},
			"n1", []*resourceapi.ResourceClaim{draReserved(gpu, pod, "n1", draResult("gpu", "n1", "gpu-0"))},
		},
		{
			"a finalizer already there is not added twice",
			pod, []runtime.Object{withFinalizer, draGPUClass, draSlice("n1", draGPUs(1)...)},
			"n1", []*resourceapi.ResourceClaim{draReserved(gpu, pod, "n1", draResult("gpu", "n1", "gpu-0"))},
		},
		{
			"the device another claim holds is skipped",
			pod, []runtime.Object{gpu, held, draGPUClass, draSlice("n1", draGPUs(2)...)},
			"n1", []*resourceapi.ResourceClaim{draReserved(gpu, pod, "n1", draResult("gpu", "n1", "gpu-1"))},
		},
		{
			"an allocated claim is reserved and keeps its allocation",
			pod, []runtime.Object{onN2, draGPUClass},
			"n2", []*resourceapi.ResourceClaim{draReserved(onN2, pod, "")},
		},
		{
			"a claim reserved for another pod is shared",
			pod, []runtime.Object{sharedWithQ, draGPUClass},
			"n2", []*resourceapi.ResourceClaim{draReserved(sharedWithQ, pod, "")},
		},
		{
			"a claim already reserved for the pod is not reserved twice",
			pod, []runtime.Object{alreadyReserved, draGPUClass},
			"n2", []*resourceapi.ResourceClaim{alreadyReserved},
		},
		{
			"claims come back in the pod's order, allocated and not",
			draPod("p", "other", "gpu"), []runtime.Object{onN2, other, draGPUClass, draSlice("n1", draGPUs(1)...), draSlice("n2", draGPUs(2)...)},
			"n2", []*resourceapi.ResourceClaim{draReserved(other, pod, "n2", draResult("gpu", "n2", "gpu-1")), draReserved(onN2, pod, "")},
		},
		{
			"a device with binding conditions gets the allocation time",
			pod, []runtime.Object{gpu, draGPUClass, attaching},
			"n1", []*resourceapi.ResourceClaim{withTime(draReserved(gpu, pod, "n1", attachingResult))},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := make([]runtime.Object, len(tc.objs))
			for i, o := range tc.objs {
				before[i] = o.DeepCopyObject()
			}
			res := draSchedule(t, dra.Args{Now: func() time.Time { return now }}, tc.pod, tc.objs)
			if res.SuggestedHost != tc.host {
				t.Errorf("SuggestedHost = %s, want %s", res.SuggestedHost, tc.host)
			}
			// Whether claims without binding conditions get the allocation
			// time is TestDynamicResourcesResultClaimsCarryTheAllocationTime's
			// subject.
			for i, c := range Claims(res) {
				if i < len(tc.want) && tc.want[i].Status.Allocation != nil && tc.want[i].Status.Allocation.AllocationTimestamp == nil &&
					c.Status.Allocation != nil && c.Status.Allocation.AllocationTimestamp != nil && c.Status.Allocation.AllocationTimestamp.Time.Equal(now) {
					c.Status.Allocation.AllocationTimestamp = nil
				}
			}
			if !apiequality.Semantic.DeepEqual(Claims(res), tc.want) {
				t.Errorf("Claims =\n%s\nwant\n%s", draJSON(Claims(res)), draJSON(tc.want))
			}
			if !apiequality.Semantic.DeepEqual(tc.objs, before) {
				t.Errorf("Schedule modified the listed objects:\n%s\nwant\n%s", draJSON(tc.objs), draJSON(before))
			}
			for _, c := range Claims(res) {
				for _, o := range tc.objs {
					if o == runtime.Object(c) {
						t.Errorf("claim %s is the listed object, want a copy", c.Name)
					}
				}
			}
		})
	}
}

// withDRA is the plugin with internal args, a clock among them.
func withDRA(args dra.Args) *DynamicResources { return &DynamicResources{p: dra.New(args)} }

func TestNewDynamicResourcesTakesKubeSchedulersArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    *configv1.DynamicResourcesArgs
		wantErr string
	}{
		{name: "nil args are the defaults", args: nil},
		{name: "a zero filter timeout turns the limit off", args: &configv1.DynamicResourcesArgs{FilterTimeout: &metav1.Duration{}}},
		{name: "a negative filter timeout is refused in kube-scheduler's words",
			args:    &configv1.DynamicResourcesArgs{FilterTimeout: &metav1.Duration{Duration: -time.Second}},
			wantErr: `filterTimeout: Invalid value: "-1s": must be zero or positive`},
		{name: "a binding timeout under a second is refused in kube-scheduler's words",
			args:    &configv1.DynamicResourcesArgs{BindingTimeout: &metav1.Duration{Duration: time.Millisecond}},
			wantErr: `bindingTimeout: Invalid value: "1ms": must be at least 1 second`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := NewDynamicResources(tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("NewDynamicResources = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewDynamicResources: %v", err)
			}
			if pl.p == nil {
				t.Fatal("NewDynamicResources returned the shared default plugin")
			}
		})
	}
}

// draSchedule places pod on n1 and n2 with a framework running only
// DynamicResources (filter, scorer and Reserve) over objs.
func draSchedule(t *testing.T, args dra.Args, pod *v1.Pod, objs []runtime.Object) *framework.Result {
	t.Helper()
	fw, err := framework.New(
		framework.WithPlugin(withDRA(args), 0),
		framework.WithPlugin(&score.DynamicResources{}, 1),
		framework.WithObjects(objs...),
	)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fw.Schedule(context.Background(), pod, []*nodeinfo.NodeInfo{draNode("n1"), draNode("n2")})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// kube-scheduler v1.36.3's PreBind (bindClaim, with DRADeviceBindingConditions
// and DRAResourceClaimDeviceStatus on by default) sets
// status.allocation.allocationTimestamp on every claim it binds whose
// allocation has none, binding conditions or not.
func TestDynamicResourcesResultClaimsCarryTheAllocationTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := draPod("p", "gpu")
	gpu := draClaim("gpu", draExactly("gpu", "gpu", 1))
	onN2 := draAllocated(gpu, "n2", "gpu-0")
	tests := []struct {
		name string
		objs []runtime.Object
	}{
		{"a claim allocated here", []runtime.Object{gpu, draGPUClass, draSlice("n1", draGPUs(1)...)}},
		{"a claim allocated before without a time", []runtime.Object{onN2, draGPUClass}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := draSchedule(t, dra.Args{Now: func() time.Time { return now }}, pod, tc.objs)
			if len(Claims(res)) != 1 {
				t.Fatalf("got %d claims, want 1", len(Claims(res)))
			}
			if got := Claims(res)[0].Status.Allocation.AllocationTimestamp; got == nil || !got.Time.Equal(now) {
				t.Errorf("allocationTimestamp = %v, want %v", got, now)
			}
		})
	}
}

// Claims and classes API validation would reject reach a library's
// listers unchecked (a YAML dump, a hand-built object); broken input is
// an Error status, never a panic. FuzzPreFilterFilter found these.
func TestDynamicResourcesInvalidObjectsAreErrorsNotPanics(t *testing.T) {
	t.Parallel()
	unnamed := draClaim("gpu", draFirstAvailable("", draSub("", "gpu")))
	tests := []struct {
		name string
		objs []runtime.Object
	}{
		{"a class selector without cel", []runtime.Object{draClaim("gpu", draExactly("gpu", "broken", 1)), &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "broken"}, Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{}}}}, draSlice("n1", draGPUs(1)...)}},
		{"a firstAvailable request without a name", []runtime.Object{unnamed, draGPUClass, draSlice("n1", draGPUs(1)...)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panic: %v", r)
				}
			}()
			nodes := []*nodeinfo.NodeInfo{draNode("n1")}
			state := draState(t, nodes, tc.objs...)
			pl := &DynamicResources{}
			// PreFilter may already say so; otherwise Filter must.
			_, s := pl.PreFilter(context.Background(), state, draPod("p", "gpu"), nodes)
			if s.IsSuccess() {
				s = pl.Filter(context.Background(), state, draPod("p", "gpu"), nodes[0])
			}
			if s.Code() != fwk.Error || s.Message() == "" {
				t.Errorf("PreFilter, then Filter = %v, want an Error status saying what is wrong", s)
			}
		})
	}
}

func TestDynamicResourcesPreEnqueue(t *testing.T) {
	t.Parallel()
	deleting := draClaim("gpu", draExactly("gpu", "gpu", 1))
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	tests := []struct {
		name    string
		objs    []runtime.Object
		pod     *v1.Pod
		code    fwk.Code
		message string
	}{
		{"a pod without claims is admitted", nil, draPod("p"), fwk.Success, ""},
		{"a pod whose claims exist is admitted, whether or not they can be allocated", []runtime.Object{draClaim("gpu", draExactly("gpu", "missing-class", 1))}, draPod("p", "gpu"), fwk.Success, ""},
		{"a pod whose claim does not exist waits", nil, draPod("p", "gpu"), fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/gpu"`},
		{"a pod whose claim is being deleted waits", []runtime.Object{deleting}, draPod("p", "gpu"), fwk.UnschedulableAndUnresolvable, `resourceclaim "gpu" is being deleted`},
		{"a pod whose template claim was not generated yet waits", nil, draTemplatePod(nil, false), fwk.UnschedulableAndUnresolvable, `pod "default/p": ResourceClaim not created yet`},
		{"a pod whose template produced no claim is admitted", nil, draTemplatePod(nil, true), fwk.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := fwk.NewListers(tc.objs...)
			if err != nil {
				t.Fatal(err)
			}
			var pl DynamicResources
			checkStatus(t, "PreEnqueue", pl.PreEnqueue(context.Background(), l, tc.pod), tc.code, tc.message)
		})
	}
	var pl DynamicResources
	if s := pl.PreEnqueue(context.Background(), fwk.Listers{}, nil); s != nil {
		t.Errorf("PreEnqueue(nil pod) = %v, want nil", s)
	}
}
