package kubesched

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/preemption"
	"github.com/kubesched/kubesched/preenqueue"
	"github.com/kubesched/kubesched/score"
)

// inTreePlugin is one of kube-scheduler's plugins as kubesched runs it.
type inTreePlugin struct {
	// build makes its parts (kubesched splits some plugins into a filter
	// and a score plugin of one name) from its v1 args, or its defaults
	// for nil args.
	build func(args runtime.Object) ([]framework.Plugin, error)
	// elsewhere are the extension points kube-scheduler's plugin also
	// implements that kubesched does not run (binding, queue order,
	// workload placement, preemption's PreEnqueue, VolumeBinding's
	// Reserve).
	elsewhere []schedconfig.Point
	// companions are points where kubesched's parts do, for their own
	// ends, what kube-scheduler's plugin does at another point: the part
	// runs at the key wherever the plugin runs at the value, and the key
	// is not one of the plugin's points in a configuration
	// (ImageLocality's PreScore computes once what its Score uses).
	companions map[framework.ExtensionPoint]framework.ExtensionPoint
}

// parts returns fixed parts.
func parts(ps ...framework.Plugin) func(runtime.Object) ([]framework.Plugin, error) {
	return func(runtime.Object) ([]framework.Plugin, error) { return ps, nil }
}

// argsAs returns args as a T, or T's defaults for nil args.
func argsAs[T any, P interface {
	*T
	runtime.Object
}](plugin string, args runtime.Object) (P, error) {
	if args == nil {
		var zero T
		p := P(&zero)
		schedconfig.SetArgsDefaults(p)
		return p, nil
	}
	a, ok := args.(P)
	if !ok {
		return nil, fmt.Errorf("want args to be of type %sArgs, got %T", plugin, args)
	}
	return a, nil
}

// inTree are kube-scheduler v1.36.3's plugins, as kubesched runs them.
var inTree = map[string]inTreePlugin{
	names.SchedulingGates:   {build: parts(preenqueue.SchedulingGates{})},
	names.PrioritySort:      {build: parts(), elsewhere: []schedconfig.Point{schedconfig.QueueSort}},
	names.DefaultBinder:     {build: parts(), elsewhere: []schedconfig.Point{schedconfig.Bind}},
	names.NodeUnschedulable: {build: parts(filter.NodeUnschedulable{})},
	names.NodeName:          {build: parts(filter.NodeName{})},
	names.TaintToleration:   {build: parts(filter.TaintToleration{}, score.TaintToleration{})},
	names.NodeAffinity: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.NodeAffinityArgs](names.NodeAffinity, args)
		if err != nil {
			return nil, err
		}
		f, err := filter.NewNodeAffinity(a.AddedAffinity)
		if err != nil {
			return nil, err
		}
		s, err := score.NewNodeAffinity(a.AddedAffinity)
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{f, s}, nil
	}},
	names.NodePorts: {build: parts(&filter.NodePorts{})},
	names.NodeResourcesFit: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.NodeResourcesFitArgs](names.NodeResourcesFit, args)
		if err != nil {
			return nil, err
		}
		fa := fitArgs(a)
		f, err := filter.NewNodeResourcesFit(fa)
		if err != nil {
			return nil, err
		}
		s, err := score.NewNodeResourcesFit(fa)
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{f, s}, nil
	}, elsewhere: []schedconfig.Point{schedconfig.PlacementScore}},
	names.VolumeRestrictions: {build: parts(filter.VolumeRestrictions{})},
	names.NodeVolumeLimits:   {build: parts(filter.NodeVolumeLimits{})},
	names.VolumeBinding: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.VolumeBindingArgs](names.VolumeBinding, args)
		if err != nil {
			return nil, err
		}
		s, err := score.NewVolumeBinding(score.VolumeBindingArgs{Shape: shape(a.Shape)})
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{filter.VolumeBinding{}, s}, nil
	}, elsewhere: []schedconfig.Point{schedconfig.Reserve, schedconfig.PreBind}},
	names.VolumeZone: {build: parts(filter.VolumeZone{})},
	names.PodTopologySpread: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.PodTopologySpreadArgs](names.PodTopologySpread, args)
		if err != nil {
			return nil, err
		}
		pa := filter.PodTopologySpreadArgs{DefaultConstraints: a.DefaultConstraints, DefaultingType: filterDefaulting(a.DefaultingType)}
		f, err := filter.NewPodTopologySpread(pa)
		if err != nil {
			return nil, err
		}
		s, err := score.NewPodTopologySpread(pa)
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{f, s}, nil
	}},
	names.InterPodAffinity: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.InterPodAffinityArgs](names.InterPodAffinity, args)
		if err != nil {
			return nil, err
		}
		ia := filter.InterPodAffinityArgs{HardPodAffinityWeight: a.HardPodAffinityWeight}
		if a.IgnorePreferredTermsOfExistingPods {
			ia.IgnorePreferredTermsOfExistingPods = true
		}
		f, err := filter.NewInterPodAffinity(ia)
		if err != nil {
			return nil, err
		}
		s, err := score.NewInterPodAffinity(ia)
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{f, s}, nil
	}},
	names.DynamicResources: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.DynamicResourcesArgs](names.DynamicResources, args)
		if err != nil {
			return nil, err
		}
		var da filter.DynamicResourcesArgs
		if a.FilterTimeout != nil {
			da.FilterTimeout = a.FilterTimeout.Duration
			if da.FilterTimeout == 0 {
				// 0 turns the timeout off, as upstream's 0 does.
				da.FilterTimeout = -1
			}
		}
		if a.BindingTimeout != nil {
			da.BindingTimeout = a.BindingTimeout.Duration
		}
		return []framework.Plugin{filter.NewDynamicResources(da), score.DynamicResources{}}, nil
	}, elsewhere: []schedconfig.Point{schedconfig.PreBind}},
	names.DefaultPreemption: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.DefaultPreemptionArgs](names.DefaultPreemption, args)
		if err != nil {
			return nil, err
		}
		p, err := preemption.NewDefaultPreemption(preemption.DefaultPreemptionArgs{
			MinCandidateNodesPercentage: deref(a.MinCandidateNodesPercentage),
			MinCandidateNodesAbsolute:   deref(a.MinCandidateNodesAbsolute),
		})
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{p}, nil
	}, elsewhere: []schedconfig.Point{schedconfig.PreEnqueue}},
	names.NodeResourcesBalancedAllocation: {build: func(args runtime.Object) ([]framework.Plugin, error) {
		a, err := argsAs[configv1.NodeResourcesBalancedAllocationArgs](names.NodeResourcesBalancedAllocation, args)
		if err != nil {
			return nil, err
		}
		s, err := score.NewNodeResourcesBalancedAllocation(score.NodeResourcesBalancedAllocationArgs{Resources: resources(a.Resources)})
		if err != nil {
			return nil, err
		}
		return []framework.Plugin{s}, nil
	}},
	names.ImageLocality:        {build: parts(&score.ImageLocality{}), companions: map[framework.ExtensionPoint]framework.ExtensionPoint{framework.PreScore: framework.Score}},
	names.NodeDeclaredFeatures: {build: parts(filter.NodeDeclaredFeatures{})},
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// fitArgs converts NodeResourcesFit's v1 args.
func fitArgs(a *configv1.NodeResourcesFitArgs) filter.NodeResourcesFitArgs {
	out := filter.NodeResourcesFitArgs{IgnoredResources: a.IgnoredResources, IgnoredResourceGroups: a.IgnoredResourceGroups}
	if s := a.ScoringStrategy; s != nil {
		out.ScoringStrategy.Type = score.ScoringStrategyType(s.Type)
		out.ScoringStrategy.Resources = resources(s.Resources)
		if r := s.RequestedToCapacityRatio; r != nil {
			out.ScoringStrategy.Shape = shape(r.Shape)
		}
	}
	return out
}

func resources(rs []configv1.ResourceSpec) []score.ResourceSpec {
	var out []score.ResourceSpec
	for _, r := range rs {
		out = append(out, score.ResourceSpec{Name: v1.ResourceName(r.Name), Weight: r.Weight})
	}
	return out
}

func shape(points []configv1.UtilizationShapePoint) []score.UtilizationShapePoint {
	var out []score.UtilizationShapePoint
	for _, p := range points {
		out = append(out, score.UtilizationShapePoint{Utilization: p.Utilization, Score: p.Score})
	}
	return out
}

func filterDefaulting(t configv1.PodTopologySpreadConstraintsDefaulting) filter.PodTopologySpreadDefaultingType {
	return filter.PodTopologySpreadDefaultingType(t)
}
