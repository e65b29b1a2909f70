package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/queue"
)

const preemptionMessage = "kubesched: preempting to accommodate a higher priority pod"

var podsResource = v1.SchemeGroupVersion.WithResource("pods")

// prioritized sets pod's priority, as admission does from its class.
func prioritized(pod *v1.Pod, priority int32) *v1.Pod {
	pod.Spec.Priority = &priority
	return pod
}

// boundPod is a running pod of priority 0 on node.
func boundPod(name, cpu, node string) *v1.Pod {
	pod := prioritized(testPod(name, cpu, "kubesched"), 0)
	pod.Spec.NodeName = node
	return pod
}

func labelled(pod *v1.Pod, key, value string) *v1.Pod {
	pod.Labels = map[string]string{key: value}
	return pod
}

// budget is a PodDisruptionBudget over the pods labelled app=app that
// allows no disruption.
func budget(app string) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &one,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1},
	}
}

// recordFailureMessages makes client remember, pod by pod and in order,
// the message of each PodScheduled=False condition patched into a pod's
// status, as the controller writes it after each failed attempt.
func recordFailureMessages(client *fake.Clientset) func(pod string) []string {
	var mu sync.Mutex
	messages := map[string][]string{}
	client.PrependReactor("patch", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		p := action.(clienttesting.PatchAction)
		var patch struct {
			Status struct{ Conditions []v1.PodCondition } `json:"status"`
		}
		if p.GetSubresource() != "status" || json.Unmarshal(p.GetPatch(), &patch) != nil {
			return false, nil, nil
		}
		for _, c := range patch.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				mu.Lock()
				messages[p.GetName()] = append(messages[p.GetName()], c.Message)
				mu.Unlock()
			}
		}
		return false, nil, nil
	})
	return func(pod string) []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(messages[pod])
	}
}

// recordDeletions makes client remember each pod as it was when deleted.
func recordDeletions(client *fake.Clientset) func() map[string]*v1.Pod {
	var mu sync.Mutex
	deleted := map[string]*v1.Pod{}
	client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		d := action.(clienttesting.DeleteAction)
		if obj, err := client.Tracker().Get(podsResource, d.GetNamespace(), d.GetName()); err == nil {
			mu.Lock()
			deleted[d.GetName()] = obj.(*v1.Pod)
			mu.Unlock()
		}
		return false, nil, nil
	})
	return func() map[string]*v1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(deleted)
	}
}

// markedForPreemption reports whether pod carries the condition the
// controller sets on a victim before deleting it.
func markedForPreemption(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler && c.Message == preemptionMessage
		}
	}
	return false
}

func scheduledCondition(pod *v1.Pod) *v1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// runController runs a controller for "kubesched" on client, its queue
// on clock, until the test ends.
func runController(t *testing.T, client *fake.Clientset, clock *testingclock.FakeClock) {
	t.Helper()
	runControllerWith(t, client, Config{SchedulerName: "kubesched", QueueOptions: []queue.Option{queue.WithClock(clock)}})
}

// runControllerWith runs a controller configured by cfg on client until
// the test ends.
func runControllerWith(t *testing.T, client *fake.Clientset, cfg Config) {
	t.Helper()
	ctrl, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	startController(t, ctrl)
}

func getPod(t *testing.T, client *fake.Clientset, name string) *v1.Pod {
	t.Helper()
	pod, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func TestControllerPreemptsAsKubeScheduler(t *testing.T) {
	t.Parallel()
	never := v1.PreemptNever
	neverPreempts := prioritized(testPod("high", "2", "kubesched"), 1000)
	neverPreempts.Spec.PreemptionPolicy = &never
	// Two profiles of a configuration: kube-scheduler's default one, and
	// one without preemption.
	const profiles = "profiles:\n- schedulerName: kubesched\n- schedulerName: no-preemption\n" +
		"  plugins:\n    postFilter:\n      disabled: [{name: DefaultPreemption}]\n"
	tests := []struct {
		name string
		// config is a KubeSchedulerConfiguration's body for the
		// controller to serve; "" serves the default profile as
		// kubesched.
		config    string
		objs      []runtime.Object
		preemptor *v1.Pod
		// wantNode is where the preemptor is nominated and then bound;
		// "" for neither.
		wantNode    string
		wantEvicted []string
		// wantMessage is the message of the preemptor's first
		// PodScheduled=False condition. A later attempt can preempt
		// again, fewer victims, when it comes between the victims'
		// deletions: the fake deletes a pod at once, where an API server
		// would keep it terminating.
		wantMessage string
	}{
		{
			name: "a higher-priority pod evicts the pods filling a node, is nominated to it and binds there once they are gone",
			objs: []runtime.Object{
				testNode("full", "2"),
				boundPod("low-1", "1", "full"), boundPod("low-2", "1", "full"),
			},
			preemptor:   prioritized(testPod("high", "2", "kubesched"), 1000),
			wantNode:    "full",
			wantEvicted: []string{"low-1", "low-2"},
			wantMessage: "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node full, preempting 2 victims",
		},
		{
			name: "a pod whose preemptionPolicy is Never evicts nothing and is not nominated",
			objs: []runtime.Object{
				testNode("full", "2"),
				boundPod("low-1", "1", "full"), boundPod("low-2", "1", "full"),
			},
			preemptor: neverPreempts,
			// DynamicResources' PostFilter runs first, as in kube-scheduler.
			wantMessage: "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name: "a PodDisruptionBudget steers preemption to the node whose pod it does not protect",
			objs: []runtime.Object{
				testNode("a", "2"), testNode("b", "2"),
				labelled(boundPod("guarded", "2", "a"), "app", "guarded"),
				boundPod("unguarded", "2", "b"),
				budget("guarded"),
			},
			preemptor:   prioritized(testPod("high", "2", "kubesched"), 1000),
			wantNode:    "b",
			wantEvicted: []string{"unguarded"},
			wantMessage: "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node b, preempting 1 victims",
		},
		{
			name:   "a pod of a configuration's profile that runs DefaultPreemption preempts, beside a profile that does not",
			config: profiles,
			objs: []runtime.Object{
				testNode("full", "2"),
				boundPod("low-1", "1", "full"), boundPod("low-2", "1", "full"),
			},
			preemptor:   prioritized(testPod("high", "2", "kubesched"), 1000),
			wantNode:    "full",
			wantEvicted: []string{"low-1", "low-2"},
			wantMessage: "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node full, preempting 2 victims",
		},
		{
			name:   "a pod of a configuration's profile that disables DefaultPreemption evicts nothing and is not nominated",
			config: profiles,
			objs: []runtime.Object{
				testNode("full", "2"),
				boundPod("low-1", "1", "full"), boundPod("low-2", "1", "full"),
			},
			preemptor: prioritized(testPod("high", "2", "no-preemption"), 1000),
			// DynamicResources' PostFilter, the only one, says nothing for
			// a pod without claims.
			wantMessage: "0/1 nodes are available: 1 Insufficient cpu.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := newFakeCluster(append(slices.Clone(tt.objs), tt.preemptor)...)
			deleted := recordDeletions(client)
			failures := recordFailureMessages(client)
			cfg := Config{SchedulerName: "kubesched", QueueOptions: fakeClockQueue()}
			if tt.config != "" {
				cfg.SchedulerName, cfg.SchedulerConfig = "", loadTestConfig(t, tt.config)
			}
			runControllerWith(t, client, cfg)

			eventually(t, "the preemptor is marked unschedulable", func() bool {
				c := scheduledCondition(getPod(t, client, tt.preemptor.Name))
				return c != nil && c.Reason == v1.PodReasonUnschedulable
			})
			if tt.wantNode != "" {
				eventually(t, "the preemptor is bound", func() bool { return getPod(t, client, tt.preemptor.Name).Spec.NodeName != "" })
			}
			pod := getPod(t, client, tt.preemptor.Name)
			if pod.Spec.NodeName != tt.wantNode {
				t.Errorf("the preemptor is bound to %q, want %q", pod.Spec.NodeName, tt.wantNode)
			}
			if pod.Status.NominatedNodeName != tt.wantNode {
				t.Errorf("the preemptor is nominated to %q, want %q", pod.Status.NominatedNodeName, tt.wantNode)
			}
			if c := scheduledCondition(pod); c == nil || c.Status != v1.ConditionFalse {
				t.Errorf("the preemptor's PodScheduled condition is %+v, want False", c)
			}
			if got := failures(tt.preemptor.Name); len(got) == 0 || got[0] != tt.wantMessage {
				t.Errorf("the preemptor's PodScheduled=False messages are %q, want the first %q", got, tt.wantMessage)
			}

			gone := deleted()
			for _, name := range tt.wantEvicted {
				victim, ok := gone[name]
				switch {
				case !ok:
					t.Errorf("victim %s was not deleted", name)
				case !markedForPreemption(victim):
					t.Errorf("victim %s was deleted with conditions %+v, want DisruptionTarget by preemption", name, victim.Status.Conditions)
				}
			}
			for name := range gone {
				if !slices.Contains(tt.wantEvicted, name) {
					t.Errorf("%s was deleted, want only %v", name, tt.wantEvicted)
				}
			}
		})
	}
}

func TestPreemptEvictsVictimsAndClearsLowerNominations(t *testing.T) {
	t.Parallel()
	terminating := boundPod("terminating", "1", "full")
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	nominated := prioritized(testPod("nominated", "1", "kubesched"), 500)
	nominated.Status.NominatedNodeName = "full"
	tests := []struct {
		name        string
		objs        []runtime.Object
		preemption  *fwk.Preemption
		wantDeleted []string
		wantKept    []string
	}{
		{
			name:        "each victim is marked with DisruptionTarget, then deleted",
			objs:        []runtime.Object{boundPod("low-1", "1", "full"), boundPod("low-2", "1", "full")},
			preemption:  &fwk.Preemption{NominatedNodeName: "full", Victims: []*v1.Pod{boundPod("low-1", "1", "full"), boundPod("low-2", "1", "full")}},
			wantDeleted: []string{"low-1", "low-2"},
		},
		{
			name:        "a victim already gone is no error",
			objs:        []runtime.Object{boundPod("low-1", "1", "full")},
			preemption:  &fwk.Preemption{NominatedNodeName: "full", Victims: []*v1.Pod{boundPod("gone", "1", "full"), boundPod("low-1", "1", "full")}},
			wantDeleted: []string{"low-1"},
		},
		{
			name:        "a victim already terminating gets no API call",
			objs:        []runtime.Object{terminating, boundPod("low-1", "1", "full")},
			preemption:  &fwk.Preemption{NominatedNodeName: "full", Victims: []*v1.Pod{terminating, boundPod("low-1", "1", "full")}},
			wantDeleted: []string{"low-1"},
			wantKept:    []string{"terminating"},
		},
		{
			name: "a lower-priority pod nominated to the node loses its nomination",
			objs: []runtime.Object{boundPod("low-1", "1", "full"), nominated},
			preemption: &fwk.Preemption{
				NominatedNodeName:  "full",
				Victims:            []*v1.Pod{boundPod("low-1", "1", "full")},
				NominationsToClear: []*v1.Pod{nominated},
			},
			wantDeleted: []string{"low-1"},
			wantKept:    []string{"nominated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := fake.NewClientset(tt.objs...)
			deleted := recordDeletions(client)
			ctrl, err := New(client, Config{SchedulerName: "kubesched"})
			if err != nil {
				t.Fatal(err)
			}
			preemptor := prioritized(testPod("high", "2", "kubesched"), 1000)
			p := tt.preemption
			if err := ctrl.preempt(context.Background(), preemptor, p.NominationsToClear, victimsToDelete(p)); err != nil {
				t.Fatalf("preempt: %v", err)
			}
			gone := deleted()
			for _, name := range tt.wantDeleted {
				if victim, ok := gone[name]; !ok || !markedForPreemption(victim) {
					t.Errorf("victim %s: deleted %t, want deleted after being marked for preemption", name, ok)
				}
			}
			if len(gone) != len(tt.wantDeleted) {
				t.Errorf("deleted %d pods, want %v", len(gone), tt.wantDeleted)
			}
			for _, name := range tt.wantKept {
				pod := getPod(t, client, name)
				if pod.Status.NominatedNodeName != "" {
					t.Errorf("%s is still nominated to %s", name, pod.Status.NominatedNodeName)
				}
				if markedForPreemption(pod) {
					t.Errorf("%s, not to be touched, was marked for preemption", name)
				}
			}
		})
	}
}

func TestReleaseClaimsDoesWhatDynamicResourcesDecided(t *testing.T) {
	t.Parallel()
	allocated := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "default"},
		Status: resourceapi.ResourceClaimStatus{
			Allocation:  &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"}}}},
			ReservedFor: []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "high", UID: "uid-high"}},
		},
	}
	deallocated := allocated.DeepCopy()
	deallocated.Status = resourceapi.ResourceClaimStatus{}
	extended := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{
		Name: "high-extended-resources-x", Namespace: "default", Finalizers: []string{resourceapi.Finalizer, "example.com/keep"},
	}}
	tests := []struct {
		name string
		fe   *framework.FitError
		// check inspects the cluster afterwards.
		check func(t *testing.T, client *fake.Clientset)
	}{
		{
			name: "an allocated claim is deallocated through its status",
			fe:   fitErrorWith(filter.DeallocateClaimOutput, deallocated),
			check: func(t *testing.T, client *fake.Clientset) {
				claim, err := client.ResourceV1().ResourceClaims("default").Get(context.Background(), "gpu", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if claim.Status.Allocation != nil || len(claim.Status.ReservedFor) > 0 {
					t.Errorf("the claim keeps its allocation %+v, reserved for %v", claim.Status.Allocation, claim.Status.ReservedFor)
				}
				if !slices.ContainsFunc(client.Actions(), func(a clienttesting.Action) bool {
					return a.GetVerb() == "update" && a.GetSubresource() == "status"
				}) {
					t.Error("no UpdateStatus call")
				}
			},
		},
		{
			name: "the claim made for extended resources loses the ResourceClaim controller's finalizer, then is deleted",
			fe:   fitErrorWith(filter.DeleteClaimOutput, extended),
			check: func(t *testing.T, client *fake.Clientset) {
				var updated *resourceapi.ResourceClaim
				deleted := false
				for _, a := range client.Actions() {
					switch a := a.(type) {
					case clienttesting.UpdateAction:
						updated = a.GetObject().(*resourceapi.ResourceClaim)
					case clienttesting.DeleteAction:
						deleted = updated != nil
					}
				}
				if updated == nil || !slices.Equal(updated.Finalizers, []string{"example.com/keep"}) {
					t.Errorf("the claim was updated to %+v, want only the other finalizer kept", updated)
				}
				if !deleted {
					t.Error("the claim was not deleted after its finalizer was removed")
				}
				if _, err := client.ResourceV1().ResourceClaims("default").Get(context.Background(), extended.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("the claim is still there (err %v)", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := fake.NewClientset(allocated.DeepCopy(), extended.DeepCopy())
			ctrl, err := New(client, Config{SchedulerName: "kubesched"})
			if err != nil {
				t.Fatal(err)
			}
			client.ClearActions()
			ctrl.releaseClaims(context.Background(), tt.fe)
			tt.check(t, client)
		})
	}
	if len(extended.Finalizers) != 2 {
		t.Error("releaseClaims modified the FitError's claim")
	}
}

func TestControllerClearsTheNominationOfAPodWhoseBindingFailed(t *testing.T) {
	t.Parallel()
	pod := testPod("nominated", "1", "kubesched")
	pod.Status.NominatedNodeName = "node"
	client := newFakeCluster(testNode("node", "2"), pod)
	var failures atomic.Int32
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "binding" && failures.Add(1) == 1 {
			return true, nil, apierrors.NewInternalError(context.DeadlineExceeded)
		}
		return false, nil, nil
	})
	clock := testingclock.NewFakeClock(time.Unix(0, 0))
	runController(t, client, clock)

	// The clock stands still until then, so the pod waits out its
	// backoff: the fake clientset's bind and status patch are not atomic.
	eventually(t, "the failed binding clears the nomination", func() bool {
		got := getPod(t, client, "nominated")
		c := scheduledCondition(got)
		return got.Status.NominatedNodeName == "" && c != nil && c.Reason == v1.PodReasonSchedulerError
	})
	eventually(t, "the pod is bound once its backoff is over", func() bool {
		clock.Step(time.Second)
		return getPod(t, client, "nominated").Spec.NodeName == "node"
	})
	if got := getPod(t, client, "nominated").Status.NominatedNodeName; got != "" {
		t.Errorf("the bound pod is nominated to %s again", got)
	}
}

// fitErrorWith is a FitError whose PostFilter plugins left v under key.
func fitErrorWith[T any](key fwk.OutputKey[T], v T) *framework.FitError {
	fe := &framework.FitError{}
	key.Set(&fe.Outputs, v)
	return fe
}
