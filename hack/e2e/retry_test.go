package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// metric returns the sample of the metric called name whose labels
// include labels, in text (Prometheus' text format), and 0 when there is
// none: a counter a scheduler has not incremented yet.
func metric(text, name string, labels map[string]string) (float64, error) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			return 0, fmt.Errorf("malformed sample %q", line)
		}
		metricName, rest, _ := strings.Cut(series, "{")
		if metricName != name {
			continue
		}
		have := map[string]string{}
		for pair := range strings.SplitSeq(strings.TrimSuffix(rest, "}"), ",") {
			if k, v, ok := strings.Cut(pair, "="); ok {
				have[k] = strings.Trim(v, `"`)
			}
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if match {
			return strconv.ParseFloat(strings.Fields(value)[0], 64)
		}
	}
	return 0, nil
}

// retrySide is one scheduler as TestRetriesAgree watches it.
type retrySide struct {
	// attempts counts the scheduling attempts that ended in result
	// (unschedulable, scheduled), from the scheduler's /metrics.
	attempts func(result string) (float64, error)
	// handled reports whether the scheduler has handled the label
	// change and node-2's addition.
	handled func() (bool, error)
}

// TestRetriesAgree shows end to end that kube-scheduler and kubesched's
// controller retry a pod that fits nowhere when, and only when,
// kube-scheduler v1.37.2's queueing hints say an event may help it. Each
// scheduler, on a fresh control plane, gets a pod asking for 3 cpu on
// two nodes of 2. NodeResourcesFit rejects it, and its hints decide:
//   - a node's labels change: NodeResourcesFit registers no event for
//     that (with queueing hints, GA in v1.36), so the pod is not retried;
//   - a node of 2 cpu is added: its hint skips a new node the pod does
//     not fit, so the pod is not retried;
//   - a node of 4 cpu is added: the pod is retried and bound there.
//
// The attempts are read from each scheduler's /metrics
// (scheduler_schedule_attempts_total, kubesched_schedule_attempts_total).
// Before concluding that the first two changes were not retried, the
// test waits until the scheduler has handled them (kube-scheduler's
// scheduler_event_handling_duration_seconds counts them; the
// controller's /debug/cache lists node-2, which its node informer
// delivers after the label change), then a few seconds more: a pod an
// event moves is retried within milliseconds, as its backoff (1s after
// one attempt) is long over. The whole takes well under the 5 minutes
// after which both flush an unschedulable pod back to be retried anyway.
func TestRetriesAgree(t *testing.T) {
	const settle = 5 * time.Second
	want := "after its creation: 1 unschedulable, 0 scheduled; " +
		"after a label change and a node too small: 1 unschedulable, 0 scheduled; " +
		"after a node with room: 1 unschedulable, 1 scheduled"
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		t.Run(scheduler, func(t *testing.T) {
			ctx := context.Background()
			cp, client := startControlPlaneOpts(t, ctx, false)
			nodes := client.CoreV1().Nodes()
			for i := range 2 {
				if _, err := nodes.Create(ctx, node(fmt.Sprintf("node-%d", i), "2", "8Gi", nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var side retrySide
			if scheduler == v1.DefaultSchedulerName {
				if err := cp.StartScheduler(ctx); err != nil {
					t.Fatal(err)
				}
				read := func(name string, labels map[string]string) (float64, error) {
					text, err := cp.SchedulerMetrics(ctx)
					if err != nil {
						return 0, err
					}
					return metric(text, name, labels)
				}
				side.attempts = func(result string) (float64, error) {
					return read("scheduler_schedule_attempts_total", map[string]string{"profile": scheduler, "result": result})
				}
				side.handled = func() (bool, error) {
					labels, err := read("scheduler_event_handling_duration_seconds_count", map[string]string{"event": "NodeUpdateNodeLabel"})
					if err != nil {
						return false, err
					}
					adds, err := read("scheduler_event_handling_duration_seconds_count", map[string]string{"event": "NodeAdd"})
					return labels >= 1 && adds >= 3, err
				}
			} else {
				ctrl := startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false", "-enable-debug-endpoints")
				get := func(path string) (string, error) {
					resp, err := http.Get("http://" + ctrl.health + path)
					if err != nil {
						return "", err
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					return string(b), err
				}
				side.attempts = func(result string) (float64, error) {
					text, err := get("/metrics")
					if err != nil {
						return 0, err
					}
					return metric(text, "kubesched_schedule_attempts_total", map[string]string{"profile": scheduler, "result": result})
				}
				side.handled = func() (bool, error) {
					text, err := get("/debug/cache")
					if err != nil {
						return false, err
					}
					var cached map[string][]string
					if err := json.Unmarshal([]byte(text), &cached); err != nil {
						return false, err
					}
					_, ok := cached["node-2"]
					return ok, nil
				}
			}
			var seen []string
			record := func(when string) {
				t.Helper()
				counts := make([]float64, 2)
				for i, result := range []string{"unschedulable", "scheduled"} {
					n, err := side.attempts(result)
					if err != nil {
						t.Fatal(err)
					}
					counts[i] = n
				}
				seen = append(seen, fmt.Sprintf("%s: %v unschedulable, %v scheduled", when, counts[0], counts[1]))
			}
			attempted := func(result string, n float64) func() (bool, error) {
				return func() (bool, error) {
					got, err := side.attempts(result)
					return got >= n, err
				}
			}

			pods := client.CoreV1().Pods(metav1.NamespaceDefault)
			if _, err := pods.Create(ctx, pod("big", scheduler, "3", "1Gi"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, time.Minute, "big is reported unschedulable", func() (bool, error) {
				p, err := pods.Get(ctx, "big", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				c := scheduledCondition(p)
				return c != nil && c.Reason == v1.PodReasonUnschedulable, nil
			})
			eventually(t, 30*time.Second, "the attempt is counted", attempted("unschedulable", 1))
			record("after its creation")

			// Two changes that cannot help it.
			patch := []byte(`{"metadata":{"labels":{"team":"blue"}}}`)
			if _, err := nodes.Patch(ctx, "node-0", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := nodes.Create(ctx, node("node-2", "2", "8Gi", nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "the scheduler has handled both", side.handled)
			time.Sleep(settle)
			record("after a label change and a node too small")

			// A node with room.
			if _, err := nodes.Create(ctx, node("node-3", "4", "8Gi", nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "big is bound", func() (bool, error) {
				p, err := pods.Get(ctx, "big", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if p.Spec.NodeName != "" && p.Spec.NodeName != "node-3" {
					return false, fmt.Errorf("big was bound to %s, which has no room for it", p.Spec.NodeName)
				}
				return p.Spec.NodeName == "node-3", nil
			})
			eventually(t, 30*time.Second, "the binding is counted", attempted("scheduled", 1))
			record("after a node with room")

			if got := strings.Join(seen, "; "); got != want {
				t.Errorf("attempts:\n got  %s\n want %s", got, want)
			}
			t.Logf("%s: %s", scheduler, strings.Join(seen, "; "))
		})
	}
}
