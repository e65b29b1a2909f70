package conformance

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/loader"
	"github.com/kubesched/kubesched/sim"
)

// schedulerPerfTemplates returns the directory of upstream's
// scheduler_perf templates in the module cache: the manifests a capacity
// planner's look like, never defaulted by an API server.
func schedulerPerfTemplates(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("finding k8s.io/kubernetes: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "test", "integration", "scheduler_perf", "templates")
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSchedulerPerfTemplatesLoad reads every template of upstream's
// scheduler_perf as the kubesched command does: each must load, and
// after the API server's defaults every object kept has a name and every
// node allocatable resources.
func TestSchedulerPerfTemplatesLoad(t *testing.T) {
	t.Parallel()
	dir := schedulerPerfTemplates(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) < 20 {
		t.Fatalf("%d templates (%v), want the directory's", len(files), err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "{{") {
			// A Go template scheduler_perf fills in; not YAML yet.
			continue
		}
		c, err := loader.Load(file)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(file), err)
			continue
		}
		c.Default(loader.DefaultOptions{})
		for _, n := range c.Nodes {
			if n.Name == "" || len(n.Status.Allocatable) == 0 {
				t.Errorf("%s: node %q with allocatable %v", filepath.Base(file), n.Name, n.Status.Allocatable)
			}
		}
		for _, p := range c.Pods {
			if p.Name == "" || p.Namespace == "" {
				t.Errorf("%s: pod %q in namespace %q", filepath.Base(file), p.Name, p.Namespace)
			}
		}
	}
}

// TestSchedulerPerfPodsPlaceAsUpstream builds a cluster from upstream's
// node templates and pending pods from its pod templates, three of each,
// in a shuffled order, as a capacity planner's manifests would give
// them, and places them one after another with sim, asking upstream
// about each on the same committed state.
func TestSchedulerPerfPodsPlaceAsUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := schedulerPerfTemplates(t)
	c := &loader.Cluster{Skipped: map[string]int{}}
	read := func(name string, copies int) {
		for range copies {
			part, err := loader.Load(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			c.Merge(part)
		}
	}
	read("node-default.yaml", 8)
	read("node-with-taint.yaml", 2)
	read("node-with-name.yaml", 1)
	pods, err := filepath.Glob(filepath.Join(dir, "*pod*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(37, 1))
	var order []string
	for _, p := range pods {
		// The pods' templates; pvc-once-pod.yaml is a claim, podgroup.yaml
		// a Go template.
		if name := filepath.Base(p); strings.HasPrefix(name, "pod-") || strings.HasSuffix(name, "-pod.yaml") && !strings.HasPrefix(name, "pvc") {
			for range 3 {
				order = append(order, name)
			}
		}
	}
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, name := range order {
		read(name, 1)
	}
	read("namespace-with-labels.yaml", 1)
	c.Default(loader.DefaultOptions{})

	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithRandSource(rand.NewPCG(37, 2)))
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := sim.New(fw, c.Nodes, c.Bound(), c.Objects...)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, pod := range c.Pending() {
		step := &Scenario{Seed: 37, Nodes: c.Nodes, Pods: podsOf(cluster.Nodes()), Pod: pod, Objects: c.Objects}
		want, err := upstream.RunScenario(ctx, step)
		if err != nil {
			t.Fatalf("%s: oracle: %v", pod.Name, err)
		}
		got, err := cluster.Place(ctx, pod)
		if diffs := diffResults(step, want, got, err); len(diffs) > 0 {
			t.Fatalf("%s: %d disagreement(s) with kube-scheduler:\n%s", pod.Name, len(diffs), formatDiffs(diffs, 20))
		}
		var (
			fitErr   *framework.FitError
			notTried *framework.NotTriedError
		)
		switch {
		case err == nil:
			outcomes["placed"]++
		case errors.As(err, &fitErr):
			outcomes["unschedulable"]++
		case errors.As(err, &notTried):
			outcomes["not tried"]++
		default:
			t.Fatalf("%s: %v", pod.Name, err)
		}
	}
	t.Logf("%d pods from %d templates: %v", len(c.Pending()), len(order)/3, outcomes)
	if outcomes["placed"] < len(order)/2 || outcomes["not tried"] == 0 {
		t.Errorf("outcomes %v: want most placed and the gated pods not tried", outcomes)
	}
}
