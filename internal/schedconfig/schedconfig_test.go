package schedconfig

import (
	"github.com/kubesched/kubesched/feature"

	"slices"
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

func load(t *testing.T, doc string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := Decode([]byte(header + doc))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	SetDefaults(cfg, newest)
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
	if got := enabled(prof.Plugins.MultiPoint); !slices.Equal(got, enabled(DefaultPlugins(newest).MultiPoint)) {
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
			want: []string{"SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity",
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
			want: []string{"SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity",
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

func TestValidateAcceptsTheDefaults(t *testing.T) {
	if err := Validate(load(t, ""), newest.Features); err != nil {
		t.Errorf("the default configuration: %v", err)
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		v136            bool
	}{
		{name: "parallelism 0", doc: "parallelism: 0\n", want: "parallelism: Invalid value: 0: should be an integer value greater than zero"},
		{name: "a percentage above 100", doc: "percentageOfNodesToScore: 101\n", want: "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
		{name: "a profile's percentage below 0", doc: "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n",
			want: "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"},
		{name: "a maximum backoff below the initial one", doc: "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
			want: "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"},
		{name: "two profiles of one name", doc: "profiles:\n- schedulerName: a\n- schedulerName: a\n",
			want: "profiles[1].schedulerName: Duplicate value"},
		{name: "one of two profiles without a name", doc: "profiles:\n- schedulerName: a\n- {}\n",
			want: "profiles[1].schedulerName: Required value"},
		{name: "profiles sorting the queue differently", doc: "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins: {queueSort: {enabled: [{name: Mine}], disabled: [{name: '*'}]}}\n",
			want: "profiles[1].plugins.queueSort: Invalid value"},
		{name: "a removed plugin", doc: "profiles:\n- plugins: {filter: {enabled: [{name: EBSLimits}]}}\n",
			want: `profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "v1"`},
		{name: "two pluginConfigs for one plugin", doc: "profiles:\n- pluginConfig: [{name: InterPodAffinity, args: {}}, {name: InterPodAffinity, args: {}}]\n",
			want: `profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"`},
		{name: "a hard pod affinity weight above 100", doc: "profiles:\n- pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeight: 101}}]\n",
			want: "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
		{name: "both preemption minimums 0", doc: "profiles:\n- pluginConfig: [{name: DefaultPreemption, args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}}]\n",
			want: "cannot be zero at the same time as minCandidateNodesAbsolute"},
		{name: "a balanced allocation weight other than 1", doc: "profiles:\n- pluginConfig: [{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu, weight: 2}]}}]\n",
			want: "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1"},
		{name: "default constraints with System defaulting", doc: "profiles:\n- pluginConfig: [{name: PodTopologySpread, args: {defaultingType: System, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}}]\n",
			want: `profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty`},
		{name: "a default constraint with a selector", doc: "profiles:\n- pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]}}]\n",
			want: "args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector"},
		{name: "a volume binding shape with StorageCapacityScoring off, as in v1.36", v136: true, doc: "profiles:\n- pluginConfig: [{name: VolumeBinding, args: {shape: [{utilization: 0, score: 0}]}}]\n",
			want: `args.shape: Invalid value: [{"Utilization":0,"Score":0}]: unexpected field`},
		{name: "a negative DRA filter timeout", doc: "profiles:\n- pluginConfig: [{name: DynamicResources, args: {filterTimeout: -1s}}]\n",
			want: `args.filterTimeout: Invalid value: "-1s": must be zero or positive`},
		{name: "an added node affinity with a bad operator", doc: "profiles:\n- pluginConfig: [{name: NodeAffinity, args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Bogus}]}]}}}}]\n",
			want: "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"},
		{name: "two binding extenders", doc: "extenders: [{urlPrefix: a, bindVerb: b}, {urlPrefix: c, bindVerb: d}]\n",
			want: `extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind`},
		{name: "a prioritizing extender without weight", doc: "extenders: [{urlPrefix: a, prioritizeVerb: p}]\n",
			want: "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"},
		{name: "an extender managing a native resource", doc: "extenders: [{urlPrefix: a, managedResources: [{name: cpu}]}]\n",
			want: `extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name`},
		{name: "a lease shorter than its renew deadline", doc: "leaderElection: {leaderElect: true, leaseDuration: 5s, renewDeadline: 10s}\n",
			want: "leaderElection.leaseDuration: Invalid value: \"10s\": must be greater than `RenewDeadline`"},
		{name: "leader election without leases", doc: "leaderElection: {leaderElect: true, resourceLock: endpoints}\n",
			want: `leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"`},
		{name: "a negative burst", doc: "clientConnection: {burst: -1}\n", want: "clientConnection.burst: Invalid value: -1: must be non-negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newest.Features
			if tc.v136 {
				fs = v136.Features
			}
			err := Validate(load(t, tc.doc), fs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// newest is the newest supported release, v136 kube-scheduler v1.36.3.
var newest, v136 = feature.Releases()[0], mustRelease("1.36")

func mustRelease(version string) feature.Release {
	r, err := feature.ReleaseFor(version)
	if err != nil {
		panic(err)
	}
	return r
}
