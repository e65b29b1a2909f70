package schedconfig

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
)

// Values kube-scheduler defaults a configuration to.
const (
	defaultParallelism        int32   = 16
	defaultInitialBackoff     int64   = 1
	defaultMaxBackoff         int64   = 10
	defaultBindTimeout        int64   = 600
	defaultHardAffinityWeight int32   = 1
	defaultContentType                = "application/vnd.kubernetes.protobuf"
	defaultQPS                float32 = 50
	defaultBurst              int32   = 100
)

// DefaultPlugins returns release r's default plugin set, as its
// configuration's defaulting starts from: every plugin enabled at
// multiPoint, with the score weights, in order. It is a copy.
func DefaultPlugins(r feature.Release) *configv1.Plugins {
	enabled := make([]configv1.Plugin, len(r.Profile))
	for i, p := range r.Profile {
		enabled[i] = configv1.Plugin{Name: p.Name}
		if p.Weight != nil {
			enabled[i].Weight = ptr(*p.Weight)
		}
	}
	return &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: enabled}}
}

// SetDefaults fills in cfg as release r's defaulting does with its
// default feature gates: the top-level values, one profile named
// default-scheduler when there are none, each profile's plugins merged
// into the default set, and args for every enabled plugin that has an
// args kind, defaulted, appended in name order after the ones given.
func SetDefaults(cfg *configv1.KubeSchedulerConfiguration, r feature.Release) {
	if cfg.Parallelism == nil {
		cfg.Parallelism = ptr(defaultParallelism)
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = append(cfg.Profiles, configv1.KubeSchedulerProfile{})
	}
	// Only a lone profile gets a default name; validation requires the
	// others to have one.
	if len(cfg.Profiles) == 1 && cfg.Profiles[0].SchedulerName == nil {
		cfg.Profiles[0].SchedulerName = ptr(v1.DefaultSchedulerName)
	}
	for i := range cfg.Profiles {
		defaultProfile(&cfg.Profiles[i], r)
	}
	if cfg.PercentageOfNodesToScore == nil {
		cfg.PercentageOfNodesToScore = ptr[int32](0)
	}
	le := &cfg.LeaderElection
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = configv1.SchedulerDefaultLockObjectNamespace
	}
	if le.ResourceName == "" {
		le.ResourceName = configv1.SchedulerDefaultLockObjectName
	}
	cc := &cfg.ClientConnection
	if cc.ContentType == "" {
		cc.ContentType = defaultContentType
	}
	if cc.QPS == 0 {
		cc.QPS = defaultQPS
	}
	if cc.Burst == 0 {
		cc.Burst = defaultBurst
	}
	componentbaseconfigv1alpha1.RecommendedDefaultLeaderElectionConfiguration(le)
	if cfg.PodInitialBackoffSeconds == nil {
		cfg.PodInitialBackoffSeconds = ptr(defaultInitialBackoff)
	}
	if cfg.PodMaxBackoffSeconds == nil {
		cfg.PodMaxBackoffSeconds = ptr(defaultMaxBackoff)
	}
	if cfg.EnableProfiling == nil {
		cfg.EnableProfiling = ptr(true)
	}
	if *cfg.EnableProfiling && cfg.EnableContentionProfiling == nil {
		cfg.EnableContentionProfiling = ptr(true)
	}
}

// defaultProfile merges the profile's plugins into the default set and
// defaults its plugins' args.
func defaultProfile(prof *configv1.KubeSchedulerProfile, r feature.Release) {
	prof.Plugins = mergePlugins(DefaultPlugins(r), prof.Plugins)
	configured := map[string]bool{}
	for i := range prof.PluginConfig {
		pc := &prof.PluginConfig[i]
		configured[pc.Name] = true
		defaultArgs(pc.Args.Object, r.Features)
	}
	for _, name := range enabledNames(prof.Plugins) {
		if configured[name] {
			continue
		}
		args := newArgs(name)
		if args == nil {
			// Out of tree, or without args.
			continue
		}
		defaultArgs(args, r.Features)
		args.GetObjectKind().SetGroupVersionKind(configv1.SchemeGroupVersion.WithKind(name + "Args"))
		prof.PluginConfig = append(prof.PluginConfig, configv1.PluginConfig{Name: name, Args: runtime.RawExtension{Object: args}})
	}
}

// extensionPoints returns the plugin sets of p, in kube-scheduler's order.
func extensionPoints(p *configv1.Plugins) []*configv1.PluginSet {
	return []*configv1.PluginSet{
		&p.MultiPoint, &p.PreFilter, &p.Filter, &p.PostFilter, &p.Reserve, &p.PreScore, &p.Score,
		&p.PreBind, &p.Bind, &p.PostBind, &p.Permit, &p.PreEnqueue, &p.QueueSort,
		&p.PlacementGenerate, &p.PlacementScore,
	}
}

// enabledNames returns the names of the plugins enabled at any extension
// point, sorted, without repeats.
func enabledNames(p *configv1.Plugins) []string {
	var out []string
	for _, set := range extensionPoints(p) {
		for _, pl := range set.Enabled {
			out = append(out, pl.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// mergePlugins merges custom into defaults, extension point by extension
// point, and returns defaults.
func mergePlugins(defaults, custom *configv1.Plugins) *configv1.Plugins {
	if custom == nil {
		return defaults
	}
	d, c := extensionPoints(defaults), extensionPoints(custom)
	for i := range d {
		*d[i] = mergePluginSet(*d[i], *c[i])
	}
	return defaults
}

// mergePluginSet is kube-scheduler's merge of one extension point: the
// default plugins not disabled (none when "*" is), each replaced in place
// by a custom plugin of its name, then the other custom plugins in their
// order, repeats included (building the framework rejects them). The
// disabled list keeps the custom ones, then the default's.
func mergePluginSet(defaults, custom configv1.PluginSet) configv1.PluginSet {
	disabled := map[string]bool{}
	var out configv1.PluginSet
	for _, pl := range append(slices.Clone(custom.Disabled), defaults.Disabled...) {
		out.Disabled = append(out.Disabled, configv1.Plugin{Name: pl.Name})
		disabled[pl.Name] = true
	}
	// The last custom plugin of a name replaces the default one.
	customAt := map[string]int{}
	for i, pl := range custom.Enabled {
		customAt[pl.Name] = i
	}
	replaced := map[int]bool{}
	if !disabled["*"] {
		for _, pl := range defaults.Enabled {
			if disabled[pl.Name] {
				continue
			}
			if i, ok := customAt[pl.Name]; ok {
				pl = custom.Enabled[i]
				replaced[i] = true
			}
			out.Enabled = append(out.Enabled, pl)
		}
	}
	for i, pl := range custom.Enabled {
		if !replaced[i] {
			out.Enabled = append(out.Enabled, pl)
		}
	}
	return out
}

// newArgs returns a new args object of the plugin's args kind, or nil if
// kube-scheduler has none.
func newArgs(plugin string) runtime.Object {
	switch plugin + "Args" {
	case "DefaultPreemptionArgs":
		return &configv1.DefaultPreemptionArgs{}
	case "InterPodAffinityArgs":
		return &configv1.InterPodAffinityArgs{}
	case "NodeResourcesBalancedAllocationArgs":
		return &configv1.NodeResourcesBalancedAllocationArgs{}
	case "NodeResourcesFitArgs":
		return &configv1.NodeResourcesFitArgs{}
	case "PodTopologySpreadArgs":
		return &configv1.PodTopologySpreadArgs{}
	case "VolumeBindingArgs":
		return &configv1.VolumeBindingArgs{}
	case "NodeAffinityArgs":
		return &configv1.NodeAffinityArgs{}
	case "DynamicResourcesArgs":
		return &configv1.DynamicResourcesArgs{}
	}
	return nil
}

// SetArgsDefaults defaults args of a kind kube-scheduler defaults, as its
// configuration's defaulting does; others are left as they are.
func SetArgsDefaults(args runtime.Object, fs feature.Features) { defaultArgs(args, fs) }

// defaultArgs defaults args of a kind kube-scheduler defaults; others are
// left as they are.
func defaultArgs(args runtime.Object, fs feature.Features) {
	switch a := args.(type) {
	case *configv1.DefaultPreemptionArgs:
		if a.MinCandidateNodesPercentage == nil {
			a.MinCandidateNodesPercentage = ptr[int32](10)
		}
		if a.MinCandidateNodesAbsolute == nil {
			a.MinCandidateNodesAbsolute = ptr[int32](100)
		}
	case *configv1.InterPodAffinityArgs:
		if a.HardPodAffinityWeight == nil {
			a.HardPodAffinityWeight = ptr(defaultHardAffinityWeight)
		}
	case *configv1.VolumeBindingArgs:
		if a.BindTimeoutSeconds == nil {
			a.BindTimeoutSeconds = ptr(defaultBindTimeout)
		}
		if len(a.Shape) == 0 && fs.StorageCapacityScoring {
			a.Shape = defaultShape()
		}
	case *configv1.NodeResourcesBalancedAllocationArgs:
		a.Resources = defaultResources(a.Resources)
	case *configv1.PodTopologySpreadArgs:
		if a.DefaultingType == "" {
			a.DefaultingType = configv1.SystemDefaulting
		}
	case *configv1.NodeResourcesFitArgs:
		if a.ScoringStrategy == nil {
			a.ScoringStrategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated}
		}
		a.ScoringStrategy.Resources = defaultResources(a.ScoringStrategy.Resources)
	case *configv1.DynamicResourcesArgs:
		// DRASchedulerFilterTimeout, DRADeviceBindingConditions and
		// DRAResourceClaimDeviceStatus are on.
		if a.FilterTimeout == nil {
			a.FilterTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesFilterTimeoutDefault}
		}
		if a.BindingTimeout == nil {
			a.BindingTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesBindingTimeoutDefault}
		}
	}
}

// defaultResources returns cpu and memory of weight 1 for an empty list,
// else the list with weight 0 made 1, in place.
func defaultResources(rs []configv1.ResourceSpec) []configv1.ResourceSpec {
	if len(rs) == 0 {
		return []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}
	}
	for i := range rs {
		if rs[i].Weight == 0 {
			rs[i].Weight = 1
		}
	}
	return rs
}

func ptr[T any](v T) *T { return &v }

// ArgsAsRun makes every plugin's args that kubesched knows encode as
// what the plugin runs with, as kube-scheduler writes its configuration
// (--write-config-to): the defaulted object, with its kind and
// apiVersion, rather than the JSON the document gave. Args of other
// plugins are left as they are.
func ArgsAsRun(cfg *configv1.KubeSchedulerConfiguration) {
	for i := range cfg.Profiles {
		for j := range cfg.Profiles[i].PluginConfig {
			args := &cfg.Profiles[i].PluginConfig[j].Args
			if args.Object == nil {
				continue
			}
			gvks, _, err := argsScheme.ObjectKinds(args.Object)
			if err != nil || len(gvks) == 0 {
				continue
			}
			args.Object.GetObjectKind().SetGroupVersionKind(gvks[0])
			args.Raw = nil
		}
	}
}
