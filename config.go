package kubesched

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/extender"
	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
)

// LoadConfig reads a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1), YAML or JSON, as the newest supported
// kube-scheduler ([Release]) reads its --config file, and returns it
// defaulted:
//
//   - Decoding is strict. Unknown and duplicate fields, in the
//     configuration and in the args of kube-scheduler's own plugins, are
//     one error that lists them ("strict decoding error: unknown field
//     ..."). Other API versions and kinds are errors too.
//   - The args of kube-scheduler's plugins are decoded into their
//     k8s.io/kube-scheduler/config/v1 types, in each PluginConfig's
//     Args.Object, with their kind and apiVersion, and Args.Raw is
//     cleared: encoded, the configuration shows the args the plugins run
//     with, defaults included, as kube-scheduler --write-config-to writes
//     them. Other plugins' args stay as JSON in Args.Raw.
//   - Defaulting is kube-scheduler's, with its default feature gates:
//     parallelism 16, one profile named default-scheduler when there is
//     none, each profile's plugins merged into the default set, and args,
//     defaulted, for every enabled plugin that has them.
//   - Validation is kube-scheduler's, with its messages, for example
//     "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid
//     value: 101: not in valid range [0, 100]". As in kube-scheduler,
//     NodeResourcesFit's args are checked only when a plugin is built
//     from them.
//
// The conformance module compares all three with kube-scheduler's own
// code over generated configurations.
func LoadConfig(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	return loadConfig(data, newest())
}

func loadConfig(data []byte, r *Release) (*configv1.KubeSchedulerConfiguration, error) {
	cfg, err := schedconfig.Decode(data)
	if err != nil {
		return nil, err
	}
	schedconfig.SetDefaults(cfg, r.r)
	if err := schedconfig.Validate(cfg, r.r.Features); err != nil {
		return nil, err
	}
	schedconfig.ArgsAsRun(cfg)
	return cfg, nil
}

// PluginFactory builds a plugin of the user's that a configuration names,
// from its pluginConfig args: nil when the profile gives none, else a
// *runtime.Unknown holding their JSON in Raw.
type PluginFactory func(args runtime.Object) (fwk.Plugin, error)

// Registry names the user's own plugins, so that a configuration can
// enable them beside kube-scheduler's, which kubesched builds in. A
// plugin takes part at the extension points whose interfaces it
// implements, where the configuration enables it.
type Registry map[string]PluginFactory

// FrameworksFromConfig builds one framework per profile of cfg, keyed by
// schedulerName, as the newest supported kube-scheduler builds its
// profiles, from kube-scheduler's plugins only; see
// [Registry.FrameworksFromConfig].
func FrameworksFromConfig(cfg *configv1.KubeSchedulerConfiguration, opts ...framework.Option) (map[string]*framework.Framework, error) {
	return Registry(nil).FrameworksFromConfig(cfg, opts...)
}

// FrameworksFromConfig builds one framework per profile of cfg, keyed by
// schedulerName, as the newest supported kube-scheduler builds its
// profiles ([Release.FrameworksFromConfigWith] for another). cfg is
// not modified: a copy gets kube-scheduler's defaulting and validation,
// so a configuration from [LoadConfig] and one written in code, with
// plugin args of their k8s.io/kube-scheduler/config/v1 types, are alike
// (an empty one is the default profile; one with only Extenders is the
// default profile with those extenders). Then:
//
//   - Each plugin a profile enables is built once, with its pluginConfig
//     args: kube-scheduler's from their v1 types, the user's by r.
//   - Each extension point gets its plugins in kube-scheduler's order:
//     those it enables itself and multiPoint's, expanded as
//     kube-scheduler expands them, with the score weights.
//   - The profile's percentageOfNodesToScore, else the configuration's,
//     and its parallelism apply.
//   - The configuration's extenders are shared by every profile; the
//     resources they manage with ignoredByScheduler replace
//     NodeResourcesFit's ignoredResources, as in kube-scheduler.
//
// opts come after, in every framework. kube-scheduler's queue sort and
// bind plugins are accepted and checked (one queue sort, at least one
// binder), though kubesched runs neither: queue order is package queue's,
// binding is the caller's. Errors read as kube-scheduler's, for example
// `initializing profiles: creating profile for scheduler name a:
// FilterPlugin "Mine" does not exist`.
func (r Registry) FrameworksFromConfig(cfg *configv1.KubeSchedulerConfiguration, opts ...framework.Option) (map[string]*framework.Framework, error) {
	return r.frameworksFromConfig(newest(), cfg, opts...)
}

func (r Registry) frameworksFromConfig(rel *Release, cfg *configv1.KubeSchedulerConfiguration, opts ...framework.Option) (map[string]*framework.Framework, error) {
	if cfg == nil {
		return nil, errors.New("FrameworksFromConfig: nil configuration")
	}
	for name := range r {
		if _, ok := inTree[name]; ok {
			return nil, fmt.Errorf("a plugin named %v already exists", name)
		}
	}
	cfg = cfg.DeepCopy()
	if cfg.APIVersion == "" {
		cfg.APIVersion = configv1.SchemeGroupVersion.String()
	}
	schedconfig.SetDefaults(cfg, rel.r)
	if err := schedconfig.Validate(cfg, rel.r.Features); err != nil {
		return nil, err
	}
	profiles := cfg.Profiles
	extenders, err := buildExtenders(cfg.Extenders, profiles)
	if err != nil {
		return nil, fmt.Errorf("couldn't build extenders: %w", err)
	}
	var common []framework.Option
	if p := deref(cfg.Parallelism); p > 0 {
		common = append(common, framework.WithParallelism(int(p)))
	}
	for _, e := range extenders {
		common = append(common, framework.WithExtender(e))
	}
	out := map[string]*framework.Framework{}
	for i := range profiles {
		prof := &profiles[i]
		name := deref(prof.SchedulerName)
		percentage := cfg.PercentageOfNodesToScore
		if prof.PercentageOfNodesToScore != nil {
			percentage = prof.PercentageOfNodesToScore
		}
		plugins, err := r.profilePlugins(prof, rel.Features())
		if err != nil {
			return nil, fmt.Errorf("initializing profiles: creating profile for scheduler name %s: %w", name, err)
		}
		all := append(append(plugins, common...), framework.WithPercentageOfNodesToScore(deref(percentage)))
		f, err := framework.New(append(all, opts...)...)
		if err != nil {
			return nil, fmt.Errorf("initializing profiles: creating profile for scheduler name %s: %w", name, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("duplicate profile with scheduler name %q", name)
		}
		out[name] = f
	}
	return out, nil
}

// frameworkPoints are the extension points kubesched runs, with their
// names in kube-scheduler's configuration.
var frameworkPoints = []struct {
	point framework.ExtensionPoint
	at    schedconfig.Point
}{
	{framework.PreEnqueue, schedconfig.PreEnqueue}, {framework.PreFilter, schedconfig.PreFilter},
	{framework.Filter, schedconfig.Filter}, {framework.PostFilter, schedconfig.PostFilter},
	{framework.PreScore, schedconfig.PreScore}, {framework.Score, schedconfig.Score},
	{framework.Reserve, schedconfig.Reserve},
}

// profilePlugins builds the plugins prof enables and returns the options
// that place them at their extension points.
func (r Registry) profilePlugins(prof *configv1.KubeSchedulerProfile, fs feature.Features) ([]framework.Option, error) {
	args := map[string]runtime.Object{}
	for _, pc := range prof.PluginConfig {
		if _, dup := args[pc.Name]; dup {
			return nil, fmt.Errorf("repeated config for plugin %s", pc.Name)
		}
		args[pc.Name] = schedconfig.ArgsObject(pc.Args)
	}
	// Every plugin enabled anywhere, built once, in name order.
	needed := map[string]bool{}
	if p := prof.Plugins; p != nil {
		for _, set := range []configv1.PluginSet{p.MultiPoint, p.PreEnqueue, p.QueueSort, p.PreFilter, p.Filter, p.PostFilter,
			p.PreScore, p.Score, p.Reserve, p.Permit, p.PreBind, p.Bind, p.PostBind, p.PlacementGenerate, p.PlacementScore} {
			for _, pl := range set.Enabled {
				needed[pl.Name] = true
			}
		}
	}
	built := map[string][]fwk.Plugin{}
	elsewhere := map[string][]schedconfig.Point{}
	companions := map[string]map[framework.ExtensionPoint]framework.ExtensionPoint{}
	for _, name := range slices.Sorted(maps.Keys(needed)) {
		var ps []fwk.Plugin
		var err error
		if it, ok := inTree[name]; ok {
			ps, err = buildInTree(name, args[name], &fs)
			elsewhere[name], companions[name] = it.elsewhere, it.companions
		} else if factory, ok := r[name]; ok {
			var p fwk.Plugin
			if p, err = factory(args[name]); err == nil {
				if p == nil {
					err = errors.New("the factory returned no plugin")
				}
				ps = []fwk.Plugin{p}
			}
		} else {
			continue // Expand says it does not exist.
		}
		if err != nil {
			return nil, fmt.Errorf("initializing plugin %q: %w", name, err)
		}
		built[name] = ps
	}
	// kube-scheduler's plugins extend the points the release's do, which
	// kubesched's parts may outnumber (an empty PreFilter of v1.37's, say).
	releasePoints := schedconfig.PluginPoints(fs)
	implements := func(name string) (map[schedconfig.Point]bool, bool) {
		ps, ok := built[name]
		if !ok {
			return nil, false
		}
		points := pointsOf(ps, elsewhere[name], companions[name])
		if upstream, ok := releasePoints[name]; ok && inTree[name].build != nil {
			for at := range points {
				if !slices.Contains(upstream, at) {
					delete(points, at)
				}
			}
		}
		return points, true
	}
	exp, err := schedconfig.Expand(deref(prof.SchedulerName), prof.Plugins, implements)
	if err != nil {
		return nil, err
	}
	standIns, err := unpairedParts(exp, implements, built)
	if err != nil {
		return nil, err
	}
	var opts []framework.Option
	for _, fp := range frameworkPoints {
		for _, name := range exp.At[fp.at] {
			// nil where kube-scheduler's plugin does what kubesched
			// leaves to the caller (DefaultPreemption's PreEnqueue).
			part := partAt(built[name], fp.point)
			if standIn, ok := standIns[name][fp.point]; ok {
				part = standIn
			}
			if part != nil {
				opts = append(opts, framework.WithPluginAt(fp.point, part, int32(exp.ScoreWeights[name])))
			}
		}
		// Companions run where their plugin runs at their point's
		// partner, after the plugins laid out there.
		for _, other := range frameworkPoints {
			for _, name := range exp.At[other.at] {
				if companions[name][fp.point] == other.point {
					opts = append(opts, framework.WithPluginAt(fp.point, partAt(built[name], fp.point), 0))
				}
			}
		}
	}
	return opts, nil
}

// pointsOf returns the extension points a plugin of parts ps implements
// in a configuration: its parts' but for companions, and the points
// elsewhere that kubesched does not run.
func pointsOf(ps []fwk.Plugin, elsewhere []schedconfig.Point, companions map[framework.ExtensionPoint]framework.ExtensionPoint) map[schedconfig.Point]bool {
	points := map[schedconfig.Point]bool{}
	for _, at := range elsewhere {
		points[at] = true
	}
	for _, fp := range frameworkPoints {
		if _, companion := companions[fp.point]; !companion && partAt(ps, fp.point) != nil {
			points[fp.at] = true
		}
	}
	return points
}

// partAt returns the part of a plugin that takes part at point, or nil.
func partAt(ps []fwk.Plugin, point framework.ExtensionPoint) fwk.Plugin {
	for _, p := range ps {
		if framework.Implements(p, point) {
			return p
		}
	}
	return nil
}

// buildExtenders builds the configuration's extenders, and makes the
// resources they manage with ignoredByScheduler NodeResourcesFit's
// ignoredResources in every profile, as kube-scheduler does.
func buildExtenders(cfgs []configv1.Extender, profiles []configv1.KubeSchedulerProfile) ([]fwk.Extender, error) {
	if len(cfgs) == 0 {
		return nil, nil
	}
	if err := extender.Validate(cfgs...); err != nil {
		return nil, err
	}
	var out []fwk.Extender
	for _, c := range cfgs {
		e, err := extender.New(c)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	ignored := extender.IgnoredResources(cfgs...)
	if len(ignored) == 0 {
		return out, nil
	}
	for i := range profiles {
		found := false
		for k := range profiles[i].PluginConfig {
			pc := &profiles[i].PluginConfig[k]
			if pc.Name != names.NodeResourcesFit {
				continue
			}
			args, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs)
			if !ok {
				return nil, fmt.Errorf("want args to be of type NodeResourcesFitArgs, got %T", pc.Args.Object)
			}
			args.IgnoredResources = ignored
			found = true
			break
		}
		if !found {
			return nil, errors.New("can't find NodeResourcesFitArgs in plugin config")
		}
	}
	return out, nil
}
