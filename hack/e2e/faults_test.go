package e2e

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// TestControllerBindingRefusedWithConflict makes the API server refuse
// the controller's binding with 409 Conflict: a proxy holds the
// controller's binding of a pod (which the controller has assumed on the
// node it chose), the test binds the pod through its own client, and the
// proxy then forwards the controller's binding. It does so in each order
// a real race can take:
//
//   - seen first, to the other node, and seen first, to the node the
//     controller chose: the proxy forwards once the controller's informer
//     has delivered the other binding (the test then creates a pod bound
//     to a node, and waits for /debug/cache to list it: the informer
//     delivers the pods' changes in order). The cache has then replaced
//     the assumed pod with the bound one when the refusal comes, and the
//     controller must neither forget that pod nor schedule it again:
//     exactly one binding of it reaches the API server.
//   - refused first: the proxy pauses the controller's watches of pods
//     before the test binds, so the refusal comes while the controller
//     still sees the pod pending; it forgets the assumed pod and queues
//     it again, until the watch, resumed, says it is bound. Every binding
//     of it the controller sends is refused.
//
// Each time the controller reports the refusal with a FailedScheduling
// Event carrying the API server's message, as kube-scheduler does, and
// records no Scheduled event for the pod. Then pods that exactly fill the
// room left all bind, one more is reported unschedulable, and the
// controller's queue holds nothing else: a cache that lost a contested
// pod would overcommit a node, one that counted it twice would leave a
// pod pending, and a contested pod left in the queue would be counted.
func TestControllerBindingRefusedWithConflict(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	for i := range 2 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "3", "8Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	proxy := startAPIProxy(t, cp)
	ctrl := startControllerAs(t, proxy.Kubeconfig, "-scheduler-name", kubeschedName, "-leader-elect=false", "-enable-debug-endpoints")
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	boundByTest := map[string]bool{}

	for _, tc := range []struct {
		name                string
		seenFirst, sameNode bool
	}{
		{name: "contested-seen-first", seenFirst: true},
		{name: "contested-seen-first-same-node", seenFirst: true, sameNode: true},
		{name: "contested-refused-first"},
	} {
		held := proxy.holdBinding(tc.name)
		if _, err := pods.Create(ctx, pod(tc.name, kubeschedName, "1", "1Gi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		chosen := held.wait(t, time.Minute)
		target := otherNode(chosen)
		if tc.sameNode {
			target = chosen
		}
		if !tc.seenFirst {
			proxy.pausePodWatches()
		}
		bindTo(t, ctx, pods, tc.name, target)
		boundByTest[tc.name] = true
		if tc.seenFirst {
			marker := "caught-up-" + tc.name
			p := pod(marker, "another-scheduler", "0", "0")
			p.Spec.NodeName = "node-0"
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			boundByTest[marker] = true
			waitCachedOn(t, ctrl, marker, "node-0")
		}
		if code := held.forward(t); code != http.StatusConflict {
			t.Fatalf("%s: the controller's binding to %s answered %d, want 409 Conflict", tc.name, chosen, code)
		}
		note := waitEvent(t, ctx, client, tc.name, "FailedScheduling")
		if want := fmt.Sprintf("pod %s is already assigned to node %q", tc.name, target); !strings.Contains(note, want) ||
			!strings.Contains(note, `running Bind plugin "DefaultBinder"`) {
			t.Errorf("%s: FailedScheduling says %q, want the DefaultBinder's refusal, %q", tc.name, note, want)
		}
		if !tc.seenFirst {
			proxy.resumePodWatches()
		}
		waitCachedOn(t, ctrl, tc.name, target)
		t.Logf("%s: the controller chose %s, the test bound it to %s; the controller's binding was refused: %s", tc.name, chosen, target, note)
	}

	// 3 of the 6 cores are taken: 6 pods of 500m fill the rest.
	for i := range 6 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("fill-%d", i), kubeschedName, "500m", "256Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, time.Minute, "the 6 pods that fill the nodes are bound", func() (bool, error) {
		return countBound(ctx, pods, kubeschedName) == 9, nil
	})
	createUnschedulable(t, ctx, pods, "one-too-many", kubeschedName, "500m")
	checkNotOvercommitted(t, ctx, client)
	checkBoundOnce(t, ctx, client, proxy, boundByTest)
	checkCacheMatches(t, ctx, client, ctrl)
	// Whatever the order, no binding of a contested pod was accepted, and
	// when the informer came first the controller never tried again.
	for name := range boundByTest {
		if !strings.HasPrefix(name, "contested-") {
			continue
		}
		got := proxy.bindingsOf(name)
		for _, b := range got {
			if b.code != http.StatusConflict {
				t.Errorf("%s: a binding to %s answered %d, want 409 Conflict", name, b.node, b.code)
			}
		}
		if strings.HasPrefix(name, "contested-seen-first") && len(got) != 1 {
			t.Errorf("%s: the controller tried to bind it %d times, want once: it was bound when the refusal came", name, len(got))
		}
		t.Logf("%s: %d binding(s) by the controller, all refused", name, len(got))
	}
	checkPending(t, ctrl, 1)
}

// TestControllerNodeDeletedBeforeBinding deletes the node a pod is
// assumed on while the proxy holds the controller's binding, waits until
// the controller's cache has dropped the node, then forwards the binding.
//
// kube-scheduler does not look again at the node before binding, and the
// API server accepts a binding to any node name, so the binding succeeds
// and the pod is bound to a node that no longer exists. Pods on missing
// nodes are kube-controller-manager's PodGC's to delete (after 40
// seconds), not the scheduler's. What the scheduler owes is its cache:
// like kube-scheduler's, the controller's keeps the pod while the node is
// gone, places nothing there meanwhile, and counts the pod again when a
// node of that name registers (as a kubelet does when its Node object was
// deleted under it). So the test recreates the node: a pod that waited
// for room is then bound there, into the room the orphan and a pod
// another scheduler had bound there before left, and one more is
// reported unschedulable. A cache that lost either pod would overcommit
// the node.
func TestControllerNodeDeletedBeforeBinding(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	nodes := client.CoreV1().Nodes()
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	// Each node runs a pod of 1 cpu of its 3 that another scheduler
	// placed: the cache must keep bound pods of a deleted node too.
	boundByTest := map[string]bool{}
	for i := range 2 {
		name := fmt.Sprintf("node-%d", i)
		if _, err := nodes.Create(ctx, node(name, "3", "8Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		resident := "resident-on-" + name
		if _, err := pods.Create(ctx, pod(resident, "another-scheduler", "1", "1Gi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bindTo(t, ctx, pods, resident, name)
		boundByTest[resident] = true
	}
	proxy := startAPIProxy(t, cp)
	ctrl := startControllerAs(t, proxy.Kubeconfig, "-scheduler-name", kubeschedName, "-leader-elect=false", "-enable-debug-endpoints")

	held := proxy.holdBinding("orphan")
	if _, err := pods.Create(ctx, pod("orphan", kubeschedName, "1", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := held.wait(t, time.Minute)
	other := otherNode(gone)
	if err := nodes.Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the controller's cache drops "+gone+" while orphan is assumed on it", func() (bool, error) {
		cached, err := ctrl.cachedPods()
		_, listed := cached[gone]
		return err == nil && !listed, nil
	})
	if code := held.forward(t); code != http.StatusCreated {
		t.Fatalf("the binding of orphan to the deleted %s answered %d, want 201 Created", gone, code)
	}
	if note, want := waitEvent(t, ctx, client, "orphan", "Scheduled"), "Successfully assigned default/orphan to "+gone; note != want {
		t.Errorf("orphan's Scheduled event says %q, want %q", note, want)
	}
	if p, err := pods.Get(ctx, "orphan", metav1.GetOptions{}); err != nil || p.Spec.NodeName != gone {
		t.Fatalf("orphan: %v, bound to %q; want it bound to the deleted %s", err, p.Spec.NodeName, gone)
	}

	// While it is gone, nothing goes there: two pods fill the other node
	// and a third waits.
	for i := range 2 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("meanwhile-%d", i), kubeschedName, "1", "1Gi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, time.Minute, "both pods created meanwhile are bound to "+other, func() (bool, error) {
		for i := range 2 {
			p, err := pods.Get(ctx, fmt.Sprintf("meanwhile-%d", i), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName != "" && p.Spec.NodeName != other {
				return false, fmt.Errorf("%s was bound to %s", p.Name, p.Spec.NodeName)
			}
			if p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if msg := createUnschedulable(t, ctx, pods, "waits", kubeschedName, "1"); !strings.HasPrefix(msg, "0/1 nodes are available: 1 Insufficient cpu.") {
		t.Errorf("waits is unschedulable with %q, want 0/1 nodes: the deleted node is no candidate", msg)
	}

	// The node comes back under its name: its pods count there at once.
	if _, err := nodes.Create(ctx, node(gone, "3", "8Gi", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCachedOn(t, ctrl, "orphan", gone)
	waitCachedOn(t, ctrl, "resident-on-"+gone, gone)
	eventually(t, time.Minute, "waits is bound to "+gone, func() (bool, error) {
		p, err := pods.Get(ctx, "waits", metav1.GetOptions{})
		if err != nil || p.Spec.NodeName == "" {
			return false, err
		}
		if p.Spec.NodeName != gone {
			return false, fmt.Errorf("waits was bound to %s, which has no room", p.Spec.NodeName)
		}
		return true, nil
	})
	createUnschedulable(t, ctx, pods, "one-too-many", kubeschedName, "1")
	checkNotOvercommitted(t, ctx, client)
	checkBoundOnce(t, ctx, client, proxy, boundByTest)
	checkCacheMatches(t, ctx, client, ctrl)
	checkPending(t, ctrl, 1)
}

// TestControllerSurvivesRestarts kills kube-apiserver, then etcd, each
// for a few seconds (3s, then the time it takes to start), under two
// controllers that run with leader election, each with its own Lease,
// scheduler name and nodes:
//
//   - steady has a renew deadline (30s; 45s Lease, 2s retry) that
//     outlasts the outages. It keeps leading through both: the same
//     process holds its Lease, never taken again (same holder, acquire
//     time and transitions), it logged leading once, and it renews the
//     Lease once the component is back. While the API server is down its
//     renewals are refused, which its log shows; while etcd is down they
//     wait, and it logs nothing.
//   - quick has a 2s renew deadline (3s Lease, 250ms retry), shorter than
//     either outage. Like kube-scheduler, it gives up leading when it
//     cannot renew in time and exits: status 1, its log saying it failed
//     to renew and lost the Lease. Started again, as its Deployment would
//     be, it takes its Lease back.
//
// The controller's default durations (15s, 10s, 2s) would keep the Lease
// through the outages measured here, about 6s and 4s on a 2-core
// machine, but with too little room on a loaded one.
//
// After each outage the pods created since are bound, no node is
// overcommitted, and both controllers' caches equal the API server's
// bound pods. The pods fill the nodes exactly, one more for each
// scheduler is reported unschedulable at the end, and each bound pod has
// one Scheduled event: a cache that lost or doubled a pod across the
// relist would overcommit a node or leave a pod pending.
func TestControllerSurvivesRestarts(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	for i := range 3 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "2", "8Gi", map[string]string{"pool": "steady"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node("node-quick", "2", "8Gi", map[string]string{"pool": "quick"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const quickName = "kubesched-quick"
	pool := map[string]string{kubeschedName: "steady", quickName: "quick"}
	// steady's renew deadline outlasts the outages (about 6s for the API
	// server, 4s for etcd, on a 2-core machine) with room to spare on a
	// loaded one.
	const steadyDeadline = 30 * time.Second
	steady := startController(t, cp, "-scheduler-name", kubeschedName, "-enable-debug-endpoints",
		"-leader-elect-lease-duration", "45s", "-leader-elect-renew-deadline", steadyDeadline.String(), "-leader-elect-retry-period", "2s")
	quickArgs := []string{"-scheduler-name", quickName, "-leader-elect-resource-name", quickName,
		"-leader-elect-lease-duration", "3s", "-leader-elect-renew-deadline", "2s", "-leader-elect-retry-period", "250ms",
		"-enable-debug-endpoints"}
	quick := startController(t, cp, quickArgs...)
	lease := waitLeaseHeld(t, ctx, client, kubeschedName, "")
	quickHolder := *waitLeaseHeld(t, ctx, client, quickName, "").Spec.HolderIdentity

	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	created := map[string]int{}
	create := func(name, scheduler string) {
		t.Helper()
		p := pod(name, scheduler, "200m", "256Mi")
		p.Spec.NodeSelector = map[string]string{"pool": pool[scheduler]}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPods := func(scheduler string, n int) {
		t.Helper()
		for range n {
			create(fmt.Sprintf("%s-%d", scheduler, created[scheduler]), scheduler)
			created[scheduler]++
		}
	}
	settle := func(what string) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() (bool, error) {
			return countBound(ctx, pods, kubeschedName) == created[kubeschedName] &&
				countBound(ctx, pods, quickName) == created[quickName], nil
		})
		checkNotOvercommitted(t, ctx, client)
		checkCacheMatches(t, ctx, client, steady)
		checkCacheMatches(t, ctx, client, quick)
	}
	createPods(kubeschedName, 10)
	createPods(quickName, 4)
	settle("the first pods are bound")

	for _, component := range []string{"kube-apiserver", "etcd"} {
		failures := strings.Count(steady.output(), "Error retrieving lease lock")
		if err := cp.Kill(component); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		time.Sleep(3 * time.Second) // longer than quick's renew deadline
		var err error
		if component == "etcd" {
			err = cp.StartEtcd(ctx)
		} else {
			err = cp.StartAPIServer(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		outage := back.Sub(killed)
		t.Logf("%s was down for %v", component, outage.Round(100*time.Millisecond))
		if outage > steadyDeadline-5*time.Second {
			t.Fatalf("%s was down for %v, too close to steady's renew deadline, %v, for the test to say what steady should do", component, outage, steadyDeadline)
		}

		// steady renews the Lease it held, never having let it go.
		eventually(t, 30*time.Second, "steady renews its Lease after "+component+" is back", func() (bool, error) {
			l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, kubeschedName, metav1.GetOptions{})
			if err != nil {
				return false, nil // the API server may still be catching up with etcd
			}
			return l.Spec.RenewTime != nil && l.Spec.RenewTime.After(back), nil
		})
		l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, kubeschedName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := leaseTerm(l), leaseTerm(lease); got != want {
			t.Errorf("after %s's restart steady's Lease is %s, want %s: it was taken again", component, got, want)
		}
		select {
		case <-steady.exited:
			t.Fatalf("steady exited during %s's outage: %v", component, steady.err)
		default:
		}
		if n := strings.Count(steady.output(), "msg=leading"); n != 1 {
			t.Errorf("steady started leading %d times, want once", n)
		}
		// Without the API server its renewals are refused, which it logs;
		// without etcd they wait for it, silently.
		if n := strings.Count(steady.output(), "Error retrieving lease lock") - failures; component == "kube-apiserver" && n == 0 {
			t.Errorf("steady's log shows no failed renewal while %s was down", component)
		} else {
			t.Logf("steady logged %d failed renewals of its Lease while %s was down, and kept it", n, component)
		}

		// quick gave its Lease up and exited; its restart takes it back.
		select {
		case <-quick.exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("quick still runs after %s was down longer than its renew deadline", component)
		}
		if code := quick.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(quick.output(), `"Failed to renew lease" lock="kube-system/kubesched-quick"`) ||
			!strings.Contains(quick.output(), "controller: lost the leader election Lease") {
			t.Fatalf("quick exited with status %d (%v); want 1, having lost its Lease; its log:\n%s", code, quick.err, quick.output())
		}
		quick = startController(t, cp, quickArgs...)
		quickHolder = *waitLeaseHeld(t, ctx, client, quickName, quickHolder).Spec.HolderIdentity

		createPods(kubeschedName, 10)
		createPods(quickName, 3)
		settle("the pods created after " + component + " came back are bound")
	}
	// The nodes are full: one more of each fits nowhere.
	for _, scheduler := range []string{kubeschedName, quickName} {
		create("one-too-many-"+scheduler, scheduler)
		waitUnschedulable(t, ctx, pods, "one-too-many-"+scheduler)
	}
	checkNotOvercommitted(t, ctx, client)
	checkCacheMatches(t, ctx, client, steady)
	checkCacheMatches(t, ctx, client, quick)
	checkScheduledOnce(t, ctx, client, nil)
}

// TestControllerUnderChurn deletes and binds pods under the controller
// while it schedules, and deletes a node with its pods and creates it
// again, at moments the test does not choose: which of the controller's
// paths each change meets (queued, assumed, being bound) is left to
// timing and not checked here. The tests above cause those faults at a
// chosen point. This one asserts only the end: every pod left is bound,
// a last batch that fills the room left all binds, one more is reported
// unschedulable, and the controller's cache equals the API server's
// bound pods.
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
			if err := pods.Delete(ctx, name, now); err != nil {
				t.Fatal(err)
			}
			deleted[name] = true
		case 3:
			// Bound by the test too; one of the two bindings is refused.
			b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault}, Target: v1.ObjectReference{Kind: "Node", Name: "node-0"}}
			if err := pods.Bind(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsConflict(err) {
				t.Fatal(err)
			}
		}
		if i == 24 {
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
	createUnschedulable(t, ctx, pods, "one-too-many", kubeschedName, "250m")
	checkCacheMatches(t, ctx, client, ctrl)
}

// otherNode is the other of node-0 and node-1.
func otherNode(name string) string {
	if name == "node-0" {
		return "node-1"
	}
	return "node-0"
}

// bindTo binds pod name to node, as another scheduler would.
func bindTo(t *testing.T, ctx context.Context, pods typedcorev1.PodInterface, name, node string) {
	t.Helper()
	b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault}, Target: v1.ObjectReference{Kind: "Node", Name: node}}
	if err := pods.Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding %s to %s: %v", name, node, err)
	}
}

// waitCachedOn waits until the controller's cache holds pod on node.
func waitCachedOn(t *testing.T, ctrl *controllerProcess, pod, node string) {
	t.Helper()
	eventually(t, 30*time.Second, "the controller's cache holds "+pod+" on "+node, func() (bool, error) {
		cached, err := ctrl.cachedPods()
		return err == nil && slices.Contains(cached[node], metav1.NamespaceDefault+"/"+pod), nil
	})
}

// waitEvent waits for the Event of reason about pod in the default
// namespace, and returns its note.
func waitEvent(t *testing.T, ctx context.Context, client kubernetes.Interface, pod, reason string) string {
	t.Helper()
	var note string
	eventually(t, 30*time.Second, "a "+reason+" event about "+pod, func() (bool, error) {
		list, err := client.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == reason && e.Regarding.Name == pod {
				note = e.Note
				return true, nil
			}
		}
		return false, nil
	})
	return note
}

// createUnschedulable creates a pod of scheduler asking for cpu, waits
// until it is reported unschedulable, and returns the message.
func createUnschedulable(t *testing.T, ctx context.Context, pods typedcorev1.PodInterface, name, scheduler, cpu string) string {
	t.Helper()
	if _, err := pods.Create(ctx, pod(name, scheduler, cpu, "256Mi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitUnschedulable(t, ctx, pods, name)
}

// waitUnschedulable waits until pod name is reported unschedulable, and
// returns the message; it fails t if the pod is bound.
func waitUnschedulable(t *testing.T, ctx context.Context, pods typedcorev1.PodInterface, name string) string {
	t.Helper()
	var msg string
	eventually(t, time.Minute, name+" is reported unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("%s, which fits nowhere, was bound to %s", name, p.Spec.NodeName)
		}
		c := scheduledCondition(p)
		if c == nil || c.Status != v1.ConditionFalse || c.Reason != v1.PodReasonUnschedulable {
			return false, nil
		}
		msg = c.Message
		return true, nil
	})
	return msg
}

// checkBoundOnce fails t unless every pod in the default namespace is
// either bound by exactly one binding, or reported unschedulable and
// bound by nobody. A binding is one the proxy forwarded and the API
// server accepted, with one Scheduled event, or one the test made
// itself (the pods in boundByTest), with none.
func checkBoundOnce(t *testing.T, ctx context.Context, client kubernetes.Interface, proxy *apiProxy, boundByTest map[string]bool) {
	t.Helper()
	list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{} // Scheduled events by pod
	for _, p := range list.Items {
		accepted := 0
		for _, b := range proxy.bindingsOf(p.Name) {
			if b.code == http.StatusCreated {
				accepted++
				if b.node != p.Spec.NodeName {
					t.Errorf("%s: the binding to %s was accepted, but the pod is on %q", p.Name, b.node, p.Spec.NodeName)
				}
			}
		}
		if boundByTest[p.Name] {
			accepted++
		}
		c := scheduledCondition(&p)
		switch {
		case p.Spec.NodeName == "" && (c == nil || c.Reason != v1.PodReasonUnschedulable):
			t.Errorf("%s is neither bound nor reported unschedulable", p.Name)
		case p.Spec.NodeName == "" && accepted > 0:
			t.Errorf("%s is unbound after %d accepted bindings", p.Name, accepted)
		case p.Spec.NodeName != "" && accepted != 1:
			t.Errorf("%s is bound after %d accepted bindings, want 1", p.Name, accepted)
		}
		if p.Spec.NodeName != "" && !boundByTest[p.Name] {
			want[p.Name] = 1
		}
	}
	checkScheduledOnce(t, ctx, client, want)
}

// checkScheduledOnce waits until the Scheduled events in the default
// namespace are want (occurrences by pod), or, with want nil, one for
// each bound pod; it fails t at once if some pod has more than one.
func checkScheduledOnce(t *testing.T, ctx context.Context, client kubernetes.Interface, want map[string]int) {
	t.Helper()
	if want == nil {
		list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = map[string]int{}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				want[p.Name] = 1
			}
		}
	}
	var seen map[string]int
	eventually(t, 30*time.Second, fmt.Sprintf("one Scheduled event for each of %d pods", len(want)), func() (bool, error) {
		list, err := client.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen = map[string]int{}
		for _, e := range list.Items {
			if e.Reason != "Scheduled" {
				continue
			}
			n := 1
			if e.Series != nil {
				n = int(e.Series.Count) // a series counts every occurrence
			}
			seen[e.Regarding.Name] += n
		}
		for name, n := range seen {
			if n > 1 {
				return false, fmt.Errorf("pod %s has %d Scheduled events", name, n)
			}
		}
		return reflect.DeepEqual(seen, want), nil
	})
}

// checkPending waits until the controller's queue holds nothing but
// unschedulable pods, exactly n of them, as its /metrics tells: no pod is
// left waiting for a retry.
func checkPending(t *testing.T, ctrl *controllerProcess, unschedulable int) {
	t.Helper()
	want := map[string]float64{"active": 0, "backoff": 0, "unschedulable": float64(unschedulable)}
	var got map[string]float64
	eventually(t, 30*time.Second, fmt.Sprintf("the controller's queue holds %d unschedulable pods and nothing else", unschedulable), func() (bool, error) {
		text, err := ctrl.get("/metrics")
		if err != nil {
			return false, err
		}
		got = map[string]float64{}
		for q := range want {
			if got[q], err = metric(text, "kubesched_pending_pods", map[string]string{"queue": q}); err != nil {
				return false, err
			}
		}
		return reflect.DeepEqual(got, want), nil
	})
}

// leaseTerm describes who holds l since when, and how many times it
// changed hands: what stays the same while its holder keeps it.
func leaseTerm(l *coordinationv1.Lease) string {
	var holder string
	var transitions int32
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions
	}
	return fmt.Sprintf("held by %q since %v after %d transitions", holder, l.Spec.AcquireTime, transitions)
}

// waitLeaseHeld waits until the Lease kube-system/name is held by
// another identity than not, and returns it.
func waitLeaseHeld(t *testing.T, ctx context.Context, client kubernetes.Interface, name, not string) *coordinationv1.Lease {
	t.Helper()
	var lease *coordinationv1.Lease
	eventually(t, time.Minute, "the Lease "+name+" is held", func() (bool, error) {
		l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		lease = l
		h := l.Spec.HolderIdentity
		return h != nil && *h != "" && *h != not, nil
	})
	return lease
}

// kill kills the controller with SIGKILL, as a crash would, and waits
// for it to exit.
func (c *controllerProcess) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.exited
}

// checkCacheMatches waits until the controller's cache, as /debug/cache
// serves it, holds exactly the pods the API server has bound, node by
// node.
func checkCacheMatches(t *testing.T, ctx context.Context, client kubernetes.Interface, ctrl *controllerProcess) {
	t.Helper()
	var cached, bound map[string][]string
	matched := false
	defer func() {
		if !matched {
			t.Logf("the controller's cache: %v\nthe API server's bound pods: %v", cached, bound)
		}
	}()
	eventually(t, 30*time.Second, "the controller's cache equals the API server's bound pods", func() (bool, error) {
		var err error
		if cached, err = ctrl.cachedPods(); err != nil {
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
	matched = true
	t.Logf("the cache of the controller at %s holds %d nodes' pods as the API server has them", ctrl.health, len(cached))
}
