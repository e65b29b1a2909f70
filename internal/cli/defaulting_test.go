package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// unserved holds manifests written by hand, which no API server has
// defaulted.
const unserved = "testdata/unserved.yaml"

// explained is what these tests read of explain -o json.
type explained struct {
	Pods []struct {
		Pod     string `json:"pod"`
		Node    string `json:"node"`
		Message string `json:"message"`
	} `json:"pods"`
}

// placed is what these tests read of place -o json: each pod's node,
// "" for none.
func placed(t *testing.T, out string) map[string]string {
	t.Helper()
	var r struct {
		Placements []struct {
			Pod  string `json:"pod"`
			Node string `json:"node"`
		} `json:"placements"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	nodes := map[string]string{}
	for _, p := range r.Placements {
		nodes[p.Pod] = p.Node
	}
	return nodes
}

func TestManifestsAreDecidedOnAsTheAPIServerWouldStoreThem(t *testing.T) {
	t.Parallel()
	t.Run("A pod with only limits, of 8 CPUs, does not fit a node of 2.", func(t *testing.T) {
		t.Parallel()
		code, out, stderr := runCmd(t, "", "explain", "-q", "-o", "json", "-f", unserved, "--pod", "default/big")
		var e explained
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatalf("%v; stderr %s", err, stderr)
		}
		if code != exitUnschedulable || len(e.Pods) != 1 || e.Pods[0].Node != "" || !strings.Contains(e.Pods[0].Message, "Insufficient cpu") {
			t.Errorf("exit status %d, %+v; want Insufficient cpu", code, e.Pods)
		}
	})
	t.Run("A pod without a namespace is in the default namespace, named with it or without.", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"default/web", "web"} {
			code, out, stderr := runCmd(t, "", "explain", "-q", "-o", "json", "-f", unserved, "--pod", name)
			var e explained
			if err := json.Unmarshal([]byte(out), &e); err != nil {
				t.Fatalf("--pod %s: %v; stderr %s", name, err, stderr)
			}
			if code != exitOK || len(e.Pods) != 1 || e.Pods[0].Pod != "default/web" || e.Pods[0].Node != "small" {
				t.Errorf("--pod %s: exit status %d, %+v; want default/web on small", name, code, e.Pods)
			}
		}
	})
	t.Run("--namespace puts objects that name none in another namespace, and names pods there.", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"prod/web", "web"} {
			code, out, stderr := runCmd(t, "", "explain", "-q", "-o", "json", "--namespace", "prod", "-f", unserved, "--pod", name)
			var e explained
			if err := json.Unmarshal([]byte(out), &e); err != nil {
				t.Fatalf("--pod %s: %v; stderr %s", name, err, stderr)
			}
			if code != exitOK || len(e.Pods) != 1 || e.Pods[0].Pod != "prod/web" {
				t.Errorf("--pod %s: exit status %d, %+v; want prod/web", name, code, e.Pods)
			}
		}
	})
	t.Run("A node that reports only its capacity takes pods, and a claim without an allocation mode is allocated.", func(t *testing.T) {
		t.Parallel()
		_, out, _ := runCmd(t, "", "place", "-q", "-o", "json", "-f", unserved)
		got := placed(t, out)
		want := map[string]string{"default/big": "", "default/web": "small", "default/trainer": "small"}
		for pod, node := range want {
			if n, ok := got[pod]; !ok || n != node {
				t.Errorf("%s placed on %q, want %q (placements %v)", pod, n, node, got)
			}
		}
	})
	t.Run("What was defaulted is said on stderr, unless -q.", func(t *testing.T) {
		t.Parallel()
		_, _, stderr := runCmd(t, "", "place", "-f", unserved)
		const want = "kubesched: defaulted 5 objects the API server would have: namespace default (3 pods, 1 ResourceClaim), requests from limits (1 pod), "
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, "allocatable from capacity (1 node), allocationMode ExactCount (1 ResourceClaim), device count 1 (1 ResourceClaim)\n") {
			t.Errorf("stderr %q; want %q and more", stderr, want)
		}
		if _, _, stderr := runCmd(t, "", "place", "-q", "-f", unserved); strings.Contains(stderr, "defaulted") {
			t.Errorf("stderr with -q %q", stderr)
		}
	})
	t.Run("A dump of a live cluster is not defaulted.", func(t *testing.T) {
		t.Parallel()
		if _, _, stderr := runCmd(t, "", "explain", "-f", kubectlYAML); strings.Contains(stderr, "defaulted") || strings.Contains(stderr, "created") {
			t.Errorf("stderr %q", stderr)
		}
	})
}
