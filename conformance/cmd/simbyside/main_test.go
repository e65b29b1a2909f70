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
