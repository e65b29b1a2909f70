package schedconfig

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

func load(t *testing.T, doc string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := Decode([]byte(header + doc))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	SetDefaults(cfg)
	return cfg
}

func enabled(set configv1.PluginSet) []string {
	var out []string
	for _, pl := range set.Enabled {
		out = append(out, pl.Name)
	}
	return out
}

func TestAnEmptyConfigurationGetsKubeSchedulersDefaults(t *testing.T) {
	cfg := load(t, "")
	if *cfg.Parallelism != 16 || *cfg.PercentageOfNodesToScore != 0 || *cfg.PodInitialBackoffSeconds != 1 || *cfg.PodMaxBackoffSeconds != 10 {
		t.Errorf("parallelism %d, percentage %d, backoff %d..%d", *cfg.Parallelism, *cfg.PercentageOfNodesToScore, *cfg.PodInitialBackoffSeconds, *cfg.PodMaxBackoffSeconds)
	}
	if len(cfg.Profiles) != 1 || *cfg.Profiles[0].SchedulerName != "default-scheduler" {
		t.Fatalf("profiles %v, want one named default-scheduler", cfg.Profiles)
	}
	prof := cfg.Profiles[0]
	if got := enabled(prof.Plugins.MultiPoint); !slices.Equal(got, enabled(DefaultPlugins().MultiPoint)) {
		t.Errorf("multiPoint %v", got)
	}
	var argsOf []string
	for _, pc := range prof.PluginConfig {
		argsOf = append(argsOf, pc.Name)
	}
	want := []string{"DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread", "VolumeBinding"}
	if !slices.Equal(argsOf, want) {
		t.Errorf("pluginConfig for %v, want %v", argsOf, want)
	}
	fit := prof.PluginConfig[5].Args.Object.(*configv1.NodeResourcesFitArgs)
	if fit.ScoringStrategy.Type != configv1.LeastAllocated || len(fit.ScoringStrategy.Resources) != 2 {
		t.Errorf("NodeResourcesFit args %+v", fit.ScoringStrategy)
	}
	if fit.Kind != "NodeResourcesFitArgs" {
		t.Errorf("defaulted args have kind %q", fit.Kind)
	}
}

func TestProfilePluginsMergeIntoTheDefaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		plugins string
		point   func(*configv1.Plugins) configv1.PluginSet
		want    []string
	}{
		{
			name:    "a disabled default plugin is left out, the others keep their order",
			plugins: "multiPoint: {disabled: [{name: ImageLocality}, {name: NodePorts}]}",
			point:   func(p *configv1.Plugins) configv1.PluginSet { return p.MultiPoint },
			want: []string{"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "DefaultPreemption", "NodeResourcesBalancedAllocation", "DefaultBinder", "NodeDeclaredFeatures"},
		},
		{
			name:    "disabling * leaves only the plugins enabled there",
			plugins: "multiPoint: {enabled: [{name: NodeName}, {name: Mine}], disabled: [{name: '*'}]}",
			point:   func(p *configv1.Plugins) configv1.PluginSet { return p.MultiPoint },
			want:    []string{"NodeName", "Mine"},
		},
		{
			name:    "a default plugin enabled again is replaced where it stands, the last of its name winning, and new ones follow",
			plugins: "multiPoint: {enabled: [{name: Mine}, {name: NodeName, weight: 1}, {name: NodeName, weight: 5}]}",
			point:   func(p *configv1.Plugins) configv1.PluginSet { return p.MultiPoint },
			want: []string{"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
				"NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
				"NodeDeclaredFeatures", "Mine", "NodeName"},
		},
		{
			name:    "another extension point keeps its own lists",
			plugins: "score: {enabled: [{name: Mine, weight: 2}], disabled: [{name: ImageLocality}]}",
			point:   func(p *configv1.Plugins) configv1.PluginSet { return p.Score },
			want:    []string{"Mine"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := load(t, "profiles:\n- plugins:\n    "+tc.plugins+"\n")
			set := tc.point(cfg.Profiles[0].Plugins)
			if got := enabled(set); !slices.Equal(got, tc.want) {
				t.Errorf("enabled\n got  %v\n want %v", got, tc.want)
			}
		})
	}
	cfg := load(t, "profiles:\n- plugins:\n    multiPoint: {enabled: [{name: NodeName, weight: 1}, {name: NodeName, weight: 5}]}\n")
	for _, pl := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		if pl.Name == "NodeName" {
			if *pl.Weight != 5 {
				t.Errorf("NodeName in the default's place has weight %d, want the last one's, 5", *pl.Weight)
			}
			break
		}
	}
}

func TestArgsAreDecodedAndDefaulted(t *testing.T) {
	cfg := load(t, `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu}, {name: example.com/gpu, weight: 3}]
  - name: Mine
    args: {whatever: 1}
`)
	pcs := cfg.Profiles[0].PluginConfig
	fit, ok := pcs[0].Args.Object.(*configv1.NodeResourcesFitArgs)
	if !ok {
		t.Fatalf("NodeResourcesFit args are %T", pcs[0].Args.Object)
	}
	if fit.ScoringStrategy.Type != configv1.MostAllocated || fit.ScoringStrategy.Resources[0].Weight != 1 || fit.ScoringStrategy.Resources[1].Weight != 3 {
		t.Errorf("scoring strategy %+v, want MostAllocated with cpu weighted 1 (defaulted) and the GPU 3", fit.ScoringStrategy)
	}
	if pcs[1].Args.Object != nil || !strings.Contains(string(pcs[1].Args.Raw), "whatever") {
		t.Errorf("out-of-tree args: object %v, raw %s; want raw only", pcs[1].Args.Object, pcs[1].Args.Raw)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{name: "an unknown field", doc: header + "bogus: 1\n", want: `strict decoding error: unknown field "bogus"`},
		{name: "an unknown field in a plugin's args", doc: header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 2, bogus: 1}\n",
			want: `strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin InterPodAffinity: strict decoding error: unknown field "bogus"`},
		{name: "args of another kind", doc: header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {kind: NodeAffinityArgs, apiVersion: kubescheduler.config.k8s.io/v1}\n",
			want: "args for plugin InterPodAffinity were not of type"},
		{name: "a version kube-scheduler no longer reads", doc: "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
			want: `no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3"`},
		{name: "another kind", doc: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: NodeAffinityArgs\n", want: "couldn't decode as KubeSchedulerConfiguration"},
		{name: "no kind", doc: "parallelism: 3\n", want: "Object 'Kind' is missing"},
		{name: "not YAML", doc: "{[", want: "couldn't get version/kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(header))
	f.Add([]byte(header + "profiles:\n- schedulerName: a\n  plugins: {multiPoint: {disabled: [{name: '*'}]}}\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n"))
	f.Add([]byte(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"pluginConfig":[{"name":"PodTopologySpread","args":{"defaultConstraints":[]}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data)
		if err != nil {
			if _, ok := runtime.AsStrictDecodingError(err); !ok && cfg != nil {
				t.Fatalf("a configuration with error %v", err)
			}
			return
		}
		SetDefaults(cfg)
		if len(cfg.Profiles) == 0 || cfg.Parallelism == nil {
			t.Fatalf("defaulting left %+v", cfg)
		}
	})
}
