package cli

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// Workloads written by hand, and the nodes to place their pods on: two
// general nodes and a tainted GPU node.
const (
	workloadNodes = "testdata/workloads/nodes.yaml"
	deployment    = "testdata/workloads/deployment.yaml"
	daemonSet     = "testdata/workloads/daemonset.yaml"
	statefulSet   = "testdata/workloads/statefulset.yaml"
)

func TestWorkloadsArePlacedAsThePodsTheirControllersWouldCreate(t *testing.T) {
	t.Parallel()
	t.Run("A Deployment's replicas are placed.", func(t *testing.T) {
		t.Parallel()
		code, out, stderr := runCmd(t, "", "place", "-o", "json", "-f", workloadNodes, "-f", deployment)
		got := placed(t, out)
		if code != exitOK || len(got) != 6 {
			t.Fatalf("exit status %d, placements %v; want 6 pods placed", code, got)
		}
		for pod, node := range got {
			if !strings.HasPrefix(pod, "default/web-") || node != "node-a" && node != "node-b" {
				t.Errorf("%s placed on %q", pod, node)
			}
		}
		if want := "kubesched: created 6 pods for 1 workload as their controllers would: Deployment default/web 6\n"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want %q", stderr, want)
		}
	})
	t.Run("A DaemonSet has a pod for each node it tolerates, placed there.", func(t *testing.T) {
		t.Parallel()
		code, out, stderr := runCmd(t, "", "place", "-q", "-o", "json", "-f", workloadNodes, "-f", daemonSet)
		got := placed(t, out)
		nodes := slices.Sorted(maps.Values(got))
		if code != exitOK || len(got) != 2 || !slices.Equal(nodes, []string{"node-a", "node-b"}) {
			t.Errorf("exit status %d, placements %v; want one pod on each general node; stderr %s", code, got, stderr)
		}
	})
	t.Run("A DaemonSet runs a pod on each node whatif adds, as its controller would.", func(t *testing.T) {
		t.Parallel()
		code, out, stderr := runCmd(t, "", "whatif", "-o", "json", "-f", workloadNodes, "-f", daemonSet, "--add-node", "testdata/big-node.yamlx2")
		got := placed(t, out)
		nodes := slices.Sorted(maps.Values(got))
		if code != exitOK || !slices.Equal(nodes, []string{"big-1", "big-2", "node-a", "node-b"}) {
			t.Errorf("exit status %d, placements %v; want one agent on each general node and each added one; stderr %s", code, got, stderr)
		}
		if want := "DaemonSet kube-system/agent 4"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want it to say %q", stderr, want)
		}
	})
	t.Run("A DaemonSet's pod is pinned to its node: it fits no other.", func(t *testing.T) {
		t.Parallel()
		_, out, _ := runCmd(t, "", "place", "-q", "-o", "json", "-f", workloadNodes, "-f", daemonSet)
		var pod string
		for p, node := range placed(t, out) {
			if node == "node-b" {
				pod = p
			}
		}
		code, out, stderr := runCmd(t, "", "explain", "-q", "-o", "json", "-f", workloadNodes, "-f", daemonSet, "--pod", pod)
		if code != exitOK || !strings.Contains(out, `"node": "node-b"`) || !strings.Contains(out, `"feasibleNodes": 1`) {
			t.Errorf("%s: exit status %d; want it to fit node-b alone; stderr %s, stdout:\n%s", pod, code, stderr, out)
		}
	})
	t.Run("Pods claiming devices through a template get claims of their own, as the resource claim controller gives them.", func(t *testing.T) {
		t.Parallel()
		code, out, stderr := runCmd(t, "", "place", "-o", "json", "-f", "testdata/workloads/training.yaml")
		got := placed(t, out)
		onGPU := 0
		for _, node := range got {
			if node == "gpu-a" {
				onGPU++
			}
		}
		if code != exitUnschedulable || onGPU != 2 || !strings.Contains(out, `"pending": 1`) {
			t.Errorf("exit status %d, placements %v; want two trainers on gpu-a and one fitting nowhere; stdout:\n%s", code, got, out)
		}
		if want := "; 3 ResourceClaims from templates, as the resource claim controller would\n"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want %q", stderr, want)
		}
	})
	t.Run("A StatefulSet's pods are placed with volumes provisioned where they go.", func(t *testing.T) {
		t.Parallel()
		code, out, stderr := runCmd(t, "", "place", "-o", "json", "-f", workloadNodes, "-f", statefulSet)
		got := placed(t, out)
		for _, pod := range []string{"default/db-0", "default/db-1", "default/db-2"} {
			if node := got[pod]; node != "node-a" && node != "node-b" {
				t.Errorf("%s placed on %q", pod, node)
			}
		}
		if want := "StatefulSet default/db 3 (3 PVCs)\n"; code != exitOK || !strings.Contains(stderr, want) {
			t.Errorf("exit status %d, stderr %q; want %q", code, stderr, want)
		}
	})
	t.Run("A StatefulSet's claims are read: without their StorageClass, its pods stay pending.", func(t *testing.T) {
		t.Parallel()
		data, err := os.ReadFile(statefulSet)
		if err != nil {
			t.Fatal(err)
		}
		_, withoutClass, _ := strings.Cut(string(data), "\n---\n")
		code, out, _ := runCmd(t, withoutClass, "place", "-q", "-o", "json", "-f", workloadNodes, "-f", "-")
		if got := placed(t, out); code != exitUnschedulable || len(got) != 3 || got["default/db-0"] != "" || !strings.Contains(out, "unbound immediate PersistentVolumeClaims") {
			t.Errorf("exit status %d, placements %v; want 3 pods pending for their claims; stdout:\n%s", code, got, out)
		}
	})
}
