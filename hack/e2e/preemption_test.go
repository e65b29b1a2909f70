package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPreemptionAgrees builds the same cluster twice, once for each
// scheduler, full of low-priority pods, and asks each to place a
// high-priority pod that fits nowhere: both must nominate the same node
// and evict the same pods. With no kubelet the victims stay Terminating,
// so the pod stays nominated, which is what is compared.
func TestPreemptionAgrees(t *testing.T) {
	type outcome struct {
		nominated string
		victims   []string
		condition string
	}
	results := map[string]outcome{}
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		t.Run(scheduler, func(t *testing.T) {
			ctx := context.Background()
			cp, client := startControlPlaneOpts(t, ctx, false)
			for name, value := range map[string]int32{"low": 10, "mid": 100, "high": 1000} {
				pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
				if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "2", "8Gi", nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			pods := client.CoreV1().Pods(metav1.NamespaceDefault)
			// Running pods, bound by hand: node-0 holds four small low
			// pods, node-1 two large low ones, node-2 a mid pod and two
			// low ones.
			running := []struct {
				name, node, cpu, class string
			}{
				{"a0", "node-0", "500m", "low"}, {"a1", "node-0", "500m", "low"}, {"a2", "node-0", "500m", "low"}, {"a3", "node-0", "500m", "low"},
				{"b0", "node-1", "1", "low"}, {"b1", "node-1", "1", "low"},
				{"c0", "node-2", "1", "mid"}, {"c1", "node-2", "500m", "low"}, {"c2", "node-2", "500m", "low"},
			}
			for _, r := range running {
				p := pod(r.name, "none", r.cpu, "256Mi")
				p.Spec.NodeName = r.node
				p.Spec.PriorityClassName = r.class
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(10 * time.Millisecond) // distinct start order
			}
			if scheduler == v1.DefaultSchedulerName {
				if err := cp.StartScheduler(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false")
			}
			preemptor := pod("preemptor", scheduler, "1500m", "256Mi")
			preemptor.Spec.PriorityClassName = "high"
			if _, err := pods.Create(ctx, preemptor, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			read := func() (outcome, error) {
				p, err := pods.Get(ctx, "preemptor", metav1.GetOptions{})
				if err != nil {
					return outcome{}, err
				}
				list, err := pods.List(ctx, metav1.ListOptions{})
				if err != nil {
					return outcome{}, err
				}
				o := outcome{nominated: p.Status.NominatedNodeName}
				for _, q := range list.Items {
					if q.DeletionTimestamp == nil {
						continue
					}
					o.victims = append(o.victims, q.Name)
					for _, c := range q.Status.Conditions {
						if c.Type == v1.DisruptionTarget {
							o.condition = string(c.Status) + " " + c.Reason
						}
					}
				}
				slices.Sort(o.victims)
				return o, nil
			}
			eventually(t, time.Minute, "the preemptor is nominated and its victims evicted", func() (bool, error) {
				o, err := read()
				return o.nominated != "" && len(o.victims) > 0, err
			})
			// Let any further eviction land before reading the outcome.
			time.Sleep(2 * time.Second)
			got, err := read()
			if err != nil {
				t.Fatal(err)
			}
			results[scheduler] = got
			t.Logf("%s nominates %s, evicting %s (%s)", scheduler, got.nominated, strings.Join(got.victims, ", "), got.condition)
		})
	}
	a, b := results[v1.DefaultSchedulerName], results[kubeschedName]
	if a.nominated != b.nominated || !slices.Equal(a.victims, b.victims) || a.condition != b.condition {
		t.Errorf("preemption differs:\n kube-scheduler: %+v\n kubesched:      %+v", a, b)
	}
}
