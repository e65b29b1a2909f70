package dra

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

const driver = "gpu.example.com"

var gpuClass = &resourceapi.DeviceClass{
	ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
	Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
		CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`},
	}}},
}

func gpuSlice(node string, devices ...string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: driver, NodeName: &node,
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d})
	}
	return s
}

func gpuClaim(name, namespace string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-claim-" + name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name:    "gpu",
			Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
}

// withResults returns a copy of c allocated with results (no node
// selector).
func withResults(c *resourceapi.ResourceClaim, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	c = c.DeepCopy()
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
	return c
}

func result(device string) resourceapi.DeviceRequestAllocationResult {
	return resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: driver, Pool: "n1", Device: device}
}

func podUsing(namespace string, claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: namespace, UID: "uid-p"}}
	for _, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: c, ResourceClaimName: &c})
	}
	return p
}

func listers(t testing.TB, objs ...runtime.Object) fwk.Listers {
	t.Helper()
	l, err := fwk.NewListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func node(name string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func checkStatus(t *testing.T, what string, got *fwk.Status, code fwk.Code, message string) {
	t.Helper()
	if got.Code() != code || got.Message() != message {
		t.Errorf("%s = %v, want %v %q", what, got, code, message)
	}
}

// listOnly is a claim lister without the Get fast path, as a client-go
// lister wrapped to hide it would be.
type listOnly []*resourceapi.ResourceClaim

func (l listOnly) List(labels.Selector) ([]*resourceapi.ResourceClaim, error) { return l, nil }

type failingClaims struct{ getErr, listErr error }

func (f failingClaims) List(labels.Selector) ([]*resourceapi.ResourceClaim, error) {
	return nil, f.listErr
}

func (f failingClaims) Get(namespace, name string) (*resourceapi.ResourceClaim, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	return gpuClaim(name, namespace), nil
}

type failingSlices struct{}

func (failingSlices) List(labels.Selector) ([]*resourceapi.ResourceSlice, error) {
	return nil, errors.New("slices unavailable")
}

type failingClasses struct{}

func (failingClasses) List(labels.Selector) ([]*resourceapi.DeviceClass, error) {
	return nil, errors.New("classes unavailable")
}

func TestPreFilterLooksClaimsUp(t *testing.T) {
	t.Parallel()
	inDefault, inOther := gpuClaim("gpu", "default"), gpuClaim("gpu", "other")
	classes := listers(t, gpuClass).DeviceClasses
	tests := []struct {
		name    string
		listers fwk.Listers
		pod     *v1.Pod
		code    fwk.Code
		message string
	}{
		{"a list-only lister finds the claim in the pod's namespace", fwk.Listers{ResourceClaims: listOnly{inOther, inDefault}, DeviceClasses: classes}, podUsing("default", "gpu"), fwk.Success, ""},
		{"a list-only lister does not take a claim from another namespace", fwk.Listers{ResourceClaims: listOnly{inOther}, DeviceClasses: classes}, podUsing("default", "gpu"), fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/gpu"`},
		{"no claim lister finds no claim", fwk.Listers{DeviceClasses: classes}, podUsing("default", "gpu"), fwk.UnschedulableAndUnresolvable, `could not find ResourceClaim "default/gpu"`},
		{"no class lister finds no class", fwk.Listers{ResourceClaims: listOnly{inDefault}}, podUsing("default", "gpu"), fwk.UnschedulableAndUnresolvable, "request gpu: device class gpu does not exist"},
		{"a failing claim lookup turns the pod down with its error", fwk.Listers{ResourceClaims: failingClaims{getErr: errors.New("cache broken")}, DeviceClasses: classes}, podUsing("default", "gpu"), fwk.UnschedulableAndUnresolvable, "cache broken"},
		{"a failing claim listing is an error when gathering the allocated devices", fwk.Listers{ResourceClaims: failingClaims{listErr: errors.New("cache broken")}, DeviceClasses: classes}, podUsing("default", "gpu"), fwk.Error, "gather allocation state: cache broken"},
		{"a failing class listing is an error", fwk.Listers{ResourceClaims: listOnly{inDefault}, DeviceClasses: failingClasses{}}, podUsing("default", "gpu"), fwk.Error, "classes unavailable"},
		{"a failing slice listing is an error", fwk.Listers{ResourceClaims: listOnly{inDefault}, DeviceClasses: classes, ResourceSlices: failingSlices{}}, podUsing("default", "gpu"), fwk.Error, "slices unavailable"},
		{"a failing slice listing does not matter when nothing needs allocating", fwk.Listers{ResourceClaims: listOnly{withResults(inDefault, result("gpu-0"))}, DeviceClasses: failingClasses{}, ResourceSlices: failingSlices{}}, podUsing("default", "gpu"), fwk.Success, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, got := New(Args{}).PreFilter(context.Background(), cycle(tc.listers), tc.pod, feature.Default())
			checkStatus(t, "PreFilter", got, tc.code, tc.message)
			if got.IsSuccess() == (s == nil) {
				t.Errorf("PreFilter returned state %v with status %v; want a state exactly on success", s, got)
			}
		})
	}
}

func TestPreFilterState(t *testing.T) {
	t.Parallel()
	unallocated := gpuClaim("new", "default")
	allocated := withResults(gpuClaim("old", "default"), result("gpu-0"))
	tests := []struct {
		name          string
		claims        []string
		numToAllocate int
		allocator     bool
	}{
		{"only allocated claims need no allocator", []string{"old"}, 0, false},
		{"an unallocated claim needs the allocator", []string{"new"}, 1, true},
		{"claims are counted in the pod's order", []string{"old", "new", "old"}, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, st := New(Args{}).PreFilter(context.Background(), cycle(listers(t, unallocated, allocated, gpuClass)), podUsing("default", tc.claims...), feature.Default())
			if st != nil {
				t.Fatal(st)
			}
			if s.Empty() || len(s.claims) != len(tc.claims) || s.numToAllocate != tc.numToAllocate || (s.allocator != nil) != tc.allocator {
				t.Fatalf("state has %d claims, %d to allocate, allocator %v; want %d, %d, %v", len(s.claims), s.numToAllocate, s.allocator != nil, len(tc.claims), tc.numToAllocate, tc.allocator)
			}
			for i, name := range tc.claims {
				if s.claims[i].Name != name {
					t.Errorf("claim %d is %s, want %s", i, s.claims[i].Name, name)
				}
			}
		})
	}
}

func TestAllocatedState(t *testing.T) {
	t.Parallel()
	shareID := func(r resourceapi.DeviceRequestAllocationResult, id string) resourceapi.DeviceRequestAllocationResult {
		uid := types.UID(id)
		r.ShareID = &uid
		r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}
		return r
	}
	admin := result("gpu-1")
	admin.AdminAccess = new(bool)
	*admin.AdminAccess = true
	notAdmin := result("gpu-2")
	notAdmin.AdminAccess = new(bool)
	gpu0 := structured.MakeDeviceID(driver, "n1", "gpu-0")
	gpu3 := structured.MakeDeviceID(driver, "n1", "gpu-3")
	tests := []struct {
		name       string
		claims     []*resourceapi.ResourceClaim
		consumable bool
		devices    []structured.DeviceID
		shared     []structured.SharedDeviceID
		capacity   bool
	}{
		{"an unallocated claim holds nothing", []*resourceapi.ResourceClaim{gpuClaim("a", "default")}, true, nil, nil, false},
		{"an allocated claim holds its devices", []*resourceapi.ResourceClaim{withResults(gpuClaim("a", "default"), result("gpu-0"))}, true, []structured.DeviceID{gpu0}, nil, false},
		{"admin access holds nothing, adminAccess false holds the device", []*resourceapi.ResourceClaim{withResults(gpuClaim("a", "default"), admin, notAdmin)}, true, []structured.DeviceID{structured.MakeDeviceID(driver, "n1", "gpu-2")}, nil, false},
		{
			"a share holds a share and its capacity with consumable capacity",
			[]*resourceapi.ResourceClaim{withResults(gpuClaim("a", "default"), shareID(result("gpu-3"), "0b0e3a0e-0000-4000-8000-000000000001"))}, true,
			nil, []structured.SharedDeviceID{structured.MakeSharedDeviceID(gpu3, uidPtr("0b0e3a0e-0000-4000-8000-000000000001"))}, true,
		},
		{"a share holds the whole device without consumable capacity", []*resourceapi.ResourceClaim{withResults(gpuClaim("a", "default"), shareID(result("gpu-3"), "s"))}, false, []structured.DeviceID{gpu3}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := allocatedState(tc.claims, tc.consumable)
			if got.AllocatedDevices.Len() != len(tc.devices) || !got.AllocatedDevices.HasAll(tc.devices...) {
				t.Errorf("devices = %v, want %v", got.AllocatedDevices.UnsortedList(), tc.devices)
			}
			if got.AllocatedSharedDeviceIDs.Len() != len(tc.shared) || !got.AllocatedSharedDeviceIDs.HasAll(tc.shared...) {
				t.Errorf("shared devices = %v, want %v", got.AllocatedSharedDeviceIDs.UnsortedList(), tc.shared)
			}
			if (len(got.AggregatedCapacity) > 0) != tc.capacity {
				t.Errorf("consumed capacity = %v, want some: %v", got.AggregatedCapacity, tc.capacity)
			}
		})
	}
}

func uidPtr(s string) *types.UID { u := types.UID(s); return &u }

func TestNewDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		args            Args
		filter, binding time.Duration
	}{
		{"the zero value is kube-scheduler's defaults", Args{}, 10 * time.Second, 600 * time.Second},
		{"set timeouts are kept", Args{FilterTimeout: time.Second, BindingTimeout: time.Minute}, time.Second, time.Minute},
		{"a negative filter timeout is kept (no limit)", Args{FilterTimeout: -1}, -1, 600 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := New(tc.args)
			if p.filterTimeout != tc.filter || p.bindingTimeout != tc.binding || p.now == nil {
				t.Errorf("New(%+v) has filter timeout %v, binding timeout %v; want %v, %v and a clock", tc.args, p.filterTimeout, p.bindingTimeout, tc.filter, tc.binding)
			}
		})
	}
}

// bound is an allocated claim whose one device waits for "attached" and
// fails on "failed", with the given device conditions (nil: no device
// status at all) and allocation time.
func bound(at *time.Time, conditions ...metav1.Condition) *resourceapi.ResourceClaim {
	r := result("gpu-0")
	r.BindingConditions = []string{"attached"}
	r.BindingFailureConditions = []string{"failed"}
	c := withResults(gpuClaim("gpu", "default"), r, result("gpu-1"))
	if conditions != nil {
		c.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: driver, Pool: "n1", Device: "gpu-0", Conditions: conditions}}
	}
	if at != nil {
		c.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: *at}
	}
	return c
}

func cond(typ string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "Probe", Message: "cable unplugged"}
}

func TestBindingReadiness(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *time.Time { v := now.Add(-ago); return &v }
	otherDevice := bound(at(time.Hour), cond("attached", metav1.ConditionTrue))
	otherDevice.Status.Devices[0].Device = "gpu-9"
	tests := []struct {
		name     string
		claim    *resourceapi.ResourceClaim
		ready    bool
		err      string
		timedOut bool
	}{
		{"a claim without binding conditions is ready", withResults(gpuClaim("gpu", "default"), result("gpu-0")), true, "", false},
		{"a device without status is not ready", bound(at(time.Minute)), false, "", false},
		{"a device whose status is another device's is not ready", otherDevice, false, "", true},
		{"all binding conditions true is ready", bound(at(time.Hour), cond("attached", metav1.ConditionTrue)), true, "", true},
		{"a false binding condition is not ready", bound(at(time.Minute), cond("attached", metav1.ConditionFalse)), false, "", false},
		{"a true failure condition is a failure", bound(at(time.Minute), cond("attached", metav1.ConditionTrue), cond("failed", metav1.ConditionTrue)), false, `device binding failed: claim=gpu, reason=Probe, message="cable unplugged"`, false},
		{"a false failure condition is no failure", bound(at(time.Minute), cond("attached", metav1.ConditionTrue), cond("failed", metav1.ConditionFalse)), true, "", false},
		{"exactly the binding timeout has not timed out", bound(at(10*time.Minute), cond("attached", metav1.ConditionFalse)), false, "", false},
		{"past the binding timeout has timed out", bound(at(10*time.Minute+time.Nanosecond), cond("attached", metav1.ConditionFalse)), false, "", true},
		{"without an allocation time it never times out", bound(nil, cond("attached", metav1.ConditionFalse)), false, "", false},
	}
	p := New(Args{Now: func() time.Time { return now }})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ready, err := readyForBinding(tc.claim)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if ready != tc.ready || gotErr != tc.err {
				t.Errorf("readyForBinding = %v, %q; want %v, %q", ready, gotErr, tc.ready, tc.err)
			}
			if got := p.bindingTimedOut(tc.claim); got != tc.timedOut {
				t.Errorf("bindingTimedOut = %v, want %v", got, tc.timedOut)
			}
		})
	}
}

func TestScoreAndReserveWithoutFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := New(Args{})
	pod := podUsing("default", "gpu")
	s, st := p.PreFilter(ctx, cycle(listers(t, gpuClaim("gpu", "default"), gpuClass, gpuSlice("n1", "gpu-0"))), pod, feature.Default())
	if st != nil {
		t.Fatal(st)
	}
	if st := p.Filter(ctx, s, pod, node("n1")); st != nil {
		t.Fatal(st)
	}
	// A state whose allocation for n1 lost its entry: Score must report the
	// mismatch, not index out of range.
	broken := &State{claims: s.claims, availableOn: s.availableOn, allocator: s.allocator, numToAllocate: 1, prioritized: true,
		allocations: map[string]nodeAllocation{"n1": {}}}
	tests := []struct {
		name    string
		state   *State
		node    string
		score   int64
		code    fwk.Code
		message string
		claims  int
	}{
		{"a node Filter allocated on scores and reserves", s, "n1", 0, fwk.Success, "", 1},
		{"a node Filter never saw scores 0 and cannot be reserved", s, "n2", 0, fwk.Error, "claim allocation not found for node n2", 0},
		{"a nil state scores 0 and reserves nothing", nil, "n1", 0, fwk.Success, "", 0},
		{"too few allocations is an error", broken, "n1", 0, fwk.Error, "claim allocation not found for node n1", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claims, _, got := p.Reserve(tc.state, pod, tc.node)
			checkStatus(t, "Reserve", got, tc.code, tc.message)
			if len(claims) != tc.claims {
				t.Errorf("Reserve returned %d claims, want %d", len(claims), tc.claims)
			}
		})
	}
	score, got := Score(broken, "n1")
	checkStatus(t, "Score with too few allocations", got, fwk.Error, "number of allocations 0 is smaller than number of claims needing allocation")
	if score != 0 {
		t.Errorf("Score with too few allocations = %d, want 0", score)
	}
}

// cycle is a cycle state over listers, as a framework gives plugins.
func cycle(l fwk.Listers) *fwk.CycleState {
	return fwk.NewCycleState(nil).SetListers(l)
}

func TestCELErrorWithoutDeviceWordsErrorsAsV036(t *testing.T) {
	for _, tc := range []struct{ name, msg, want string }{
		{
			name: "a class selector's missing key loses the device and the hint",
			msg:  "class gpu: selector #0 on device gpu.example.com/node-3/gpu-0: CEL runtime error: no such key: modle. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
			want: "class gpu: selector #0: CEL runtime error: no such key: modle",
		},
		{
			name: "a claim selector's other runtime error loses the device",
			msg:  "claim default/c: selector #2 on device d/pool/sub/dev-1: CEL runtime error: no such overload",
			want: "claim default/c: selector #2: CEL runtime error: no such overload",
		},
		{
			name: "a compile error is left alone",
			msg:  "class gpu: selector #0: CEL compile error: undeclared reference",
			want: "class gpu: selector #0: CEL compile error: undeclared reference",
		},
		{
			name: "a message without CEL is left alone",
			msg:  "timed out trying to allocate devices",
			want: "timed out trying to allocate devices",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CELErrorWithoutDevice(tc.msg); got != tc.want {
				t.Errorf("CELErrorWithoutDevice(%q)\n got  %q\n want %q", tc.msg, got, tc.want)
			}
		})
	}
}
