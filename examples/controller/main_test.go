package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeFile writes content to a file named name in a directory of the
// test's, and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unreachableKubeconfig names a cluster nothing listens for, so that a
// test that got as far as connecting fails instead of reaching a real
// one.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

func TestRunRefusesABadCommandLineBeforeScheduling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// config is the -config file's body after the header; "" gives
		// no -config.
		config string
		args   []string
		// wantErr are what the error must say.
		wantErr []string
	}{
		{
			name:    "a -config file with an unknown field is refused with kube-scheduler's strict decoding error",
			config:  "profiles:\n- schedulerNme: a\n",
			wantErr: []string{"-config ", `strict decoding error: unknown field "profiles[0].schedulerNme"`},
		},
		{
			name:    "invalid plugin args are refused with kube-scheduler's validation message",
			config:  "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
			wantErr: []string{"profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
		},
		{
			name:   "two profiles with the same schedulerName are refused with kube-scheduler's message",
			config: "profiles:\n- schedulerName: a\n- schedulerName: a\n",
			// kube-scheduler names the duplicate by its path, which prints as {}.
			wantErr: []string{"profiles[1].schedulerName: Duplicate value"},
		},
		{
			name:    "-scheduler-name with -config is an error that says which to drop",
			config:  "profiles:\n- schedulerName: a\n",
			args:    []string{"-scheduler-name", "b"},
			wantErr: []string{`-scheduler-name "b" cannot be used with -config`, "drop -scheduler-name"},
		},
		{
			name:    "-scheduler-name with -config is an error even when it gives the default name",
			config:  "profiles:\n- schedulerName: kubesched\n",
			args:    []string{"-scheduler-name", "kubesched"},
			wantErr: []string{`-scheduler-name "kubesched" cannot be used with -config`},
		},
		{
			name:    "a -config file that sets leaderElection is refused, since the flags give the election",
			config:  "profiles:\n- schedulerName: a\nleaderElection:\n  resourceName: my-scheduler\n",
			wantErr: []string{"sets leaderElection", "give the -leader-elect flags instead"},
		},
		{
			name:    "a -config file that turns leader election off is refused too",
			config:  "profiles:\n- schedulerName: a\nleaderElection:\n  leaderElect: false\n",
			wantErr: []string{"sets leaderElection"},
		},
		{
			name:    "a -config file that sets clientConnection is refused, since the flags give the client",
			config:  "profiles:\n- schedulerName: a\nclientConnection:\n  qps: 200\n",
			wantErr: []string{"sets clientConnection", "-kube-api-qps"},
		},
		{
			name:    "a -config file that does not exist is an error that names it",
			args:    []string{"-config", "no-such-file.yaml"},
			wantErr: []string{"reading -config: open no-such-file.yaml"},
		},
		{
			name:    "an argument that is not a flag is an error",
			args:    []string{"extra"},
			wantErr: []string{`unexpected argument "extra"`},
		},
		{
			name:    "an unknown flag is an error",
			args:    []string{"-confg", "scheduler.yaml"},
			wantErr: []string{"flag provided but not defined: -confg"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"-kubeconfig", writeFile(t, "kubeconfig", unreachableKubeconfig)}
			if tt.config != "" {
				args = append(args, "-config", writeFile(t, "scheduler.yaml", configHeader+tt.config))
			}
			// Run stops at once should it get as far as starting.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := run(ctx, append(args, tt.args...), io.Discard)
			if err == nil {
				t.Fatal("run accepted the command line")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("run: %v; want an error saying %q", err, want)
				}
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	twoProfiles := writeFile(t, "scheduler.yaml", configHeader+"profiles:\n- schedulerName: a\n- schedulerName: b\n")
	// Spelling out kube-scheduler's defaults changes nothing.
	asDefaults := writeFile(t, "defaults.yaml", configHeader+"profiles:\n- schedulerName: a\n"+
		"leaderElection:\n  leaderElect: true\n  resourceName: kube-scheduler\nclientConnection:\n  qps: 50\n  burst: 100\n")
	tests := []struct {
		name           string
		args           []string
		wantKubeconfig string
		// wantName is Config.SchedulerName; wantProfiles are the
		// schedulerNames of Config.SchedulerConfig, nil for none.
		wantName     string
		wantProfiles []string
		// wantQPS and wantBurst are the client's limits; kube-scheduler's
		// 50 and 100 unless set.
		wantQPS   float32
		wantBurst int
	}{
		{name: "without flags the controller serves kubesched with the default profile and kube-scheduler's client limits", wantName: "kubesched"},
		{name: "-kube-api-qps and -kube-api-burst set the client's limits", args: []string{"-kube-api-qps", "200", "-kube-api-burst", "400"}, wantName: "kubesched", wantQPS: 200, wantBurst: 400},
		{name: "-scheduler-name names the one scheduler served", args: []string{"-scheduler-name", "mine"}, wantName: "mine"},
		{
			name:           "-config serves the file's profiles, and no -scheduler-name",
			args:           []string{"-config", twoProfiles, "-kubeconfig", "cluster.yaml"},
			wantKubeconfig: "cluster.yaml",
			wantProfiles:   []string{"a", "b"},
		},
		{
			name:         "a -config file that spells out kube-scheduler's leaderElection and clientConnection defaults is accepted",
			args:         []string{"-config", asDefaults},
			wantProfiles: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts, err := parseFlags(tt.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var profiles []string
			if sc := opts.config.SchedulerConfig; sc != nil {
				for _, p := range sc.Profiles {
					profiles = append(profiles, *p.SchedulerName)
				}
			}
			wantQPS, wantBurst := tt.wantQPS, tt.wantBurst
			if wantQPS == 0 {
				wantQPS, wantBurst = 50, 100
			}
			if opts.qps != wantQPS || opts.burst != wantBurst {
				t.Errorf("client limits %v/%d, want %v/%d", opts.qps, opts.burst, wantQPS, wantBurst)
			}
			if opts.kubeconfig != tt.wantKubeconfig || opts.config.SchedulerName != tt.wantName || !slices.Equal(profiles, tt.wantProfiles) {
				t.Errorf("kubeconfig %q, scheduler name %q, profiles %v; want %q, %q, %v",
					opts.kubeconfig, opts.config.SchedulerName, profiles, tt.wantKubeconfig, tt.wantName, tt.wantProfiles)
			}
		})
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-kube-api-qps", "0"}, "must be positive"},
		{[]string{"-kube-api-burst", "0"}, "must be positive"},
		{[]string{"-kube-api-qps", "-5"}, "must be positive"},
		{[]string{"-leader-elect-lease-duration", "5s"}, "must be longer than -leader-elect-renew-deadline"},
		{[]string{"-leader-elect-retry-period", "9s"}, "must be longer than 1.2 times -leader-elect-retry-period"},
		{[]string{"-leader-elect-resource-name", ""}, "must name the Lease"},
	} {
		if _, err := parseFlags(bad.args, io.Discard); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want an error saying %q", bad.args, err, bad.want)
		}
	}
	// Without leader election its durations are not checked.
	if _, err := parseFlags([]string{"-leader-elect=false", "-leader-elect-lease-duration", "1s"}, io.Discard); err != nil {
		t.Errorf("-leader-elect=false: %v", err)
	}
	opts, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := election{enabled: true, leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second, retryPeriod: 2 * time.Second, namespace: "kube-system", name: "kubesched"}
	if opts.election != want || opts.healthAddr != ":10251" {
		t.Errorf("defaults: election %+v, health %q; want %+v, \":10251\"", opts.election, opts.healthAddr, want)
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}
