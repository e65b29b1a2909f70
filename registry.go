package kubesched

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/preemption"
	"github.com/kubesched/kubesched/preenqueue"
	"github.com/kubesched/kubesched/score"
)

// inTreePlugin is one of kube-scheduler's plugins as kubesched runs it.
type inTreePlugin struct {
	// build makes its parts (kubesched splits some plugins into a filter
	// and a score plugin of one name), new ones on each call, from its v1
	// args, or its defaults for nil args.
	build func(args runtime.Object) ([]fwk.Plugin, error)
	// elsewhere are the extension points kube-scheduler's plugin also
	// implements that kubesched does not run (binding, queue order,
	// workload placement, preemption's PreEnqueue).
	elsewhere []schedconfig.Point
	// companions are points where kubesched's parts do, for their own
	// ends, what kube-scheduler's plugin does at another point: the part
	// runs at the key wherever the plugin runs at the value, and the key
	// is not one of the plugin's points in a configuration
	// (ImageLocality's PreScore computes once what its Score uses).
	companions map[framework.ExtensionPoint]framework.ExtensionPoint
}

// parts builds a plugin without args from its parts' constructors.
func parts(news ...func() fwk.Plugin) func(runtime.Object) ([]fwk.Plugin, error) {
	return func(runtime.Object) ([]fwk.Plugin, error) {
		ps := make([]fwk.Plugin, len(news))
		for i, n := range news {
			ps[i] = n()
		}
		return ps, nil
	}
}

// zero returns a new zero value of a plugin type, P being *T.
func zero[T any, P interface {
	*T
	fwk.Plugin
}]() fwk.Plugin {
	return P(new(T))
}

// buildInTree builds kube-scheduler's plugin name from args for a
// release's features fs, read by the parts that read any.
func buildInTree(name string, args runtime.Object, fs *feature.Features) ([]fwk.Plugin, error) {
	ps, err := inTree[name].build(args)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		switch p := p.(type) {
		case *filter.NodeName:
			p.Features = fs
		case *filter.NodeUnschedulable:
			p.Features = fs
		case *filter.TaintToleration:
			p.Features = fs
		case *score.TaintToleration:
			p.Features = fs
		case *filter.NodeVolumeLimits:
			p.Features = fs
		case *filter.InterPodAffinity:
			p.Features = fs
		case *score.InterPodAffinity:
			p.Features = fs
		case *score.VolumeBinding:
			p.Features = fs
		case *score.ImageLocality:
			p.Features = fs
		case *filter.DynamicResources:
			p.Features = fs
		case *preemption.DefaultPreemption:
			p.Features = fs
		}
	}
	return ps, nil
}

// argsAs returns args as a P: nil stays nil (the constructors' defaults),
// another type is kube-scheduler's error.
func argsAs[P runtime.Object](plugin string, args runtime.Object) (P, error) {
	var zero P
	if args == nil {
		return zero, nil
	}
	a, ok := args.(P)
	if !ok {
		return zero, fmt.Errorf("want args to be of type %sArgs, got %T", plugin, args)
	}
	return a, nil
}

// both builds a plugin kubesched splits into a filter and a score part,
// each from the same args.
func both[P runtime.Object, F, S fwk.Plugin](plugin string, newFilter func(P) (F, error), newScore func(P) (S, error)) func(runtime.Object) ([]fwk.Plugin, error) {
	return func(args runtime.Object) ([]fwk.Plugin, error) {
		a, err := argsAs[P](plugin, args)
		if err != nil {
			return nil, err
		}
		f, err := newFilter(a)
		if err != nil {
			return nil, err
		}
		s, err := newScore(a)
		if err != nil {
			return nil, err
		}
		return []fwk.Plugin{f, s}, nil
	}
}

// one builds a plugin of one part from its args.
func one[P runtime.Object, T fwk.Plugin](plugin string, build func(P) (T, error), more ...func() fwk.Plugin) func(runtime.Object) ([]fwk.Plugin, error) {
	return func(args runtime.Object) ([]fwk.Plugin, error) {
		a, err := argsAs[P](plugin, args)
		if err != nil {
			return nil, err
		}
		p, err := build(a)
		if err != nil {
			return nil, err
		}
		ps := []fwk.Plugin{p}
		for _, n := range more {
			ps = append(ps, n())
		}
		return ps, nil
	}
}

// inTree are kube-scheduler's plugins, as kubesched runs them; what a
// release changes in them is in its features.
var inTree = map[string]inTreePlugin{
	names.SchedulingGates:   {build: parts(zero[preenqueue.SchedulingGates])},
	names.PrioritySort:      {build: parts(), elsewhere: []schedconfig.Point{schedconfig.QueueSort}},
	names.DefaultBinder:     {build: parts(), elsewhere: []schedconfig.Point{schedconfig.Bind}},
	names.NodeUnschedulable: {build: parts(zero[filter.NodeUnschedulable])},
	names.NodeName:          {build: parts(zero[filter.NodeName])},
	names.TaintToleration:   {build: parts(zero[filter.TaintToleration], zero[score.TaintToleration])},
	names.NodeAffinity:      {build: both(names.NodeAffinity, filter.NewNodeAffinity, score.NewNodeAffinity)},
	names.NodePorts:         {build: parts(zero[filter.NodePorts])},
	names.NodeResourcesFit: {build: both(names.NodeResourcesFit, filter.NewNodeResourcesFit, score.NewNodeResourcesFit),
		elsewhere: []schedconfig.Point{schedconfig.PlacementScore}},
	names.VolumeRestrictions: {build: parts(zero[filter.VolumeRestrictions])},
	names.NodeVolumeLimits:   {build: parts(zero[filter.NodeVolumeLimits])},
	names.VolumeBinding: {build: one(names.VolumeBinding, score.NewVolumeBinding, zero[filter.VolumeBinding]),
		elsewhere: []schedconfig.Point{schedconfig.PreBind}},
	names.VolumeZone:        {build: parts(zero[filter.VolumeZone])},
	names.PodTopologySpread: {build: both(names.PodTopologySpread, filter.NewPodTopologySpread, score.NewPodTopologySpread)},
	names.InterPodAffinity:  {build: both(names.InterPodAffinity, filter.NewInterPodAffinity, score.NewInterPodAffinity)},
	names.DynamicResources: {build: one(names.DynamicResources, filter.NewDynamicResources, zero[score.DynamicResources]),
		elsewhere: []schedconfig.Point{schedconfig.PreBind}},
	names.DefaultPreemption: {build: one(names.DefaultPreemption, preemption.NewDefaultPreemption),
		elsewhere: []schedconfig.Point{schedconfig.PreEnqueue}},
	names.NodeResourcesBalancedAllocation: {build: one(names.NodeResourcesBalancedAllocation, score.NewNodeResourcesBalancedAllocation)},
	names.ImageLocality:                   {build: parts(zero[score.ImageLocality]), companions: map[framework.ExtensionPoint]framework.ExtensionPoint{framework.PreScore: framework.Score}},
	names.NodeDeclaredFeatures:            {build: parts(zero[filter.NodeDeclaredFeatures])},
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
