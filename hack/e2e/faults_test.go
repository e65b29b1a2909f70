package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestControllerSurvivesRestarts restarts the API server, then etcd,
// under a running controller: after each, its watches come back, and the
// pods created since are bound, none twice and no node overcommitted.
// The pods fill the nodes exactly, so a cache that lost or doubled a pod
// across the relist would leave one pending or overcommit a node.
func TestControllerSurvivesRestarts(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	for i := range 3 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "2", "8Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Without leader election: a leader that cannot renew its Lease while
	// the API server is down stops, as kube-scheduler does, which is the
	// replicas test's business.
	ctrl := startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false", "-enable-debug-endpoints")
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	created := 0
	createPods := func(n int) {
		t.Helper()
		for range n {
			err := retry(30*time.Second, func() error {
				_, err := pods.Create(ctx, pod(fmt.Sprintf("pod-%d", created), kubeschedName, "200m", "256Mi"), metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					return nil // an earlier try went through
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			created++
		}
	}
	waitBound := func(what string) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() (bool, error) {
			return countBound(ctx, pods, kubeschedName) == created, nil
		})
	}
	createPods(10)
	waitBound("the first 10 pods are bound")

	for _, component := range []string{"kube-apiserver", "etcd"} {
		if err := cp.Kill(component); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the controller's watches fail meanwhile
		var err error
		if component == "etcd" {
			err = cp.StartEtcd(ctx)
		} else {
			err = cp.StartAPIServer(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		createPods(10)
		waitBound("the 10 pods created after " + component + " came back are bound")
	}
	checkNotOvercommitted(t, ctx, client)
	checkCacheMatches(t, ctx, client, ctrl)
}

// retry calls f until it succeeds or timeout passes, for requests made
// while a component comes back.
func retry(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestControllerUnderChurn binds, deletes and moves things under the
// controller while it schedules: pods deleted right after they are
// created (some while assumed or being bound), pods the test binds itself
// before the controller can (whose bindings the controller then sees
// refused with a conflict), and a node deleted and created again. Once it
// settles, every pod left is bound exactly once, and a last batch that
// fills what room is left fits exactly: the cache agrees with the API
// server.
func TestControllerUnderChurn(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	nodes := client.CoreV1().Nodes()
	for i := range 4 {
		if _, err := nodes.Create(ctx, node(fmt.Sprintf("node-%d", i), "4", "16Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctrl := startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false", "-enable-debug-endpoints")
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	// Without a kubelet to confirm it, a bound pod's graceful deletion
	// never ends: delete at once, as a kubelet would have.
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}
	deleted := map[string]bool{}
	for i := range 48 {
		name := fmt.Sprintf("churn-%d", i)
		if _, err := pods.Create(ctx, pod(name, kubeschedName, "250m", "256Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		switch i % 6 {
		case 1:
			// Deleted at once: perhaps queued, assumed or being bound.
			if err := pods.Delete(ctx, name, now); err != nil {
				t.Fatal(err)
			}
			deleted[name] = true
		case 3:
			// Bound by someone else first; the controller's own binding,
			// if it gets that far, is refused.
			b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault}, Target: v1.ObjectReference{Kind: "Node", Name: "node-0"}}
			if err := pods.Bind(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsConflict(err) {
				t.Fatal(err)
			}
		}
		if i == 24 {
			// A node goes away with whatever was bound to it, and comes
			// back empty under the same name.
			gone, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-3"})
			if err != nil {
				t.Fatal(err)
			}
			if err := nodes.Delete(ctx, "node-3", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, p := range gone.Items {
				if err := pods.Delete(ctx, p.Name, now); err != nil && !apierrors.IsNotFound(err) {
					t.Fatal(err)
				}
				deleted[p.Name] = true
			}
			if _, err := nodes.Create(ctx, node("node-3", "4", "16Gi", nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, 2*time.Minute, "every pod left is bound", func() (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range list.Items {
			if p.Spec.NodeName == "" || deleted[p.Name] {
				return false, nil
			}
		}
		return true, nil
	})
	checkNotOvercommitted(t, ctx, client)

	// Fill the rest: exactly as many 250m pods as there is room for.
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	free := 4*4000 - 250*len(list.Items)
	for i := range free / 250 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("fill-%d", i), kubeschedName, "250m", "256Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := len(list.Items) + free/250
	eventually(t, 2*time.Minute, fmt.Sprintf("the %d pods that fill the cluster are bound", free/250), func() (bool, error) {
		return countBound(ctx, pods, kubeschedName) == want, nil
	})
	checkNotOvercommitted(t, ctx, client)
	// One more fits nowhere, and says so.
	if _, err := pods.Create(ctx, pod("one-too-many", kubeschedName, "250m", "256Mi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the pod that does not fit is reported unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, "one-too-many", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := scheduledCondition(p)
		return c != nil && c.Status == v1.ConditionFalse && p.Spec.NodeName == "", nil
	})
	checkCacheMatches(t, ctx, client, ctrl)
}

// checkCacheMatches waits until the controller's cache, as /debug/cache
// serves it, holds exactly the pods the API server has bound, node by
// node.
func checkCacheMatches(t *testing.T, ctx context.Context, client kubernetes.Interface, ctrl *controllerProcess) {
	t.Helper()
	var cached, bound map[string][]string
	eventually(t, 30*time.Second, "the controller's cache equals the API server's bound pods", func() (bool, error) {
		resp, err := http.Get("http://" + ctrl.health + "/debug/cache")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		cached = nil
		if err := json.NewDecoder(resp.Body).Decode(&cached); err != nil {
			return false, err
		}
		list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound = map[string][]string{}
		for _, n := range nodes.Items {
			bound[n.Name] = []string{}
		}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound[p.Spec.NodeName] = append(bound[p.Spec.NodeName], p.Namespace+"/"+p.Name)
			}
		}
		for n := range bound {
			slices.Sort(bound[n])
		}
		return reflect.DeepEqual(cached, bound), nil
	})
	t.Logf("the cache holds %d nodes' pods as the API server has them", len(cached))
}
