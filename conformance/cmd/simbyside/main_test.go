package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/conformance"
)

// TestRunChecksAndTimesEveryWorkloadInEveryMode runs the whole command on
// a small cluster, every decision checked: every workload and mode must
// agree with upstream and get a row of the table.
func TestRunChecksAndTimesEveryWorkloadInEveryMode(t *testing.T) {
	// Upstream's configuration defaulting logs through klog's global
	// logger.
	klog.SetLogger(logr.Discard())
	cfg := config{nodes: 40, running: 80, pending: 60, workloads: conformance.SimWorkloadNames, modes: modes, rounds: 2, check: -1}
	var out bytes.Buffer
	if err := run(context.Background(), cfg, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if want := 1 + len(cfg.workloads)*len(cfg.modes); len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, out.String())
	}
	for _, line := range lines[1:] {
		fields := strings.Fields(line)
		// Every pod fits on both sides.
		if fields[len(fields)-1] != "0/0" {
			t.Errorf("some pods fit nowhere: %s", line)
		}
	}
}

// TestRunAgainstAnOlderReleaseOutOfProcess runs the whole command
// against the oldest release kubesched reproduces, which runs in the
// oracle's process: every decision checked, every row placing every pod.
func TestRunAgainstAnOlderReleaseOutOfProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/oracle against an older release")
	}
	releases := kubesched.Releases()
	oldest := releases[len(releases)-1]
	if len(releases) == 1 {
		t.Skip("kubesched reproduces one release")
	}
	cfg := config{nodes: 30, running: 60, pending: 40, workloads: conformance.SimWorkloadNames, modes: modes, rounds: 1, check: -1,
		release: oldest.Version(), oracleDir: "../.."}
	var out bytes.Buffer
	if err := run(context.Background(), cfg, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	text := strings.TrimSpace(out.String())
	if want := "kubesched as kube-scheduler " + oldest.Version() + " against kube-scheduler " + oldest.Version() + " out of process"; !strings.HasPrefix(text, want) {
		t.Errorf("the output begins\n%s\nwant it to say %q", text, want)
	}
	lines := strings.Split(text, "\n")
	if want := 3 + len(cfg.workloads)*len(cfg.modes); len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, text)
	}
	for _, line := range lines[3:] {
		if fields := strings.Fields(line); fields[len(fields)-1] != "0/0" {
			t.Errorf("some pods fit nowhere: %s", line)
		}
	}
}

func TestParseModes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flag    string
		want    []string
		wantErr bool
	}{
		{name: "every mode is known", flag: "best100,best-adaptive,firstfit", want: []string{"best100", "best-adaptive", "firstfit"}},
		{name: "modes keep the order given", flag: "firstfit, best100", want: []string{"firstfit", "best100"}},
		{name: "an unknown mode is refused", flag: "best100,worstfit", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseModes(tc.flag)
			if (err != nil) != tc.wantErr || !slices.Equal(modeNames(got), tc.want) {
				t.Errorf("got %v, %v; want %v (error: %v)", modeNames(got), err, tc.want, tc.wantErr)
			}
		})
	}
}
