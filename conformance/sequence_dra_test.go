package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	kfwk "github.com/kubesched/kubesched/fwk"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
)

// TestPlacingClaimingPodsOneAfterAnotherAgreesWithUpstream places pods
// with ResourceClaims, prioritized lists and DRA-backed extended
// resources one after another through kubesched's cache, assuming each
// with the claims kubesched's Result gives, until the GPUs run out. Before
// each placement, upstream is asked about the same committed state (the
// pods bound so far and every claim as kubesched allocated it): each
// decision must agree, and no device may be handed out twice.
func TestPlacingClaimingPodsOneAfterAnotherAgreesWithUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nodes, objects := draSequenceCluster()

	c := newCache(t, nodes, nil)
	listers, err := kfwk.NewListers(objects...)
	if err != nil {
		t.Fatal(err)
	}
	listers.ResourceClaims = c.ResourceClaims()
	fw, err := ours.DefaultFramework(framework.WithListers(listers), framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}

	var bound []*v1.Pod
	holder := map[string]string{} // pool/device -> pod
	outcomes := map[string]int{}
	for i := range 16 {
		pod, claim := sequencePod(i)
		if claim != nil {
			if err := c.AddClaim(claim); err != nil {
				t.Fatal(err)
			}
		}
		claims, err := c.ResourceClaims().List(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(claims, func(a, b *resourceapi.ResourceClaim) int { return cmp.Compare(a.Name, b.Name) })
		s := &Scenario{Seed: uint64(i), Nodes: nodes, Pods: slices.Clone(bound), Pod: pod, Objects: slices.Clone(objects)}
		for _, claim := range claims {
			s.Objects = append(s.Objects, claim)
		}
		res, placed := placeAsUpstream(ctx, t, s, outcomes, func() (*framework.Result, error) {
			return fw.ScheduleSnapshot(ctx, pod, c.Snapshot())
		})
		if !placed {
			continue
		}
		holdDevices(t, holder, pod, res)
		b := pod.DeepCopy()
		b.Spec.NodeName = res.SuggestedHost
		b.Status.ExtendedResourceClaimStatus = filter.ExtendedResourceClaimStatus(res)
		if err := c.AssumePod(b, filter.Claims(res)...); err != nil {
			t.Fatal(err)
		}
		bound = append(bound, b)
	}
	t.Logf("outcomes: %v; devices handed out: %d", outcomes, len(holder))
	if outcomes["placed"] < 6 || outcomes["unschedulable"] < 2 {
		t.Errorf("outcomes %v: want the GPUs to run out after several placements", outcomes)
	}
}

// placeAsUpstream asks upstream about s, then places s.Pod with place
// and checks that kubesched's decision agrees, failing t otherwise. It
// counts the outcome and reports whether the pod was placed.
func placeAsUpstream(ctx context.Context, t *testing.T, s *Scenario, outcomes map[string]int, place func() (*framework.Result, error)) (*framework.Result, bool) {
	t.Helper()
	want, err := upstream.RunScenario(ctx, s)
	if err != nil {
		t.Fatalf("%s: oracle: %v", s.Pod.Name, err)
	}
	res, err := place()
	if diffs := diffResults(s, want, res, err); len(diffs) > 0 {
		t.Fatalf("%s (after %d placed): %d disagreement(s) with kube-scheduler:\n%s", s.Pod.Name, len(s.Pods), len(diffs), formatDiffs(diffs, 20))
	}
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		outcomes["unschedulable"]++
		return nil, false
	}
	if err != nil {
		t.Fatalf("%s: %v", s.Pod.Name, err)
	}
	outcomes["placed"]++
	return res, true
}

// holdDevices records the devices res allocated to pod in holder (pool/
// device to pod), failing t when one was handed out before or lies on
// another node than the pod's.
func holdDevices(t *testing.T, holder map[string]string, pod *v1.Pod, res *framework.Result) {
	t.Helper()
	for _, claim := range filter.Claims(res) {
		for _, r := range claim.Status.Allocation.Devices.Results {
			id := r.Pool + "/" + r.Device
			if prev, taken := holder[id]; taken {
				t.Fatalf("device %s handed to %s and %s", id, prev, pod.Name)
			}
			if r.Pool != res.SuggestedHost {
				t.Fatalf("%s placed on %s got device %s", pod.Name, res.SuggestedHost, id)
			}
			holder[id] = pod.Name
		}
	}
}

// draSequenceCluster is the cluster the DRA sequences place pods on:
// four nodes publishing A100 and T4 GPUs, the classes selecting them, one
// of which backs the extended resource example.com/gpu.
func draSequenceCluster() ([]*v1.Node, []runtime.Object) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nodes := []*v1.Node{node("n0", 16000), node("n1", 16000), node("n2", 16000), node("n3", 16000)}
	// n3 offers example.com/gpu from a device plugin too, so that
	// NodeResourcesFit checks it there and DRA allocates it elsewhere.
	nodes[3].Status.Allocatable["example.com/gpu"] = resource.MustParse("2")
	return nodes, []runtime.Object{
		deviceClass("a100", "a100", "", created),
		deviceClass("gpu", "", "example.com/gpu", created),
		gpuSlice("n0", "a100", "t4", "t4"),
		gpuSlice("n1", "t4", "t4"),
		gpuSlice("n2", "a100", "a100", "t4", "t4"),
		gpuSlice("n3", "t4"),
	}
}

// TestSimPlacingClaimingPodsAgreesWithUpstream places the same pods
// through sim.Cluster, every claim given to sim.New up front, as a
// simulator loads a cluster's pending pods and their claims: before each
// placement upstream is asked about the same state (the pods placed so
// far and every claim as the placements allocated it), each decision
// must agree, and no device may be handed out twice.
func TestSimPlacingClaimingPodsAgreesWithUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nodes, objects := draSequenceCluster()
	var pods []*v1.Pod
	claims := map[string]*resourceapi.ResourceClaim{}
	for i := range 16 {
		pod, claim := sequencePod(i)
		pods = append(pods, pod)
		if claim != nil {
			claims[claim.Name] = claim
		}
	}
	current := func() []runtime.Object {
		objs := slices.Clone(objects)
		for _, name := range slices.Sorted(maps.Keys(claims)) {
			objs = append(objs, claims[name])
		}
		return objs
	}
	c := simCluster(t, &Scenario{Nodes: nodes, Objects: current()})
	var bound []*v1.Pod
	holder := map[string]string{} // pool/device -> pod
	outcomes := map[string]int{}
	for _, pod := range pods {
		s := &Scenario{Nodes: nodes, Pods: slices.Clone(bound), Pod: pod, Objects: current()}
		res, placed := placeAsUpstream(ctx, t, s, outcomes, func() (*framework.Result, error) { return c.Place(ctx, pod) })
		if !placed {
			continue
		}
		holdDevices(t, holder, pod, res)
		for _, claim := range filter.Claims(res) {
			claims[claim.Name] = claim
		}
		inCluster, ok := c.Pod(pod.Namespace, pod.Name)
		if !ok || inCluster.Spec.NodeName != res.SuggestedHost {
			t.Fatalf("%s: placed on %s, but the cluster holds %v", pod.Name, res.SuggestedHost, inCluster)
		}
		bound = append(bound, inCluster)
	}
	t.Logf("outcomes: %v; devices handed out: %d", outcomes, len(holder))
	if outcomes["placed"] < 6 || outcomes["unschedulable"] < 2 {
		t.Errorf("outcomes %v: want the GPUs to run out after several placements", outcomes)
	}
}

// sequencePod is the i-th pod of the sequence, cycling through four
// kinds: a claim for one GPU, a claim preferring an A100 to any GPU, an
// extended resource backed by the gpu class, and a claim for two GPUs.
// It returns the claim to create with it, if any.
func sequencePod(i int) (*v1.Pod, *resourceapi.ResourceClaim) {
	pod := podRequesting(fmt.Sprintf("pod-%02d", i), 500)
	newClaim := func(requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
		name := pod.Name + "-gpu"
		addPodClaim(pod, "gpu", name, "")
		return &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace, UID: types.UID("uid-" + name)},
			Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}},
		}
	}
	switch i % 4 {
	case 0:
		return pod, newClaim(exactRequest("gpu", "gpu", 1))
	case 1:
		return pod, newClaim(resourceapi.DeviceRequest{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{
			{Name: "a100", DeviceClassName: "a100", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
			{Name: "any", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		}})
	case 2:
		one := resource.MustParse("1")
		pod.Spec.Containers[0].Resources.Requests["example.com/gpu"] = one
		pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": one}
		return pod, nil
	default:
		return pod, newClaim(exactRequest("gpu", "gpu", 2))
	}
}
