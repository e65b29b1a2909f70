package schedconfig

// DefaultPluginPoints are the extension points each plugin of
// kube-scheduler v1.36.3's default profile implements, with the default
// feature gates, as its framework lists them (ListPlugins). kubesched's
// plugins must implement the same, or configurations would lay out
// differently; the conformance module checks this table against
// upstream's framework, and the root package's tests check kubesched's
// plugins against it.
var DefaultPluginPoints = map[string][]Point{
	"SchedulingGates":                 {PreEnqueue},
	"PrioritySort":                    {QueueSort},
	"NodeUnschedulable":               {Filter},
	"NodeName":                        {Filter},
	"TaintToleration":                 {Filter, PreScore, Score},
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
