package kubesched_test

import (
	"encoding/json"
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
)

func TestLoadConfig(t *testing.T) {
	const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	for _, tc := range []struct {
		name    string
		doc     string
		wantErr string
		check   func(t *testing.T, cfg *configv1.KubeSchedulerConfiguration)
	}{
		{
			name: "a bin-packing profile gets MostAllocated with the default resources",
			doc:  header + "profiles:\n- schedulerName: bin-packing\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n",
			check: func(t *testing.T, cfg *configv1.KubeSchedulerConfiguration) {
				fit := cfg.Profiles[0].PluginConfig[0].Args.Object.(*configv1.NodeResourcesFitArgs)
				if *cfg.Profiles[0].SchedulerName != "bin-packing" || fit.ScoringStrategy.Type != configv1.MostAllocated || len(fit.ScoringStrategy.Resources) != 2 {
					t.Errorf("profile %s, strategy %+v", *cfg.Profiles[0].SchedulerName, fit.ScoringStrategy)
				}
			},
		},
		{
			name: "JSON is read too",
			doc:  `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","percentageOfNodesToScore":30}`,
			check: func(t *testing.T, cfg *configv1.KubeSchedulerConfiguration) {
				if *cfg.PercentageOfNodesToScore != 30 || *cfg.Profiles[0].SchedulerName != "default-scheduler" {
					t.Errorf("percentage %d, profile %s", *cfg.PercentageOfNodesToScore, *cfg.Profiles[0].SchedulerName)
				}
			},
		},
		{name: "an unknown field is an error", doc: header + "profiles:\n- schedulerNme: a\n", wantErr: `strict decoding error: unknown field "profiles[0].schedulerNme"`},
		{name: "an invalid value is an error", doc: header + "parallelism: -1\n", wantErr: "parallelism: Invalid value: -1: should be an integer value greater than zero"},
		{name: "an empty document is an error", doc: "", wantErr: "Object 'Kind' is missing"},
		{name: "a truncated document is an error", doc: header + "profiles:\n- schedulerName: [a", wantErr: "yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := kubesched.LoadConfig([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || cfg != nil {
					t.Errorf("LoadConfig: %v, %v; want an error containing %q", cfg, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
		})
	}
}

// FuzzLoadConfig loads arbitrary documents: a defaulted, valid
// configuration or an error, never a panic or both.
func FuzzLoadConfig(f *testing.F) {
	const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	f.Add([]byte(header))
	f.Add([]byte(header + "profiles:\n- schedulerName: a\n  plugins: {multiPoint: {disabled: [{name: '*'}]}}\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n"))
	f.Add([]byte(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"pluginConfig":[{"name":"PodTopologySpread","args":{"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}}]}]}`))
	f.Add([]byte(header + "extenders: [{urlPrefix: a, prioritizeVerb: p, weight: 1, managedResources: [{name: example.com/x}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := kubesched.LoadConfig(data)
		switch {
		case err != nil && cfg != nil:
			t.Fatalf("a configuration and an error: %v", err)
		case err != nil:
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
		case cfg.Parallelism == nil || len(cfg.Profiles) == 0 || cfg.Profiles[0].Plugins == nil:
			t.Fatalf("not defaulted: %+v", cfg)
		}
	})
}

func TestLoadConfigWritesArgsAsThePluginsRunWithThem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, args, want string
	}{
		{"empty args of a kube-scheduler plugin are written defaulted, with their kind",
			`{name: InterPodAffinity, args: {}}`,
			`{"name":"InterPodAffinity","args":{"kind":"InterPodAffinityArgs","apiVersion":"kubescheduler.config.k8s.io/v1","hardPodAffinityWeight":1,"ignorePreferredTermsOfExistingPods":false}}`},
		{"given args keep their values and gain the defaults",
			`{name: InterPodAffinity, args: {ignorePreferredTermsOfExistingPods: true}}`,
			`{"name":"InterPodAffinity","args":{"kind":"InterPodAffinityArgs","apiVersion":"kubescheduler.config.k8s.io/v1","hardPodAffinityWeight":1,"ignorePreferredTermsOfExistingPods":true}}`},
		{"another plugin's args stay as the document gave them",
			`{name: MyPlugin, args: {color: red}}`,
			`{"name":"MyPlugin","args":{"color":"red"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := kubesched.LoadConfig([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig: [" + tc.args + "]\n"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(cfg.Profiles[0].PluginConfig[0])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("pluginConfig[0] is written\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}
