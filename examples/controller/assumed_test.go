package main

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// TestControllerForgetsAPodDeletedWhileAssumed deletes a pod while its
// binding is held open, so that the pod is assumed on its node when the
// deletion arrives, every time. As in kube-scheduler the binding then
// fails, and nothing of the pod may be left: no room held on the node,
// no pod back in the queue, no binding.
func TestControllerForgetsAPodDeletedWhileAssumed(t *testing.T) {
	t.Parallel()
	client := newFakeCluster(testNode("only", "1"), testPod("doomed", "600m", "kubesched"))
	binding, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		b, ok := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		if ok && b.Name == "doomed" && held.CompareAndSwap(false, true) {
			close(binding)
			<-release
		}
		return false, nil, nil // on to the binding reactor, which finds no pod
	})
	ctrl, err := New(client, Config{SchedulerName: "kubesched", QueueOptions: fakeClockQueue()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	// Cleanups run last first: the binding is let go before the
	// controller is stopped, which waits for it.
	letGo := closeOnce(t, release)

	select {
	case <-binding:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller never bound the pod")
	}
	// The fake clientset holds its lock while a reactor runs: until the
	// binding is let go, the test reads the informer and writes the
	// tracker, not the clientset.
	doomed, err := ctrl.factory.Core().V1().Pods().Lister().Pods("default").Get("doomed")
	if err != nil {
		t.Fatal(err)
	}
	if assumed, _ := ctrl.cache.IsAssumedPod(doomed); !assumed {
		t.Fatal("the pod is not assumed while its binding is in flight")
	}
	if err := client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), "default", "doomed"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion reaches the controller", func() bool {
		_, err := ctrl.factory.Core().V1().Pods().Lister().Pods("default").Get("doomed")
		return err != nil
	})
	letGo()

	eventually(t, "the cache holds no pod", func() bool { return ctrl.cache.PodCount() == 0 })
	// The room is free: a pod needing it is bound there.
	if _, err := client.CoreV1().Pods("default").Create(ctx, testPod("next", "800m", "kubesched"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "next is bound", func() bool {
		p, err := client.CoreV1().Pods("default").Get(ctx, "next", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "only"
	})
	eventually(t, "the cache has confirmed next alone", func() bool {
		return ctrl.cache.PodCount() == 1 && len(ctrl.cachedPods()["only"]) == 1 && ctrl.cachedPods()["only"][0] == "default/next"
	})
	for sub, n := range ctrl.pending() {
		if n != 0 {
			t.Errorf("%d pods in the %s queue, want none: the deleted pod came back", n, sub)
		}
	}
	if _, err := client.CoreV1().Pods("default").Get(ctx, "doomed", metav1.GetOptions{}); err == nil {
		t.Error("the deleted pod exists again")
	}
}

// TestControllerKeepsAPodBoundByAnotherWhileAssumed binds a pod to
// another node while the controller's own binding of it is held open,
// lets the informer deliver that, then refuses the controller's binding
// with a conflict, as the API server does. The cache keeps the pod where
// the other binding put it, the controller does not schedule it again,
// and, as in kube-scheduler, the refusal moves no waiting pod: nothing
// was freed.
func TestControllerKeepsAPodBoundByAnotherWhileAssumed(t *testing.T) {
	t.Parallel()
	resident := testPod("resident", "500m", "other-scheduler")
	resident.Spec.NodeName = "chosen"
	client := newFakeCluster(testNode("chosen", "1"), testNode("elsewhere", "400m"), resident,
		testPod("waiting", "800m", "kubesched"))
	binding, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		b, ok := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		if !ok || b.Name != "contested" || !held.CompareAndSwap(false, true) {
			return false, nil, nil
		}
		close(binding)
		<-release
		return true, nil, apierrors.NewConflict(v1.Resource("pods/binding"), b.Name,
			fmt.Errorf("pod %s is already assigned to node %q", b.Name, "elsewhere"))
	})
	ctrl, err := New(client, Config{SchedulerName: "kubesched", QueueOptions: fakeClockQueue()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	letGo := closeOnce(t, release)

	eventually(t, "waiting, which fits nowhere, waits", func() bool {
		return ctrl.pending()["unschedulable"] == 1
	})
	if _, err := client.CoreV1().Pods("default").Create(ctx, testPod("contested", "400m", "kubesched"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-binding:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller never bound the pod")
	}
	// Bound by someone else, through the tracker: the fake clientset is
	// locked while the reactor runs.
	pods := v1.SchemeGroupVersion.WithResource("pods")
	obj, err := client.Tracker().Get(pods, "default", "contested")
	if err != nil {
		t.Fatal(err)
	}
	contested := obj.(*v1.Pod).DeepCopy()
	contested.Spec.NodeName = "elsewhere"
	if err := client.Tracker().Update(pods, contested, "default"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache holds contested where the other binding put it", func() bool {
		return slices.Equal(ctrl.cachedPods()["elsewhere"], []string{"default/contested"})
	})
	letGo()

	eventually(t, "the refusal is recorded on the pod", func() bool {
		p, err := client.CoreV1().Pods("default").Get(ctx, "contested", metav1.GetOptions{})
		return err == nil && len(p.Status.Conditions) > 0 && p.Status.Conditions[0].Reason == v1.PodReasonSchedulerError
	})
	if got := ctrl.cachedPods(); !slices.Equal(got["elsewhere"], []string{"default/contested"}) || !slices.Equal(got["chosen"], []string{"default/resident"}) {
		t.Errorf("the cache holds %v, want contested on elsewhere and resident on chosen", got)
	}
	if got, want := ctrl.pending(), map[string]int{"active": 0, "backoff": 0, "unschedulable": 1}; !maps.Equal(got, want) {
		t.Errorf("the queue holds %v, want %v: contested back in it, or waiting moved by the refusal", got, want)
	}
	if n := ctrl.metrics.Attempts("kubesched", "unschedulable"); n != 1 {
		t.Errorf("%d unschedulable attempts, want 1: waiting was tried again", n)
	}
}
