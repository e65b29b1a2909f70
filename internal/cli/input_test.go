package cli

import (
	"strings"
	"testing"
)

// The inputs of testdata/input: hand-written dumps of the kinds users
// feed kubesched, each with something the loader must refuse or read.
const (
	// inputMoreNodes has node n1, which inputNodes has as its third
	// document, before a pending pod.
	inputMoreNodes = "testdata/input/more.yaml"
	inputNodes     = "testdata/input/nodes.yaml"
	// inputPodsTwice has the pod web twice, once without a namespace.
	inputPodsTwice = "testdata/input/pods-twice.yaml"
	// inputUnnamed has a pod without a name or a generateName.
	inputUnnamed = "testdata/input/unnamed.yaml"
	// inputNegativeRequest has a pod asking for -5 CPUs.
	inputNegativeRequest = "testdata/input/negative-request.yaml"
	// inputAnchors is a List whose items merge earlier ones through YAML
	// anchors.
	inputAnchors = "testdata/input/anchors.yaml"
	// inputDRAV1beta2 has a resource.k8s.io/v1beta2 DeviceClass, with a v1
	// ResourceSlice and ResourceClaim.
	inputDRAV1beta2 = "testdata/input/dra-v1beta2.yaml"
)

// TestObjectsNoAPIServerCouldHoldAreBadInput: duplicates and nameless
// objects, which no API server holds, are bad input naming their places.
func TestObjectsNoAPIServerCouldHoldAreBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{
			name:   "Two nodes of one name in two files are named in both.",
			args:   []string{"explain", "-q", "-f", inputMoreNodes, "-f", inputNodes},
			stderr: inputNodes + `: document 3: Node "n1" is also in ` + inputMoreNodes + ": document 1\n",
		},
		{
			name:   "Two nodes of one name are refused by place too.",
			args:   []string{"place", "-q", "-f", inputMoreNodes, "-f", inputNodes},
			stderr: inputNodes + `: document 3: Node "n1" is also in ` + inputMoreNodes + ": document 1\n",
		},
		{
			name:   "Two pods of one name, one in the default namespace for naming none, are named by their items.",
			args:   []string{"place", "-q", "-f", inputPodsTwice},
			stderr: inputPodsTwice + `: document 1: item 3: Pod "default/web" is also in ` + inputPodsTwice + ": document 1: item 2\n",
		},
		{
			name:   "A pod without a name is named by its place.",
			args:   []string{"explain", "-q", "-f", inputUnnamed},
			stderr: inputUnnamed + ": document 2 (Pod in namespace default): metadata.name: Required value: name or generateName is required\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCmd(t, "", tc.args...)
			if code != exitBadInput || !strings.HasSuffix(stderr, tc.stderr) {
				t.Errorf("exit status %d, stderr %q; want %d and an error ending %q", code, stderr, exitBadInput, tc.stderr)
			}
		})
	}
}

func TestImpossibleResourcesAreBadInputForEveryCommand(t *testing.T) {
	t.Parallel()
	const want = inputNegativeRequest + `: document 2 (Pod default/web): spec.containers[0].resources.requests[cpu]: Invalid value: "-5": must be greater than or equal to 0` + "\n"
	for _, cmd := range []string{"explain", "place", "whatif"} {
		t.Run(cmd+" refuses a negative request at load.", func(t *testing.T) {
			t.Parallel()
			args := []string{cmd, "-q", "-f", inputNegativeRequest}
			if cmd == "whatif" {
				args = append(args, "--remove-node", "n1")
			}
			code, stdout, stderr := runCmd(t, "", args...)
			if code != exitBadInput || stderr != "kubesched "+cmd+": "+want || stdout != "" {
				t.Errorf("exit status %d, stdout %q, stderr %q; want %d, nothing and %q", code, stdout, stderr, exitBadInput, want)
			}
		})
	}
}

func TestHandWrittenInputIsRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		file  string
		lines []string
	}{
		{
			name:  "A List whose items merge earlier ones through YAML anchors is read, each pod with what it merged.",
			file:  inputAnchors,
			lines: []string{"default/web-1  node-a", "default/web-2  node-b"},
		},
		{
			name:  "A v1beta2 DeviceClass is read as v1: a claim of it and its extended resource are allocated.",
			file:  inputDRAV1beta2,
			lines: []string{"default/trainer   gpu-a", "default/renderer  gpu-a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCmd(t, "", "place", "-q", "-f", tc.file)
			if code != exitOK {
				t.Fatalf("exit status %d, stderr %q; want %d", code, stderr, exitOK)
			}
			for _, line := range tc.lines {
				if !strings.Contains(stdout, line+"\n") {
					t.Errorf("no line %q in\n%s", line, stdout)
				}
			}
			if strings.Contains(stderr, "skipped") {
				t.Errorf("skipped what the scheduler reads: %s", stderr)
			}
		})
	}
}
