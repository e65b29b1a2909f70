package main

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// gpuResource is the extended resource that draObjects' class provides.
const gpuResource = "example.com/gpu"

// askingForGPU is a kubesched pod whose container asks for one
// example.com/gpu, which no node offers itself: only DRA provides it.
func askingForGPU(name string) *v1.Pod {
	p := testPod(name, "100m", "kubesched")
	one := resource.MustParse("1")
	p.Spec.Containers[0].Resources.Requests[gpuResource] = one
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpuResource: one}
	return p
}

var resourceClaims = resourceapi.SchemeGroupVersion.WithResource("resourceclaims")

// newExtendedCluster is newFakeCluster with draObjects (one device, on
// node small), nodes small and big, and objs. Claims are versioned and
// named from their generateName, as the API server does.
func newExtendedCluster(objs ...runtime.Object) *fake.Clientset {
	all := append(draObjects(), testNode("small", "4"), testNode("big", "4"))
	return versioned(newFakeCluster(append(all, objs...)...), resourceClaims)
}

// writes lists client's writes in order, but Events', each as "verb
// resource[/subresource]" followed, for a pod's status patch, by the
// status fields it sets.
func writes(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		verb, res := a.GetVerb(), a.GetResource().Resource
		if verb == "get" || verb == "list" || verb == "watch" || res == "events" {
			continue
		}
		w := verb + " " + res
		if sub := a.GetSubresource(); sub != "" {
			w += "/" + sub
		}
		if p, ok := a.(clienttesting.PatchAction); ok && res == "pods" {
			var patch struct{ Status map[string]json.RawMessage }
			if err := json.Unmarshal(p.GetPatch(), &patch); err == nil {
				fields := slices.DeleteFunc(slices.Sorted(maps.Keys(patch.Status)), func(k string) bool { return strings.HasPrefix(k, "$") })
				w += " " + strings.Join(fields, ",")
			}
		}
		out = append(out, w)
	}
	return out
}

// The writes for a pod asking for a DRA-backed extended resource, in
// kube-scheduler v1.37.2's order: the nomination
// (NominatedNodeNameForExpectation), then DynamicResources' PreBind,
// then the binding.
const (
	nominate        = "patch pods/status nominatedNodeName"
	createClaim     = "create resourceclaims"
	updateClaim     = "update resourceclaims" // the finalizer, added by PreBind or removed by Unreserve
	writeAllocation = "update resourceclaims/status"
	patchExtended   = "patch pods/status extendedResourceClaimStatus"
	bindPod         = "create pods/binding"
	deleteClaim     = "delete resourceclaims"
	reportFailure   = "patch pods/status conditions,nominatedNodeName"
)

func TestControllerCreatesTheClaimForExtendedResourcesBeforeBinding(t *testing.T) {
	t.Parallel()
	client := newExtendedCluster(askingForGPU("a"))
	ctrl, err := New(client, Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	getPod := podGetter(ctx, t, client)
	eventually(t, "a is bound", func() bool { return getPod("a").Spec.NodeName != "" })
	a := getPod("a")
	if a.Spec.NodeName != "small" {
		t.Errorf("a went to %s; only small has a device", a.Spec.NodeName)
	}
	if got, want := writes(client), []string{nominate, createClaim, updateClaim, writeAllocation, patchExtended, bindPod}; !slices.Equal(got, want) {
		t.Errorf("writes:\n got  %q\n want %q", got, want)
	}

	list, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d claims, want the one created for a", len(list.Items))
	}
	claim := &list.Items[0]
	if claim.GenerateName != "a-extended-resources-" || !strings.HasPrefix(claim.Name, claim.GenerateName) {
		t.Errorf("claim named %q from generateName %q, want a name the API server made from a-extended-resources-", claim.Name, claim.GenerateName)
	}
	if claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
		t.Errorf("claim annotated %v, want %s", claim.Annotations, resourceapi.ExtendedResourceClaimAnnotation)
	}
	if refs := claim.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].Name != "a" || refs[0].UID != a.UID || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("claim owned by %+v, want pod a as controller", refs)
	}
	if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
		t.Errorf("claim has finalizers %v, want %s", claim.Finalizers, resourceapi.Finalizer)
	}
	if reqs := claim.Spec.Devices.Requests; len(reqs) != 1 || reqs[0].Name != "container-0-request-1" || reqs[0].Exactly == nil ||
		reqs[0].Exactly.DeviceClassName != "gpu" || reqs[0].Exactly.Count != 1 {
		t.Errorf("claim requests %+v, want one gpu as container-0-request-1", reqs)
	}
	if al := claim.Status.Allocation; al == nil || len(al.Devices.Results) != 1 || al.Devices.Results[0].Device != "gpu-0" ||
		al.Devices.Results[0].Request != "container-0-request-1" || al.AllocationTimestamp == nil {
		t.Errorf("claim allocated %+v, want gpu-0 for container-0-request-1, with a time", claim.Status.Allocation)
	}
	if r := claim.Status.ReservedFor; len(r) != 1 || r[0].Resource != "pods" || r[0].Name != "a" || r[0].UID != a.UID {
		t.Errorf("claim reserved for %+v, want pod a", r)
	}
	want := &v1.PodExtendedResourceClaimStatus{
		RequestMappings:   []v1.ContainerExtendedResourceRequest{{ContainerName: "c", ResourceName: gpuResource, RequestName: "container-0-request-1"}},
		ResourceClaimName: claim.Name,
	}
	if got := a.Status.ExtendedResourceClaimStatus; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("a's extendedResourceClaimStatus is %+v, want %+v", got, want)
	}
	// As kube-scheduler creates it: no name, finalizer or status yet.
	created := client.Actions()[firstAction(client, "create", "resourceclaims", nil)].(clienttesting.CreateAction).GetObject().(*resourceapi.ResourceClaim)
	if created.Name != "" || created.UID != "" || len(created.Finalizers) != 0 || !equality.Semantic.DeepEqual(created.Status, resourceapi.ResourceClaimStatus{}) {
		t.Errorf("created %+v, want it without name, UID, finalizer and status", created)
	}

	// The cache holds the claim under the name the API server gave it,
	// not the one the placement made up.
	cached, err := ctrl.cache.ResourceClaims().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cached) != 1 || cached[0].Name != claim.Name || cached[0].Status.Allocation == nil {
		t.Errorf("the cache holds %d claims, want %s, allocated", len(cached), claim.Name)
	}
	// When the pod goes, the ResourceClaim controller deallocates its
	// claim, then deletes it: the informers give the device back. (The
	// deallocation is what retries a pod waiting for a device:
	// DynamicResources registers no hint for a claim's deletion.)
	if err := client.CoreV1().Pods("default").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	claim.Status = resourceapi.ResourceClaimStatus{}
	if _, err := client.ResourceV1().ResourceClaims("default").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.ResourceV1().ResourceClaims("default").Delete(ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, askingForGPU("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b is bound to small", func() bool { return getPod("b").Spec.NodeName == "small" })
}

// noDeviceLeft is what both schedulers say of a pod asking for
// example.com/gpu when the only device is taken.
const noDeviceLeft = "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."

// TestControllerKeepsTheDeviceOfAPodInFlight holds a's binding cycle at
// a write, so that b is tried while a is in flight, every time: the
// device a's claim takes is counted, under the name the placement gave
// the claim until the API server has named it, then under its own.
func TestControllerKeepsTheDeviceOfAPodInFlight(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, verb, resource string // the write held
	}{
		{"a second pod finds the device taken while the first pod's claim is being created", "create", "resourceclaims"},
		{"a second pod finds the device taken while the first pod is being bound", "create", "pods/binding"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := newExtendedCluster(askingForGPU("a"))
			res, sub, _ := strings.Cut(tt.resource, "/")
			held, release := make(chan struct{}), make(chan struct{})
			var holding atomic.Bool
			client.PrependReactor(tt.verb, res, func(action clienttesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() == sub && holding.CompareAndSwap(false, true) {
					close(held)
					<-release
				}
				return false, nil, nil
			})
			ctrl, err := New(client, Config{SchedulerName: "kubesched"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := startController(t, ctrl)
			var once sync.Once
			letGo := func() { once.Do(func() { close(release) }) }
			t.Cleanup(letGo) // before the controller stops, which waits for a

			select {
			case <-held:
			case <-time.After(30 * time.Second):
				t.Fatal("a never got to the write")
			}
			// The fake holds its lock while a reactor runs: b comes in
			// through the tracker.
			if err := client.Tracker().Add(askingForGPU("b")); err != nil {
				t.Fatal(err)
			}
			attempts := func(result string) int64 { return ctrl.metrics.Attempts("kubesched", result) }
			eventually(t, "b is tried", func() bool { return attempts("scheduled")+attempts("unschedulable") >= 2 })
			if n := attempts("unschedulable"); n != 1 {
				t.Fatalf("%d attempts found no fit; b should have found a's device taken", n)
			}
			letGo()

			getPod := podGetter(ctx, t, client)
			eventually(t, "a is bound", func() bool { return getPod("a").Spec.NodeName == "small" })
			eventually(t, "b is reported unschedulable", func() bool {
				c := podScheduled(getPod("b"))
				return c != nil && c.Reason == v1.PodReasonUnschedulable
			})
			if c := podScheduled(getPod("b")); c.Message != noDeviceLeft {
				t.Errorf("b's message:\n got  %s\n want %s", c.Message, noDeviceLeft)
			}
			list, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 || list.Items[0].OwnerReferences[0].Name != "a" {
				t.Errorf("%d claims, want a's alone", len(list.Items))
			}
			if node := getPod("b").Spec.NodeName; node != "" {
				t.Errorf("b was bound to %s", node)
			}
		})
	}
}

// podScheduled returns pod's PodScheduled condition, or nil.
func podScheduled(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// TestControllerUndoesTheClaimForExtendedResourcesWhenBindingFails
// refuses one write of a's binding cycle. As kube-scheduler's Unreserve,
// the controller deletes the claim it created (its finalizer first), and
// reports kube-scheduler's message on the pod, which goes back to the
// queue to wait out its backoff (the queue's clock stands still).
func TestControllerUndoesTheClaimForExtendedResourcesWhenBindingFails(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name           string
		verb, resource string // the write refused
		// message is the pod's, {claim} standing for the claim's name.
		message string
		// writes are those after the nomination.
		writes []string
		// keepsStatus: the pod keeps status.extendedResourceClaimStatus,
		// naming the deleted claim, as kube-scheduler leaves it.
		keepsStatus bool
	}{{
		name: "a refused creation leaves no claim",
		verb: "create", resource: "resourceclaims",
		message: `running PreBind plugin "DynamicResources": create claim for extended resources default/: the API server says no`,
		writes:  []string{createClaim, reportFailure},
	}, {
		name: "a refused finalizer deletes the claim created",
		verb: "update", resource: "resourceclaims",
		message: `running PreBind plugin "DynamicResources": add finalizer to claim default/{claim}: the API server says no`,
		writes:  []string{createClaim, updateClaim, updateClaim, deleteClaim, reportFailure},
	}, {
		name: "a refused allocation deletes the claim created",
		verb: "update", resource: "resourceclaims/status",
		message: `running PreBind plugin "DynamicResources": add allocation and reservation to claim default/{claim}: the API server says no`,
		// Unreserve starts from the claim as created: its finalizer
		// removal conflicts, and it reads the claim again.
		writes: []string{createClaim, updateClaim, writeAllocation, updateClaim, updateClaim, deleteClaim, reportFailure},
	}, {
		name: "a refused pod status deletes the claim allocated",
		verb: "patch", resource: "pods/status",
		message: `running PreBind plugin "DynamicResources": update pod default/a ExtendedResourceClaimStatus: the API server says no`,
		writes:  []string{createClaim, updateClaim, writeAllocation, patchExtended, updateClaim, updateClaim, deleteClaim, reportFailure},
	}, {
		name: "a refused binding deletes the claim and leaves the pod's status naming it",
		verb: "create", resource: "pods/binding",
		message:     `running Bind plugin "DefaultBinder": the API server says no`,
		writes:      []string{createClaim, updateClaim, writeAllocation, patchExtended, bindPod, updateClaim, deleteClaim, reportFailure},
		keepsStatus: true,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := newExtendedCluster(askingForGPU("a"))
			res, sub, _ := strings.Cut(tt.resource, "/")
			var refused atomic.Bool
			client.PrependReactor(tt.verb, res, func(action clienttesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() != sub {
					return false, nil, nil
				}
				if p, ok := action.(clienttesting.PatchAction); ok && !strings.Contains(string(p.GetPatch()), "extendedResourceClaimStatus") {
					return false, nil, nil
				}
				if !refused.CompareAndSwap(false, true) {
					return false, nil, nil // only the first: Unreserve's writes go through
				}
				return true, nil, errors.New("the API server says no")
			})
			ctrl, err := New(client, Config{SchedulerName: "kubesched", QueueOptions: fakeClockQueue()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := startController(t, ctrl)
			getA := func() *v1.Pod {
				p, err := client.CoreV1().Pods("default").Get(ctx, "a", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			eventually(t, "a's failure is reported", func() bool {
				c := podScheduled(getA())
				return c != nil && c.Status == v1.ConditionFalse
			})
			claimName := ""
			if i := firstAction(client, "update", "resourceclaims", nil); i >= 0 {
				claimName = client.Actions()[i].(clienttesting.UpdateAction).GetObject().(*resourceapi.ResourceClaim).Name
			}
			a := getA()
			c := podScheduled(a)
			if want := strings.ReplaceAll(tt.message, "{claim}", claimName); c.Reason != v1.PodReasonSchedulerError || c.Message != want {
				t.Errorf("a's condition: %s: %s\n want %s: %s", c.Reason, c.Message, v1.PodReasonSchedulerError, want)
			}
			if got, want := writes(client), append([]string{nominate}, tt.writes...); !slices.Equal(got, want) {
				t.Errorf("writes:\n got  %q\n want %q", got, want)
			}
			if a.Spec.NodeName != "" || a.Status.NominatedNodeName != "" {
				t.Errorf("a is bound to %q and nominated to %q, want neither", a.Spec.NodeName, a.Status.NominatedNodeName)
			}
			if kept := a.Status.ExtendedResourceClaimStatus; (kept != nil) != tt.keepsStatus || kept != nil && kept.ResourceClaimName != claimName {
				t.Errorf("a's extendedResourceClaimStatus is %+v; want it kept naming %q: %v", kept, claimName, tt.keepsStatus)
			}
			list, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 0 {
				t.Errorf("%d claims left, want none", len(list.Items))
			}
			if n := ctrl.pending()["backoff"]; n != 1 {
				t.Errorf("%d pods backing off, want a", n)
			}
			eventually(t, "the cache holds neither a nor a claim", func() bool {
				claims, err := ctrl.cache.ResourceClaims().List(nil)
				return err == nil && len(claims) == 0 && ctrl.cache.PodCount() == 0
			})
		})
	}
}

// heldWatch is a watch whose events wait while the test holds them.
type heldWatch struct {
	watch.Interface
	out chan watch.Event
}

func (w *heldWatch) ResultChan() <-chan watch.Event { return w.out }

// holdWatches makes client's watches of resource deliver no event while
// the channel hold returns is open.
func holdWatches(client *fake.Clientset, resource string) (hold func() (release func())) {
	var gate atomic.Pointer[chan struct{}]
	client.PrependWatchReactor(resource, func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		inner, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		w := &heldWatch{Interface: inner, out: make(chan watch.Event)}
		go func() {
			defer close(w.out)
			for ev := range inner.ResultChan() {
				if g := gate.Load(); g != nil {
					<-*g
				}
				w.out <- ev
			}
		}()
		return true, w, nil
	})
	return func() func() {
		g := make(chan struct{})
		gate.Store(&g)
		var once sync.Once
		return func() { once.Do(func() { gate.Store(nil); close(g) }) }
	}
}

// TestControllerBindsOnceTheInformerHasTheClaim holds the informer's
// claim events: as kube-scheduler, the controller does not bind the pod
// before it sees the claim it created as it wrote it, and until then
// counts the device under the name the placement gave the claim.
func TestControllerBindsOnceTheInformerHasTheClaim(t *testing.T) {
	t.Parallel()
	client := newExtendedCluster(askingForGPU("a"))
	hold := holdWatches(client, "resourceclaims")
	ctrl, err := New(client, Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	eventually(t, "the informers have synced", ctrl.Synced)
	release := hold()
	t.Cleanup(release) // before the controller stops, which waits for a
	getPod := podGetter(ctx, t, client)
	eventually(t, "a's status names its claim", func() bool { return getPod("a").Status.ExtendedResourceClaimStatus != nil })
	if _, err := client.CoreV1().Pods("default").Create(ctx, askingForGPU("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	attempts := func(result string) int64 { return ctrl.metrics.Attempts("kubesched", result) }
	eventually(t, "b is tried", func() bool { return attempts("scheduled")+attempts("unschedulable") >= 2 })
	if n := attempts("unschedulable"); n != 1 {
		t.Fatalf("%d attempts found no fit; b should have found a's device taken", n)
	}
	if node := getPod("a").Spec.NodeName; node != "" {
		t.Fatalf("a was bound to %s before the informer reported its claim", node)
	}
	release()
	eventually(t, "a is bound", func() bool { return getPod("a").Spec.NodeName == "small" })
	if node := getPod("b").Spec.NodeName; node != "" {
		t.Errorf("b was bound to %s", node)
	}
}
