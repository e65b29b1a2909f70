package kubesched

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/preemption"
	"github.com/kubesched/kubesched/preenqueue"
	"github.com/kubesched/kubesched/score"
)

// Default score weights of kube-scheduler v1.36.3's default profile.
const (
	TaintTolerationWeight                 = 3
	NodeAffinityWeight                    = 2
	NodeResourcesFitWeight                = 1
	NodeResourcesBalancedAllocationWeight = 1
	ImageLocalityWeight                   = 1
	PodTopologySpreadWeight               = 2
	InterPodAffinityWeight                = 2
	VolumeBindingWeight                   = 1
	DynamicResourcesWeight                = 2
)

// DefaultPlugins returns the plugins of kube-scheduler v1.36.3's default
// profile that kubesched implements, in upstream's order, as options for
// [framework.New]. Filters run cheapest-and-most-decisive first, exactly as
// upstream orders them, so the plugin reported for a rejected node is the
// one kube-scheduler reports.
func DefaultPlugins() []framework.Option {
	return defaultPlugins(&filter.NodeResourcesFit{})
}

// defaultPlugins is DefaultPlugins with fit as NodeResourcesFit's filter.
func defaultPlugins(fit *filter.NodeResourcesFit) []framework.Option {
	return []framework.Option{
		framework.WithPlugin(preenqueue.SchedulingGates{}, 0),
		framework.WithPlugin(filter.NodeUnschedulable{}, 0),
		framework.WithPlugin(filter.NodeName{}, 0),
		framework.WithPlugin(filter.TaintToleration{}, 0),
		framework.WithPlugin(score.TaintToleration{}, TaintTolerationWeight),
		framework.WithPlugin(&filter.NodeAffinity{}, 0),
		framework.WithPlugin(&score.NodeAffinity{}, NodeAffinityWeight),
		framework.WithPlugin(&filter.NodePorts{}, 0),
		framework.WithPlugin(fit, 0),
		framework.WithPlugin(&score.NodeResourcesFit{}, NodeResourcesFitWeight),
		framework.WithPlugin(filter.VolumeRestrictions{}, 0),
		framework.WithPlugin(filter.NodeVolumeLimits{}, 0),
		framework.WithPlugin(filter.VolumeBinding{}, 0),
		framework.WithPlugin(&score.VolumeBinding{}, VolumeBindingWeight),
		framework.WithPlugin(filter.VolumeZone{}, 0),
		framework.WithPlugin(&filter.PodTopologySpread{}, 0),
		framework.WithPlugin(&score.PodTopologySpread{}, PodTopologySpreadWeight),
		framework.WithPlugin(&filter.InterPodAffinity{}, 0),
		framework.WithPlugin(&score.InterPodAffinity{}, InterPodAffinityWeight),
		// Inserted before DefaultPreemption, as upstream inserts it.
		framework.WithPlugin(&filter.DynamicResources{}, 0),
		framework.WithPlugin(score.DynamicResources{}, DynamicResourcesWeight),
		framework.WithPlugin(&preemption.DefaultPreemption{}, 0),
		framework.WithPlugin(&score.NodeResourcesBalancedAllocation{}, NodeResourcesBalancedAllocationWeight),
		framework.WithPlugin(&score.ImageLocality{}, ImageLocalityWeight),
		// Appended last, as upstream appends it: it filters after every
		// other plugin, so a node it rejects was fine for all of them.
		framework.WithPlugin(filter.NodeDeclaredFeatures{}, 0),
	}
}

// DefaultFramework builds kube-scheduler v1.36.3's default profile. opts
// come after the defaults, so they can add plugins (run after the default
// ones) and change settings such as the percentage of nodes to score.
func DefaultFramework(opts ...framework.Option) (*framework.Framework, error) {
	return framework.New(append(DefaultPlugins(), opts...)...)
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
