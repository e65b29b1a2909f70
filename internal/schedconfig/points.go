package schedconfig

import "github.com/kubesched/kubesched/feature"

// PluginPoints returns the extension points each plugin of a release's
// default profile implements, with its default feature gates fs, as its
// framework lists them (ListPlugins). kubesched's
// plugins must implement the same, or configurations would lay out
// differently; the conformance module checks this table against
// upstream's framework, and the root package's tests check kubesched's
// plugins against it.
func PluginPoints(fs feature.Features) map[string][]Point {
	// v1.37 gave NodeName a PreFilter of its own, and NodeUnschedulable
	// and TaintToleration ones for an alpha gate.
	nodeName, unschedulable, taints := []Point{Filter}, []Point{Filter}, []Point{Filter, PreScore, Score}
	if fs.NodeNamePreFilter {
		nodeName, unschedulable, taints = []Point{PreFilter, Filter}, []Point{PreFilter, Filter}, []Point{PreFilter, Filter, PreScore, Score}
	}
	return map[string][]Point{
		"SchedulingGates":                 {PreEnqueue},
		"PrioritySort":                    {QueueSort},
		"NodeUnschedulable":               unschedulable,
		"NodeName":                        nodeName,
		"TaintToleration":                 taints,
		"NodeAffinity":                    {PreFilter, Filter, PreScore, Score},
		"NodePorts":                       {PreFilter, Filter},
		"NodeResourcesFit":                {PreFilter, Filter, PreScore, Score, PlacementScore},
		"VolumeRestrictions":              {PreFilter, Filter},
		"NodeVolumeLimits":                {PreFilter, Filter},
		"VolumeBinding":                   {PreFilter, Filter, Reserve, PreScore, Score, PreBind},
		"VolumeZone":                      {PreFilter, Filter},
		"PodTopologySpread":               {PreFilter, Filter, PreScore, Score},
		"InterPodAffinity":                {PreFilter, Filter, PreScore, Score},
		"DynamicResources":                {PreEnqueue, PreFilter, Filter, PostFilter, Reserve, Score, PreBind},
		"DefaultPreemption":               {PreEnqueue, PostFilter},
		"NodeResourcesBalancedAllocation": {PreScore, Score},
		"ImageLocality":                   {Score},
		"DefaultBinder":                   {Bind},
		"NodeDeclaredFeatures":            {PreFilter, Filter},
	}
}
