package kubesched

import (
	"cmp"
	"slices"
	"sync"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/queue"
)

// Release is a kube-scheduler release whose decisions kubesched
// reproduces, with that release's default feature gates: its default
// profile (plugins, order, weights), what its plugins decide differently,
// and its configuration defaults. What differs between the supported
// releases is data in package feature (releases.go there). The top-level
// functions, [DefaultPlugins], [DefaultFramework], [LoadConfig] and
// [FrameworksFromConfig], are the newest release's.
type Release struct {
	r feature.Release
}

// releaseList is every supported release, newest first, built once.
var releaseList = sync.OnceValue(func() []*Release {
	var out []*Release
	for _, r := range feature.Releases() {
		out = append(out, &Release{r: r})
	}
	return out
})

// newest returns the newest supported release.
func newest() *Release { return releaseList()[0] }

// Releases returns the supported releases, newest first.
func Releases() []*Release {
	return append([]*Release(nil), releaseList()...)
}

// ReleaseFor returns the supported release of version: a minor version
// ("1.37", "v1.36") or the supported patch release ("1.37.2",
// "v1.37.2"). Any other version is an error naming the supported ones.
func ReleaseFor(version string) (*Release, error) {
	r, err := feature.ReleaseFor(version)
	if err != nil {
		return nil, err
	}
	for _, rel := range releaseList() {
		if rel.r.Version == r.Version {
			return rel, nil
		}
	}
	panic("kubesched: release " + r.Version + " is not in the release list")
}

// Version returns the patch release reproduced, such as "v1.37.2".
func (r *Release) Version() string { return r.r.Version }

// Features returns what the release's plugins read: its default feature
// gates and the behaviour it changed.
func (r *Release) Features() feature.Features { return r.r.Features }

// DefaultPlugins returns the plugins of the release's default profile, in
// its order and with its weights, built afresh for each call and set to
// the release's features. See the top-level [DefaultPlugins].
func (r *Release) DefaultPlugins() Plugins {
	fs := r.r.Features
	var out Plugins
	for _, p := range r.r.Profile {
		parts, err := buildInTree(p.Name, nil, &fs)
		if err != nil {
			panic("kubesched: building the default " + p.Name + ": " + err.Error())
		}
		// A plugin's filter part before its score part, as a reader
		// expects; they run at different points.
		slices.SortStableFunc(parts, func(a, b fwk.Plugin) int {
			return cmp.Compare(b2i(framework.Implements(a, framework.Score)), b2i(framework.Implements(b, framework.Score)))
		})
		for _, part := range parts {
			var w int32
			if framework.Implements(part, framework.Score) {
				w = 1
				if p.Weight != nil && *p.Weight != 0 {
					w = *p.Weight
				}
			}
			out = append(out, WeightedPlugin{part, w})
		}
	}
	return out
}

// DefaultFramework builds the release's default profile:
// r.DefaultPlugins().Framework(opts...).
func (r *Release) DefaultFramework(opts ...framework.Option) (*framework.Framework, error) {
	return r.DefaultPlugins().Framework(opts...)
}

// LoadConfig reads a KubeSchedulerConfiguration as the release's
// kube-scheduler reads its --config file; see the top-level [LoadConfig].
func (r *Release) LoadConfig(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	return loadConfig(data, r)
}

// FrameworksFromConfig builds one framework per profile of cfg as the
// release's kube-scheduler builds its profiles, from kube-scheduler's
// plugins only; see [Registry.FrameworksFromConfig].
func (r *Release) FrameworksFromConfig(cfg *configv1.KubeSchedulerConfiguration, opts ...framework.Option) (map[string]*framework.Framework, error) {
	return Registry(nil).frameworksFromConfig(r, cfg, opts...)
}

// PluginEvents returns the events on which the release's kube-scheduler
// retries a pod its default plugins rejected, with their queueing hints:
// what the default plugins' EventsToRegister return in the release
// ([fwk.PluginEventsOf]), for [queue.WithPluginEvents]; the hints
// that read cluster objects read l.
func (r *Release) PluginEvents(l fwk.Listers) fwk.PluginEvents {
	return fwk.PluginEventsOf(r.r.Features, l, r.DefaultPlugins().plugins()...)
}

// QueueOptions returns the options that make a [queue.PriorityQueue]
// behave as the release's kube-scheduler with its default profile: the
// release's features ([queue.WithFeatures]), its default plugins'
// registrations and hints ([Release.PluginEvents]) and PreEnqueue plugins
// (SchedulingGates, then DynamicResources), reading l
// ([queue.WithListers]). Options after them in queue.New override them;
// add your own plugins' registrations to PluginEvents(l) for a profile
// of your own.
func (r *Release) QueueOptions(l fwk.Listers) []queue.Option {
	plugins := r.DefaultPlugins().plugins()
	var gates []fwk.PreEnqueuePlugin
	for _, p := range plugins {
		if g, ok := p.(fwk.PreEnqueuePlugin); ok {
			gates = append(gates, g)
		}
	}
	return []queue.Option{
		queue.WithFeatures(r.r.Features),
		queue.WithListers(l),
		queue.WithPluginEvents(fwk.PluginEventsOf(r.r.Features, l, plugins...)),
		queue.WithPreEnqueuePlugins(gates...),
	}
}

// FrameworksFromConfigWith is [Release.FrameworksFromConfig] with the
// user's plugins of reg beside kube-scheduler's.
func (r *Release) FrameworksFromConfigWith(reg Registry, cfg *configv1.KubeSchedulerConfiguration, opts ...framework.Option) (map[string]*framework.Framework, error) {
	return reg.frameworksFromConfig(r, cfg, opts...)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
