package main

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// schedulerConfig is the seed's configuration with extender replaced by
// the given YAML lines (indented under "- ").
func schedulerConfig(extender string) []byte {
	return []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: i-scheduler-extender
- schedulerName: another
extenders:
- ` + extender + "\n")
}

const seedExtender = `urlPrefix: "http://localhost:8080"
  filterVerb: filter_onlyone
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 1
  nodeCacheCapable: false`

func TestCheckConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		config   []byte
		addr     string
		bind     bool // -bind
		profiles []string
		wantErr  string // prefix of the error; "" for none
	}{
		{name: "the seed's configuration calls the demo for every profile", config: schedulerConfig(seedExtender), addr: "0.0.0.0:8080", bind: true,
			profiles: []string{"another", "i-scheduler-extender"}},
		{name: "a bindVerb is refused unless the demo binds", config: schedulerConfig(seedExtender), addr: "127.0.0.1:8080",
			wantErr: `extenders[0] (http://localhost:8080): bindVerb "bind": the demo serves /bind only with -bind; add it, or remove bindVerb to let kube-scheduler bind`},
		{name: "without a bindVerb the demo need not bind", addr: "127.0.0.1:8080",
			config:   schedulerConfig(strings.Replace(seedExtender, "\n  bindVerb: bind", "", 1)),
			profiles: []string{"another", "i-scheduler-extender"}},
		{name: "an extender on another port is not the demo's business", addr: "127.0.0.1:8080",
			config:  schedulerConfig(`urlPrefix: "http://other:9000"` + "\n  filterVerb: anything"),
			wantErr: "no extender in the configuration has a urlPrefix on port 8080"},
		{name: "a verb the demo does not serve is refused", addr: ":8080",
			config:  schedulerConfig(strings.Replace(seedExtender, "filter_onlyone", "filtr", 1)),
			wantErr: `extenders[0] (http://localhost:8080): filterVerb "filtr": the demo serves ["filter" "filter_onlyone"]`},
		{name: "a preempt verb is refused", addr: ":8080", bind: true,
			config:  schedulerConfig(seedExtender + "\n  preemptVerb: preempt"),
			wantErr: `extenders[0] (http://localhost:8080): preemptVerb "preempt": the demo serves no such verb; remove it`},
		{name: "a node cache capable scheduler is refused", addr: ":8080",
			config:  schedulerConfig(strings.Replace(seedExtender, "nodeCacheCapable: false", "nodeCacheCapable: true", 1)),
			wantErr: "extenders[0] (http://localhost:8080): nodeCacheCapable: the demo has no node cache"},
		{name: "verbs under a path are refused", addr: ":8080",
			config:  schedulerConfig(strings.Replace(seedExtender, "8080", "8080/scheduler", 1)),
			wantErr: `extenders[0] (http://localhost:8080/scheduler): the demo serves its verbs at the root, not under "/scheduler"`},
		{name: "an https urlPrefix without a port is port 443", addr: ":443", bind: true,
			config:   schedulerConfig(strings.Replace(strings.Replace(seedExtender, "http:", "https:", 1), ":8080", "", 1) + "\n  enableHTTPS: true"),
			profiles: []string{"another", "i-scheduler-extender"}},
		{name: "a configuration kube-scheduler refuses is refused with its message", addr: ":8080",
			config:  schedulerConfig(strings.Replace(seedExtender, "weight: 1", "weight: -1", 1)),
			wantErr: "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"},
		{name: "an unknown field is refused", addr: ":8080",
			config:  schedulerConfig(seedExtender + "\n  filterverb: filter"),
			wantErr: "strict decoding error: unknown field"},
		{name: "a bad -addr is refused", addr: "8080", config: schedulerConfig(seedExtender), wantErr: `-addr "8080": address 8080: missing port in address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			profiles, err := checkConfig(tc.config, tc.addr, tc.bind)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("checkConfig = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(profiles, tc.profiles) {
				t.Errorf("profiles %v, want %v", profiles, tc.profiles)
			}
		})
	}
}

// TestTheManifestsConfigurationIsAccepted checks deploy/extender's
// ConfigMap with the extender's -addr and -bind, as the extender checks
// it when it starts beside kube-scheduler.
func TestTheManifestsConfigurationIsAccepted(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../deploy/extender/extender.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The extender's arguments, as the manifest lists them.
	var addr string
	var bind bool
	for line := range strings.SplitSeq(string(data), "\n") {
		arg := strings.TrimPrefix(strings.TrimSpace(line), "- ")
		if a, ok := strings.CutPrefix(arg, "-addr="); ok {
			addr = a
		}
		bind = bind || arg == "-bind" || arg == "-bind=true"
	}
	if addr == "" {
		t.Fatal("the manifest gives the extender no -addr")
	}
	// The configuration is the ConfigMap's scheduler.yaml block.
	_, block, ok := strings.Cut(string(data), "  scheduler.yaml: |\n")
	if !ok {
		t.Fatal("the manifest's ConfigMap has no scheduler.yaml")
	}
	block, _, _ = strings.Cut(block, "\n---")
	var config strings.Builder
	for line := range strings.SplitSeq(block, "\n") {
		config.WriteString(strings.TrimPrefix(line, "    ") + "\n")
	}
	profiles, err := checkConfig([]byte(config.String()), addr, bind)
	if err != nil {
		t.Fatalf("the extender would refuse the manifest's configuration: %v", err)
	}
	if !slices.Equal(profiles, []string{"kubesched-extender"}) {
		t.Errorf("profiles %v, want [kubesched-extender]", profiles)
	}
}
