// Package names holds kube-scheduler's plugin names, as they appear in
// Status.Plugin, Diagnosis.UnschedulablePlugins and PluginScore.Name.
package names

// Plugin names of kube-scheduler v1.37.2's default profile.
const (
	NodeUnschedulable               = "NodeUnschedulable"
	NodeName                        = "NodeName"
	TaintToleration                 = "TaintToleration"
	NodeAffinity                    = "NodeAffinity"
	NodePorts                       = "NodePorts"
	NodeResourcesFit                = "NodeResourcesFit"
	VolumeRestrictions              = "VolumeRestrictions"
	NodeVolumeLimits                = "NodeVolumeLimits"
	VolumeBinding                   = "VolumeBinding"
	VolumeZone                      = "VolumeZone"
	PodTopologySpread               = "PodTopologySpread"
	InterPodAffinity                = "InterPodAffinity"
	NodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation"
	ImageLocality                   = "ImageLocality"
	SchedulingGates                 = "SchedulingGates"
	NodeDeclaredFeatures            = "NodeDeclaredFeatures"
	DynamicResources                = "DynamicResources"
	DefaultPreemption               = "DefaultPreemption"
	// PrioritySort (QueueSort) and DefaultBinder (Bind) are in the
	// default profile but decide no placement: kubesched has neither as a
	// plugin (package queue orders pods; binding is the caller's), and a
	// configuration may name them.
	PrioritySort  = "PrioritySort"
	DefaultBinder = "DefaultBinder"
)
