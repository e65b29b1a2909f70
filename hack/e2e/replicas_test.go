package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestControllerReplicasTakeTurns(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	for i := range 3 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "8", "16Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	election := []string{"-scheduler-name", kubeschedName, "-leader-elect-lease-duration", "3s", "-leader-elect-renew-deadline", "2s", "-leader-elect-retry-period", "250ms"}
	leader := startController(t, cp, election...)
	holder := func() string {
		lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kubesched", metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	first := holder()
	if first == "" {
		t.Fatal("the first replica is ready but holds no Lease")
	}
	startController(t, cp, election...) // a standby
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	createPods := func(prefix string, n int) {
		for i := range n {
			if _, err := pods.Create(ctx, pod(fmt.Sprintf("%s-%d", prefix, i), kubeschedName, "200m", "256Mi"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	createPods("before", 10)
	eventually(t, time.Minute, "the leader binds 10 pods", func() (bool, error) {
		return countBound(ctx, pods, kubeschedName) == 10, nil
	})
	if h := holder(); h != first {
		t.Fatalf("the Lease moved from %s to %s while its holder ran", first, h)
	}

	// The leader dies without giving the Lease up: the standby takes it
	// once it expires, and schedules what comes next.
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	createPods("after", 10)
	eventually(t, time.Minute, "the standby takes over and binds 10 more", func() (bool, error) {
		return countBound(ctx, pods, kubeschedName) == 20, nil
	})
	if h := holder(); h == first || h == "" {
		t.Errorf("the Lease is held by %q after its holder %q died", h, first)
	}
	checkNotOvercommitted(t, ctx, client)
	// Each pod was bound once: one Scheduled event each.
	eventually(t, 30*time.Second, "one Scheduled event per pod", func() (bool, error) {
		list, err := client.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen := map[string]int{}
		for _, e := range list.Items {
			if e.Reason == "Scheduled" {
				seen[e.Regarding.Name]++
			}
		}
		for name, n := range seen {
			if n > 1 {
				return false, fmt.Errorf("pod %s has %d Scheduled events", name, n)
			}
		}
		return len(seen) == 20, nil
	})
}
