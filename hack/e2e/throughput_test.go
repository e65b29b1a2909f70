package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesched/kubesched/hack/e2e/controlplane"
)

// envInt reads a positive integer from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// TestThroughput measures, scheduler_perf style, how fast each scheduler
// binds pods end to end: for each, a fresh control plane gets the nodes
// and the pending pods first, then the scheduler starts, and the rate is
// taken from the first pod bound to the last. Both use the same client
// limits: kube-scheduler's defaults (50 requests per second, bursts of
// 100) unless KUBESCHED_E2E_QPS sets both (bursts twice that). The size is
// KUBESCHED_E2E_NODES nodes (default 500) and KUBESCHED_E2E_PODS pods
// (default 500); the README's numbers come from larger runs.
func TestThroughput(t *testing.T) {
	nodes := envInt(t, "KUBESCHED_E2E_NODES", 500)
	pods := envInt(t, "KUBESCHED_E2E_PODS", 500)
	qps := envInt(t, "KUBESCHED_E2E_QPS", 50)
	rates := map[string]float64{}
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		t.Run(scheduler, func(t *testing.T) {
			rates[scheduler] = measure(t, scheduler, nodes, pods, qps)
		})
	}
	if len(rates) == 2 {
		t.Logf("%d nodes, %d pods, client %d qps: kube-scheduler %.0f pods/s, kubesched %.0f pods/s (%.2fx)",
			nodes, pods, qps, rates[v1.DefaultSchedulerName], rates[kubeschedName], rates[kubeschedName]/rates[v1.DefaultSchedulerName])
	}
}

func measure(t *testing.T, scheduler string, nodes, pods, qps int) float64 {
	ctx := context.Background()
	cp, client := startControlPlaneWithout(t, ctx)
	// Fill the cluster fast, from several goroutines.
	parallel(t, nodes, func(i int) error {
		_, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%05d", i), "32", "128Gi", map[string]string{v1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3)}), metav1.CreateOptions{})
		return err
	})
	parallel(t, pods, func(i int) error {
		p := pod(fmt.Sprintf("pod-%05d", i), scheduler, "100m", "128Mi")
		p.Labels = map[string]string{"app": "load"}
		_, err := client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	burst := 2 * qps
	if scheduler == v1.DefaultSchedulerName {
		cfg := fmt.Sprintf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection: {leaderElect: false}\nclientConnection: {kubeconfig: %q, qps: %d, burst: %d}\n", cp.Kubeconfig, qps, burst)
		if err := cp.StartSchedulerWithConfig(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	} else {
		startController(t, cp, "-scheduler-name", kubeschedName, "-kube-api-qps", strconv.Itoa(qps), "-kube-api-burst", strconv.Itoa(burst))
	}
	var first, last time.Time
	deadline := time.Now().Add(time.Duration(pods/5+120) * time.Second)
	for {
		n := countBound(ctx, client.CoreV1().Pods(metav1.NamespaceDefault), scheduler)
		now := time.Now()
		if n > 0 && first.IsZero() {
			first = now
		}
		if n == pods {
			last = now
			break
		}
		if now.After(deadline) {
			t.Fatalf("%s bound %d of %d pods by the deadline", scheduler, n, pods)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkNotOvercommitted(t, ctx, client)
	rate := float64(pods) / last.Sub(first).Seconds()
	t.Logf("%s: %d pods on %d nodes in %v after the first: %.0f pods/s", scheduler, pods, nodes, last.Sub(first).Round(time.Millisecond), rate)
	return rate
}

// startControlPlaneWithout starts etcd and kube-apiserver only.
func startControlPlaneWithout(t *testing.T, ctx context.Context) (*controlplane.ControlPlane, kubernetes.Interface) {
	return startControlPlaneOpts(t, ctx, false)
}

// parallel runs f(0..n-1) on 16 goroutines, failing t on the first error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}
