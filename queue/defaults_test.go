package queue

import (
	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/preemption"
	"github.com/kubesched/kubesched/preenqueue"
)

// The queue knows no plugin; its tests give it the default profile's
// plugins that register events or gate pods, as kubesched.QueueOptions
// does (the root package's tests check that the two agree).

func defaultRegistering() []fwk.Plugin {
	return []fwk.Plugin{
		&preenqueue.SchedulingGates{}, &filter.NodeUnschedulable{}, &filter.NodeName{}, &filter.TaintToleration{},
		&filter.NodeAffinity{}, &filter.NodePorts{}, &filter.NodeResourcesFit{}, &filter.VolumeRestrictions{},
		&filter.NodeVolumeLimits{}, &filter.VolumeBinding{}, &filter.VolumeZone{}, &filter.PodTopologySpread{},
		&filter.InterPodAffinity{}, &filter.DynamicResources{}, &filter.NodeDeclaredFeatures{},
		&preemption.DefaultPreemption{},
	}
}

// defaultPluginEvents are the default plugins' registrations in the
// release of fs.
func defaultPluginEvents(fs feature.Features, l fwk.Listers) fwk.PluginEvents {
	return fwk.PluginEventsOf(fs, l, defaultRegistering()...)
}

// defaultOptions make a queue of the release of fs with the default
// plugins' registrations and PreEnqueue plugins, reading l.
func defaultOptions(fs feature.Features, l fwk.Listers) []Option {
	return []Option{
		WithFeatures(fs), WithListers(l), WithPluginEvents(defaultPluginEvents(fs, l)),
		WithPreEnqueuePlugins(&preenqueue.SchedulingGates{}, &filter.DynamicResources{}),
	}
}
