package kubesched

import (
	"context"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/queue"
)

// WeightedPlugin is one plugin of a profile and its score weight, which
// only a score plugin uses.
type WeightedPlugin struct {
	// Plugin is the plugin, or one part of one: see [Plugins].
	Plugin fwk.Plugin
	// Weight multiplies the plugin's scores; ignored for a plugin that
	// does not score.
	Weight int32
}

// Plugins are a profile's plugins, in the order they run at every
// extension point. kube-scheduler's plugins that both filter and score
// are two entries of one name here: a part from package filter and a
// part from package score.
//
// It is an ordinary slice: range over it to see a profile, and use its
// methods, or slice operations, to change one.
type Plugins []WeightedPlugin

// DefaultPlugins returns the plugins of the newest supported
// kube-scheduler's default profile (see [Release]), in its order and with
// its weights, built afresh for each call. Filters run in upstream's
// order, so the plugin reported for a rejected node is the one
// kube-scheduler reports. Edit the list to get a variant:
//
//	mostAllocated, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{
//		ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}})
//	...
//	f, err := kubesched.DefaultPlugins().Without(names.ImageLocality).Replace(mostAllocated, 1).Framework()
//
// A plugin built by hand decides as the newest release unless its
// Features say otherwise; [Release.DefaultPlugins] sets them for an older
// one. A KubeSchedulerConfiguration, through [LoadConfig] and
// [FrameworksFromConfig], gets the same result the way kube-scheduler
// does.
func DefaultPlugins() Plugins {
	return newest().DefaultPlugins()
}

// Without returns ps without every plugin named one of names (both parts
// of a plugin that filters and scores). ps is not modified.
func (ps Plugins) Without(names ...string) Plugins {
	out := make(Plugins, 0, len(ps))
	for _, p := range ps {
		if p.Plugin == nil || !slices.Contains(names, p.Plugin.Name()) {
			out = append(out, p)
		}
	}
	return out
}

// Replace returns ps with plugin, of weight weight, in place of the
// entries of its name that take part in any extension point it
// implements: in the first one's place, the others dropped. Replacing
// NodeResourcesFit's score part so leaves its filter part alone. A plugin
// that replaces nothing is appended. ps is not modified.
func (ps Plugins) Replace(plugin fwk.Plugin, weight int32) Plugins {
	out := make(Plugins, 0, len(ps)+1)
	replaced := false
	for _, p := range ps {
		if !sharesAPoint(p.Plugin, plugin) {
			out = append(out, p)
			continue
		}
		if !replaced {
			out = append(out, WeightedPlugin{plugin, weight})
			replaced = true
		}
	}
	if !replaced {
		out = append(out, WeightedPlugin{plugin, weight})
	}
	return out
}

// sharesAPoint reports whether a and b have one name and take part in one
// extension point.
func sharesAPoint(a, b fwk.Plugin) bool {
	if a == nil || b == nil || a.Name() != b.Name() {
		return false
	}
	for _, fp := range frameworkPoints {
		if framework.Implements(a, fp.point) && framework.Implements(b, fp.point) {
			return true
		}
	}
	return false
}

// Framework builds a framework of ps, with opts after them, as
// [framework.New] with [framework.WithPlugin] for each plugin in order.
func (ps Plugins) Framework(opts ...framework.Option) (*framework.Framework, error) {
	all := make([]framework.Option, 0, len(ps)+len(opts))
	for _, p := range ps {
		all = append(all, framework.WithPlugin(p.Plugin, p.Weight))
	}
	return framework.New(append(all, opts...)...)
}

// plugins returns ps's plugins, in order.
func (ps Plugins) plugins() []fwk.Plugin {
	out := make([]fwk.Plugin, len(ps))
	for i, p := range ps {
		out[i] = p.Plugin
	}
	return out
}

// QueueOptions returns the options that make a [queue.PriorityQueue]
// behave as the newest supported kube-scheduler with its default profile,
// reading l: see [Release.QueueOptions].
func QueueOptions(l fwk.Listers) []queue.Option {
	return newest().QueueOptions(l)
}

// DefaultFramework builds the newest supported kube-scheduler's default
// profile: DefaultPlugins().Framework(opts...). opts come after the defaults, so
// they can add plugins (run after the default ones) and change settings
// such as the percentage of nodes to score.
func DefaultFramework(opts ...framework.Option) (*framework.Framework, error) {
	return DefaultPlugins().Framework(opts...)
}

var defaultFramework = sync.OnceValues(func() (*framework.Framework, error) { return DefaultFramework() })

// Schedule schedules pod on nodes with the default profile, as
// [framework.Framework.Schedule] does. It shares one framework between
// calls, so the search start rotates as in kube-scheduler. That framework
// knows no Services, controllers or Namespaces, so pods get no default
// topology spreading and namespace selectors match nothing; when those
// matter, build one with [DefaultFramework] and [framework.WithObjects] or
// [framework.WithListers].
func Schedule(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*framework.Result, error) {
	f, err := defaultFramework()
	if err != nil {
		return nil, err
	}
	return f.Schedule(ctx, pod, nodes)
}
