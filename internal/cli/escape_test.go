package cli

import (
	"regexp"
	"strings"
	"testing"
)

func TestTerminalSafeEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain text passes", "node-a1  fits\n", "node-a1  fits\n"},
		{"tabs and line feeds pass", "a\tb\nc\n", "a\tb\nc\n"},
		{"an ANSI colour sequence is escaped", "pod \x1b[31mred\x1b[0m", `pod \x1b[31mred\x1b[0m`},
		{"a carriage return is escaped", "over\rwrite", `over\x0dwrite`},
		{"DEL and C1 controls are escaped", "a\x7fb\u009bc", `a\x7fb\x9bc`},
		{"other Unicode passes", "nœud-ü × 3", "nœud-ü × 3"},
		{"invalid UTF-8 passes as it is", "a\xffb", "a\xffb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			n, err := terminalSafe(&b).Write([]byte(tc.in))
			if err != nil || n != len(tc.in) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(tc.in))
			}
			if b.String() != tc.want {
				t.Errorf("wrote %q, want %q", b.String(), tc.want)
			}
		})
	}
}

// TestHostileNamesDoNotReachTheTerminal: a dump whose pod name carries an
// escape sequence is explained with the sequence escaped.
func TestHostileNamesDoNotReachTheTerminal(t *testing.T) {
	t.Parallel()
	dump := "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n" +
		"apiVersion: v1\nkind: Pod\nmetadata: {name: \"evil\\e[2J\", namespace: default}\nspec: {containers: [{name: c, image: i}]}\n"
	_, stdout, stderr := runCmd(t, dump, "explain", "-q", "-f", "-")
	if strings.ContainsRune(stdout+stderr, 0x1b) {
		t.Errorf("an escape character reached the output:\n%q\n%q", stdout, stderr)
	}
	if !strings.Contains(stdout, `Pod default/evil\x1b[2J`) {
		t.Errorf("the pod's name is not shown escaped:\n%s", stdout)
	}
}

// TestMaxNodesNeverHidesARejection: with more nodes than --max-nodes, a
// rejection shared by a few nodes is still counted, named and shown in a
// row, and a long list of names is summarised.
func TestMaxNodesNeverHidesARejection(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 30 {
		b.WriteString("apiVersion: v1\nkind: Node\nmetadata: {name: n" + strings.Repeat("0", 2-len(itoa(i))) + itoa(i) + "}\n")
		b.WriteString("spec:\n")
		if i >= 25 {
			b.WriteString("  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n")
		} else {
			b.WriteString("  taints: []\n")
		}
		b.WriteString("status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n---\n")
	}
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec: {containers: [{name: c, image: i}]}\n")
	_, stdout, stderr := runCmd(t, b.String(), "explain", "-q", "--max-nodes", "5", "-f", "-")
	for _, want := range []string{
		"5 × TaintToleration: node(s) had untolerated taint(s): n25, n26, n27, n28, n29\n",
		"tied with n00, n01, n02, n03, n04, n05, n06, n07, n08, n09 and 14 more",
		"... and 25 more nodes (--max-nodes 0 shows all)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q; stderr %q; got:\n%s", want, stderr, stdout)
		}
	}
	// The rejected class has a row, though the limit is taken by the
	// chosen node and those tied with it.
	if rows := regexp.MustCompile(`(?m)^n2[5-9] +TaintToleration`).FindAllString(stdout, -1); len(rows) != 1 {
		t.Errorf("%d rows of tainted nodes, want one:\n%s", len(rows), stdout)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
