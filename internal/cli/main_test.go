package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/loader"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// runCmd runs the command with args and stdin, returning its exit
// status, stdout and stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Command{Name: "kubesched"}.Run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// golden compares got with testdata/golden/name, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

// The checked-in dumps: one as kubectl get -o yaml writes it (a List
// with managed fields and status), the same as JSON, and the
// quickstart's cluster with its pending pods as plain documents.
const (
	kubectlYAML = "../../loader/testdata/kubectl-get.yaml"
	kubectlJSON = "../../loader/testdata/kubectl-get.json"
	quickstart  = "../../examples/quickstart/cluster.yaml"
	quickPods   = "../../examples/quickstart/pods.yaml"
	// verdicts has one pod of each outcome: placed, preempting, and not
	// tried for scheduling gates, deletion and a missing claim.
	verdicts = "testdata/verdicts.yaml"
)

func TestOutputsMatchTheGoldenFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		golden string
		args   []string
		code   int
	}{
		{"explain-kubectl.txt", []string{"explain", "-q", "-f", kubectlYAML}, 1},
		{"explain-kubectl.json", []string{"explain", "-q", "-o", "json", "-f", kubectlYAML}, 1},
		{"explain-quickstart.txt", []string{"explain", "-q", "-f", quickstart, "-f", quickPods}, 1},
		{"place-quickstart.txt", []string{"place", "-q", "-f", quickstart, "-f", quickPods}, 1},
		{"place-quickstart.json", []string{"place", "-q", "-o", "json", "-f", quickstart, "-f", quickPods}, 1},
		{"whatif-quickstart.txt", []string{"whatif", "-q", "-f", quickstart, "-f", quickPods, "--add-node", "testdata/big-node.yamlx2", "--remove-node", "node-a1"}, 0},
		// A pod placed, one preempting, three kube-scheduler does not try.
		{"explain-verdicts.txt", []string{"explain", "-q", "-f", verdicts}, 1},
		{"explain-verdicts.json", []string{"explain", "-q", "-o", "json", "-f", verdicts}, 1},
		{"place-verdicts.txt", []string{"place", "-q", "-f", verdicts}, 1},
		{"place-verdicts.json", []string{"place", "-q", "-o", "json", "-f", verdicts}, 1},
		{"place-verdicts-firstfit.txt", []string{"place", "-q", "--first-fit", "-f", verdicts}, 1},
		{"place-verdicts-preempt.txt", []string{"place", "-q", "--preempt", "-f", verdicts}, 1},
		{"place-verdicts-preempt.json", []string{"place", "-q", "--preempt", "-o", "json", "-f", verdicts}, 1},
		// Six pods claiming a GPU each, two GPUs per node: the nodes added
		// bring their ResourceSlices.
		{"place-gpus.txt", []string{"place", "-q", "-f", "testdata/gpu-cluster.yaml"}, 1},
		// Workloads become pods, as their controllers would make them.
		{"place-workloads.txt", []string{"place", "-q", "-f", "testdata/workloads/nodes.yaml", "-f", "testdata/workloads/deployment.yaml", "-f", "testdata/workloads/daemonset.yaml"}, 0},
		// A node added from a manifest with only its capacity.
		{"whatif-capacity-node.txt", []string{"whatif", "-q", "-f", verdicts, "--add-node", "testdata/capacity-node.yaml"}, 1},
		{"whatif-gpus.txt", []string{"whatif", "-q", "-f", "testdata/gpu-cluster.yaml", "--add-node", "testdata/gpu-node.yamlx2"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCmd(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			golden(t, tt.golden, out)
		})
	}
}

func TestJSONAndYAMLDumpsGiveTheSameAnswer(t *testing.T) {
	t.Parallel()
	_, fromYAML, _ := runCmd(t, "", "explain", "-q", "-o", "json", "-f", kubectlYAML)
	_, fromJSON, _ := runCmd(t, "", "explain", "-q", "-o", "json", "-f", kubectlJSON)
	if fromYAML != fromJSON {
		t.Error("the JSON dump is explained differently from the YAML one")
	}
	data, err := os.ReadFile(kubectlYAML)
	if err != nil {
		t.Fatal(err)
	}
	_, fromStdin, _ := runCmd(t, string(data), "explain", "-q", "-o", "json", "-f", "-")
	if fromStdin != fromYAML {
		t.Error("the dump read from stdin is explained differently from the file")
	}
}

func TestExplainJSONHasEveryNodeAndVerdict(t *testing.T) {
	t.Parallel()
	_, out, _ := runCmd(t, "", "explain", "-q", "-o", "json", "-f", quickstart, "-f", quickPods, "--pod", "default/analytics")
	var got struct {
		Pods []podReport `json:"pods"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Pods) != 1 {
		t.Fatalf("%d pods, want 1", len(got.Pods))
	}
	r := got.Pods[0]
	if r.Node != "" || !strings.HasPrefix(r.Message, "0/7 nodes are available") || len(r.Nodes) != 7 {
		t.Fatalf("node %q, message %q, %d nodes; want unschedulable on 7 nodes", r.Node, r.Message, len(r.Nodes))
	}
	for _, n := range r.Nodes {
		if n.KubeScheduler == nil || len(n.Filters) != len(r.Filters) {
			t.Errorf("%s: verdict %v, %d filter verdicts of %d", n.Name, n.KubeScheduler, len(n.Filters), len(r.Filters))
		}
	}
	if len(r.Closest) == 0 || r.Closest[0] != "node-b2" {
		t.Errorf("closest %v, want node-b2 first (only its disk label is wrong)", r.Closest)
	}
}

func TestBadInputExitsWithTwoAndSaysWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	truncated := write("truncated.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: \"p\n")
	orphan := write("orphan.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {nodeName: gone, containers: [{name: c, image: i}]}\n")
	noNodes := write("pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: i}]}\n")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no command", nil, "Usage:"},
		{"an unknown command", []string{"schedule"}, `unknown command "schedule"`},
		{"an unknown flag", []string{"explain", "--nodes", "3"}, "flag provided but not defined: -nodes"},
		{"no input", []string{"explain"}, "no cluster state"},
		{"a missing file", []string{"explain", "-f", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{"truncated YAML", []string{"explain", "-f", truncated}, "truncated.yaml: document 2"},
		{"a pod bound to a node the input lacks", []string{"explain", "-f", orphan}, "pod default/p is bound to node gone, which the input does not hold"},
		{"pods without nodes", []string{"explain", "-f", noNodes}, "the input holds no Node"},
		{"a pod the input lacks", []string{"explain", "-f", quickstart, "--pod", "default/ghost"}, "--pod default/ghost: no such pod"},
		{"an unknown output", []string{"explain", "-f", quickstart, "-o", "yaml"}, "-o yaml: want table, json or html"},
		{"whatif without a change", []string{"whatif", "-f", quickstart}, "whatif without --add-node or --remove-node"},
		{"removing a node the cluster lacks", []string{"whatif", "-f", quickstart, "--remove-node", "ghost"}, "--remove-node ghost: no such node"},
		{"adding a node from a file without one", []string{"whatif", "-f", quickstart, "--add-node", noNodes}, "the file holds no Node"},
		{"adding more nodes than kubesched adds", []string{"whatif", "-f", quickstart, "--add-node", "testdata/big-node.yamlx100000000"}, "100000000 copies: kubesched adds at most 100000 nodes"},
		{"adding no copies", []string{"whatif", "-f", quickstart, "--add-node", "testdata/big-node.yamlx0"}, `"0" after the last x is not a count of nodes`},
		{"adding a node the cluster has", []string{"whatif", "-f", quickstart, "--add-node", "testdata/big-node.yaml", "--add-node", "testdata/big-node.yaml"}, `node "big" is already in the cluster`},
		{"a configuration that does not exist", []string{"explain", "-f", quickstart, "--config", filepath.Join(dir, "none.yaml")}, "no such file"},
		{"a profile the configuration lacks", []string{"place", "-f", quickstart, "--profile", "other"}, `no profile "other"`},
		{"preempting in explain", []string{"explain", "-f", quickstart, "--preempt"}, "--preempt belongs to place and whatif"},
		{"preempting with first fit", []string{"place", "-f", quickstart, "--preempt", "--first-fit"}, "cluster-autoscaler's first fit does not preempt"},
		{"an unsupported kube-scheduler release", []string{"explain", "-f", quickstart, "--kubernetes-version", "1.20"}, `--kubernetes-version: kube-scheduler "1.20" is not a supported release; supported: v1.37.2, v1.36.3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCmd(t, "", tt.args...)
			if code != exitBadInput || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit status %d, stderr %q; want %d and %q", code, stderr, exitBadInput, tt.stderr)
			}
		})
	}
}

func TestHelpExitsWithZeroAndShowsExamples(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"--help"}, {"explain", "--help"}} {
		code, out, _ := runCmd(t, "", args...)
		if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "-add-node") {
			t.Errorf("%v: exit status %d, output %q", args, code, out)
		}
	}
}

func TestUnknownKindsAreCountedOnStderr(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCmd(t, "", "explain", "-f", kubectlYAML)
	if code == exitBadInput || !regexp.MustCompile(`skipped what the scheduler does not read: .*Kind=Event`).MatchString(stderr) {
		t.Errorf("exit status %d, stderr %q; want the Event counted", code, stderr)
	}
}

// TestHTMLRendersInABrowser loads the -o html page in headless Chromium
// and reads back its DOM: the chosen node is highlighted, every
// rejection kube-scheduler reports is marked, and reasons are in the
// cells' titles. It is skipped where Chromium is not installed (Debian:
// apt-get install chromium).
func TestHTMLRendersInABrowser(t *testing.T) {
	t.Parallel()
	dom := renderInBrowser(t, "explain", "-q", "-o", "html", "-f", quickstart, "-f", quickPods)
	checks := []struct {
		what string
		re   string
		n    int
	}{
		{"one section per pending pod", `<h2 id="default/[a-z0-9-]+">`, 5},
		{"the chosen node of each placed pod highlighted", `<tr class="chosen"><td class="node"[^>]*>[a-z0-9-]+</td>`, 4},
		{"kube-scheduler's rejections marked", `<td class="reject first" title="[A-Za-z]+: reject`, 2 + 2 + 3 + 6 + 7},
		{"details on hover: the analytics pod on the five nodes short of cpu and memory", `title="NodeResourcesFit: reject\s+Insufficient cpu, Insufficient memory\s+cpu: the pod requests 6`, 5},
	}
	for _, c := range checks {
		if got := len(regexp.MustCompile(c.re).FindAll(dom, -1)); got != c.n {
			t.Errorf("%s: %d matches of %s, want %d", c.what, got, c.re, c.n)
		}
	}
}

// TestHTMLShowsPodsNotTriedAndPreemption: in the browser, explain's page
// says which pods kube-scheduler does not try, and why, without a node
// table, and what preemption decided; place's page the same per row.
func TestHTMLShowsPodsNotTriedAndPreemption(t *testing.T) {
	t.Parallel()
	checks := []struct {
		what string
		args []string
		re   string
		n    int
	}{
		{"explain: a section per pending pod", []string{"explain"}, `<h2 id="default/[a-z-]+">`, 5},
		{"explain: node tables for the pods tried alone", []string{"explain"}, `<table>`, 2},
		{"explain: the gated pod not tried, with its plugin", []string{"explain"}, `does not try it: <span class="msg">waiting for scheduling gates: \[example.com/hold\]</span> \(SchedulingGates\)`, 1},
		{"explain: the preemption", []string{"explain"}, `DefaultPreemption preempts: nominates the pod to n1 and evicts 1 pod\(s\) there: default/low \(priority 0\)\.`, 1},
		{"explain: the closest nodes, without hovering", []string{"explain"}, `<ul class="closest"><li><span class="node">n1</span>: NodeResourcesFit \(1 cpu short\)</li>`, 1},
		{"explain: what the filters found, without hovering", []string{"explain"}, `<li>n2: NodeResourcesFit: cpu: the pod requests 1.5, the node has 1 allocatable`, 1},
		{"place: three rows not tried", []string{"place"}, `<td class="node reject">not tried</td>`, 3},
		{"place --preempt: the preemption acted on", []string{"place", "--preempt"}, `<td class="node pass">n1</td><td [^>]*>DefaultPreemption preempts: nominates the pod to n1 and evicts 1 pod\(s\) there: default/low \(priority 0\) \(acted on\)`, 1},
		{"place: the preemption, not acted on", []string{"place"}, `evicts 1 pod\(s\) there: default/low \(priority 0\) \(not acted on\)`, 1},
	}
	doms := map[string][]byte{}
	for _, c := range checks {
		cmd := strings.Join(c.args, " ")
		if doms[cmd] == nil {
			doms[cmd] = renderInBrowser(t, append(c.args, "-q", "-o", "html", "-f", verdicts)...)
		}
		if got := len(regexp.MustCompile(c.re).FindAll(doms[cmd], -1)); got != c.n {
			t.Errorf("%s: %d matches of %s, want %d", c.what, got, c.re, c.n)
		}
	}
}

// renderInBrowser runs the command with args, which write a page, loads
// the page in headless Chromium and returns its DOM. It skips the test
// where Chromium is not installed.
func renderInBrowser(t *testing.T, args ...string) []byte {
	t.Helper()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium on this machine (apt-get install chromium): the HTML is not checked in a browser")
	}
	_, out, _ := runCmd(t, "", args...)
	page := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(page, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", browser, err)
	}
	return dom
}

func TestKubernetesVersionPicksTheReleaseDecidedAs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, version, want string
	}{
		{"the newest by default", "", "kube-scheduler v1.37.2: binds it to node-a1"},
		{"an older release on request", "1.36", "kube-scheduler v1.36.3: binds it to node-a1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"explain", "-q", "-f", quickstart, "-f", quickPods, "--pod", "default/web"}
			if tc.version != "" {
				args = append(args, "--kubernetes-version", tc.version)
			}
			_, stdout, stderr := runCmd(t, "", args...)
			if !strings.Contains(stdout, tc.want) {
				t.Errorf("stdout lacks %q; stderr %q; got:\n%s", tc.want, stderr, stdout)
			}
			// VolumeBinding scores from v1.37 on.
			if got, want := strings.Contains(stdout, "VolumeBinding x1"), tc.version == ""; got != want {
				t.Errorf("a VolumeBinding score column: %v, want %v", got, want)
			}
		})
	}
}

func TestOlderKubeletsSuggestARelease(t *testing.T) {
	t.Parallel()
	node := func(kubelet string) *v1.Node {
		return &v1.Node{Status: v1.NodeStatus{NodeInfo: v1.NodeSystemInfo{KubeletVersion: kubelet}}}
	}
	newest := kubesched.Releases()[0]
	for _, tc := range []struct {
		name  string
		nodes []*v1.Node
		want  string // "" or a part of the hint
	}{
		{"nodes of the release say nothing", []*v1.Node{node("v1.37.2"), node("v1.36.1")}, ""},
		{"nodes all one minor older name that release", []*v1.Node{node("v1.36.3"), node("v1.36.0-eks-1")}, "pass --kubernetes-version 1.36"},
		{"nodes older than any supported release say which are", []*v1.Node{node("v1.30.1")}, "releases it can decide as: v1.37.2, v1.36.3"},
		{"a node without a kubelet version says nothing", []*v1.Node{node("v1.36.3"), node("")}, ""},
		{"no nodes say nothing", nil, ""},
	} {
		got := olderKubelets(tc.nodes, newest)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAClusterSourceReplacesFiles: a Command that reads the cluster
// itself (the kubectl plugin's) explains it as from a dump, with the
// namespace of --namespace, and refuses -f.
func TestAClusterSourceReplacesFiles(t *testing.T) {
	t.Parallel()
	dump, err := loader.Load(verdicts)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	cmd := Command{Name: "kubectl kubesched", Cluster: func(_ context.Context, namespace string) (*loader.Cluster, error) {
		asked = append(asked, namespace)
		return dump, nil
	}}
	var out, errOut strings.Builder
	code := cmd.Run(context.Background(), []string{"explain", "-q", "--namespace", "default", "--pod", "a-small"}, strings.NewReader(""), &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "binds it to n2") || !slices.Equal(asked, []string{"default"}) {
		t.Errorf("exit status %d, asked for %q, stderr %q; got:\n%s", code, asked, errOut.String(), out.String())
	}
	out.Reset()
	errOut.Reset()
	code = cmd.Run(context.Background(), []string{"explain", "-f", verdicts}, strings.NewReader(""), &out, &errOut)
	if code != exitBadInput || !strings.Contains(errOut.String(), "kubectl kubesched explain: -f: kubectl kubesched reads the cluster itself") {
		t.Errorf("exit status %d, stderr %q; want -f refused", code, errOut.String())
	}
}
