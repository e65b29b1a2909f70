package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestControllerReplicasTakeTurns runs two replicas of the controller
// with leader election, through the proxy, and short durations (3s
// Lease, 2s renew deadline, 250ms retry) to keep it quick:
//
//   - The first holds the Lease and binds the pods; the second stands
//     by: its /readyz says so, its log names the leader, and it counts no
//     scheduling attempt and logs no binding.
//   - The proxy holds the leader's binding of a pod, and the leader is
//     killed with SIGKILL: its binding never reaches the API server, and
//     it never gives the Lease up (a watch of the Lease sees it pass from
//     the killed leader straight to the standby, one transition more).
//     The standby takes it once it expires and binds that pod and those
//     created after; its cache equals the API server's bound pods.
//   - The killed replica, started again, stands by as the second did
//     while 10 more pods are created and bound, naming the new leader,
//     and the Lease stays where it is.
//   - The leader is then stopped with SIGTERM: it gives the Lease up (the
//     watch sees the holder "" in between), the rejoined replica takes
//     it, binds the last pods, its cache equals the API server's, and its
//     queue is empty.
//
// Every pod is bound by exactly one accepted binding, with one Scheduled
// event, and no node is overcommitted.
func TestControllerReplicasTakeTurns(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	for i := range 3 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "8", "16Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	proxy := startAPIProxy(t, cp)
	election := []string{"-scheduler-name", kubeschedName, "-enable-debug-endpoints",
		"-leader-elect-lease-duration", "3s", "-leader-elect-renew-deadline", "2s", "-leader-elect-retry-period", "250ms"}
	first := startControllerAs(t, proxy.Kubeconfig, election...)
	lease := waitLeaseHeld(t, ctx, client, kubeschedName, "")
	firstID := *lease.Spec.HolderIdentity
	second := startControllerAs(t, proxy.Kubeconfig, election...)

	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	total := 0
	createPods := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if _, err := pods.Create(ctx, pod(fmt.Sprintf("%s-%d", prefix, i), kubeschedName, "200m", "256Mi"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		total += n
	}
	waitBound := func(what string) {
		t.Helper()
		eventually(t, time.Minute, what, func() (bool, error) {
			return countBound(ctx, pods, kubeschedName) == total, nil
		})
	}
	createPods("before", 10)
	waitBound("the leader binds 10 pods")
	checkStandby(t, second, firstID)
	if l := waitLeaseHeld(t, ctx, client, kubeschedName, ""); leaseTerm(l) != leaseTerm(lease) {
		t.Fatalf("the Lease is %s while its first holder ran, want %s", leaseTerm(l), leaseTerm(lease))
	}

	// The leader dies with a pod assumed and its binding on the way.
	held := proxy.holdBinding("in-flight")
	if _, err := pods.Create(ctx, pod("in-flight", kubeschedName, "200m", "256Mi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	total++
	held.wait(t, time.Minute)
	holders := watchLeaseHolders(t, ctx, client, kubeschedName)
	first.kill(t)
	if code := held.result(t); code != 0 {
		t.Fatalf("the killed leader's binding was forwarded (%d)", code)
	}
	t.Logf("the leader was killed with its binding of in-flight held: %v", first.err)
	createPods("after", 10)
	taken := waitLeaseHeld(t, ctx, client, kubeschedName, firstID)
	secondID := *taken.Spec.HolderIdentity
	waitBound("the standby takes over and binds in-flight and 10 more")
	if got, want := *taken.Spec.LeaseTransitions, *lease.Spec.LeaseTransitions+1; got != want {
		t.Errorf("the Lease changed hands %d times, want %d", got, want)
	}
	// Killed, the leader never gave the Lease up (a holder "" in
	// between): the standby took it once it expired.
	if got, want := holders(), []string{firstID, secondID}; !slices.Equal(got, want) {
		t.Errorf("the Lease's holders after the kill: %q, want %q", got, want)
	}
	if !strings.Contains(second.output(), "msg=leading") {
		t.Errorf("the replica holding the Lease (%s) never logged that it leads", secondID)
	}
	checkCacheMatches(t, ctx, client, second)

	// The killed replica comes back, and stands by.
	rejoined := startControllerAs(t, proxy.Kubeconfig, election...)
	createPods("rejoined", 10)
	waitBound("the leader binds 10 more while the killed replica is back")
	checkStandby(t, rejoined, secondID)
	if l := waitLeaseHeld(t, ctx, client, kubeschedName, ""); leaseTerm(l) != leaseTerm(taken) {
		t.Errorf("the Lease is %s after the killed replica came back, want %s", leaseTerm(l), leaseTerm(taken))
	}
	checkNotOvercommitted(t, ctx, client)
	checkBoundOnce(t, ctx, client, proxy, nil)
	checkCacheMatches(t, ctx, client, second)

	// It is a working standby: when the leader stops, it gives the Lease
	// up (holder ""), and the rejoined replica takes it.
	holders = watchLeaseHolders(t, ctx, client, kubeschedName)
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-second.exited
	thirdID := *waitLeaseHeld(t, ctx, client, kubeschedName, secondID).Spec.HolderIdentity
	if got, want := holders(), []string{secondID, "", thirdID}; !slices.Equal(got, want) {
		t.Errorf("the Lease's holders after the leader was stopped: %q, want %q", got, want)
	}
	createPods("last", 5)
	waitBound("the rejoined replica takes over and binds 5 more")
	if !strings.Contains(rejoined.output(), "identity="+thirdID) {
		t.Errorf("the Lease is held by %s, not by the rejoined replica", thirdID)
	}
	checkNotOvercommitted(t, ctx, client)
	checkBoundOnce(t, ctx, client, proxy, nil)
	checkCacheMatches(t, ctx, client, rejoined)
	checkPending(t, rejoined, 0)
}

// watchLeaseHolders watches the Lease kube-system/name, which must exist,
// from now until the function it returns is called, and that function
// returns the Lease's holders, one for each change of holder, the
// present one first ("" when the Lease was given up).
func watchLeaseHolders(t *testing.T, ctx context.Context, client kubernetes.Interface, name string) func() []string {
	t.Helper()
	leases := client.CoordinationV1().Leases("kube-system")
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	holder := func(l *coordinationv1.Lease) string {
		if l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	holders := []string{holder(l)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range w.ResultChan() {
			if l, ok := e.Object.(*coordinationv1.Lease); ok && holder(l) != holders[len(holders)-1] {
				holders = append(holders, holder(l))
			}
		}
	}()
	return func() []string {
		w.Stop()
		<-done
		return holders
	}
}

// checkStandby fails t unless ctrl is a standby of leader: its /readyz
// says it stands by, its log names leader and says it never led nor
// bound a pod, and its /metrics count no scheduling attempt.
func checkStandby(t *testing.T, ctrl *controllerProcess, leader string) {
	t.Helper()
	if body, err := ctrl.get("/readyz"); err != nil || !strings.Contains(body, "standby") {
		t.Errorf("the standby's /readyz: %q, %v; want it to say it stands by", body, err)
	}
	eventually(t, 30*time.Second, "the standby names the leader "+leader, func() (bool, error) {
		return strings.Contains(ctrl.output(), `msg="standing by" lease=kube-system/kubesched leader=`+leader), nil
	})
	out := ctrl.output()
	if strings.Contains(out, "msg=leading") || strings.Contains(out, "msg=bound") {
		t.Errorf("the standby led or bound a pod; its log:\n%s", out)
	}
	metrics, err := ctrl.get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(metrics, "kubesched_schedule_attempts_total{") {
		t.Errorf("the standby counts scheduling attempts:\n%s", metrics)
	}
}
