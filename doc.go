// Package kubesched gives a Go program kube-scheduler's placement decisions
// in-process, without importing k8s.io/kubernetes: the same feasibility, the
// same rejecting plugin and reason strings, and the same per-plugin scores as
// kube-scheduler v1.37.2's default profile, or, on request ([ReleaseFor]),
// an older supported release's (v1.36.3).
//
// The pieces:
//
//   - package [github.com/kubesched/kubesched/nodeinfo] turns nodes and
//     bound pods into the per-node view plugins read ([nodeinfo.Build]);
//   - packages [github.com/kubesched/kubesched/filter] and
//     [github.com/kubesched/kubesched/score] hold the plugins, each callable
//     on its own with a pod and a NodeInfo;
//   - package [github.com/kubesched/kubesched/framework] composes plugins
//     with weights over a parallel worker pool and runs kube-scheduler's
//     scheduling cycle in [framework.Framework.Schedule];
//   - package [github.com/kubesched/kubesched/sim] is a cluster to fork,
//     change and place pods on, decision after decision, for autoscalers
//     and simulations;
//   - this package assembles the default profile ([DefaultPlugins],
//     [DefaultFramework]), builds a KubeSchedulerConfiguration's profiles
//     ([LoadConfig], [FrameworksFromConfig]), and offers [Schedule] for the
//     common case.
//
// A decision needs nothing but the objects:
//
//	nodes := nodeinfo.Build(nodeList, boundPods)
//	res, err := kubesched.Schedule(ctx, pod, nodes)
//	var fitErr *framework.FitError
//	if errors.As(err, &fitErr) {
//		// fitErr.Error() is kube-scheduler's "0/N nodes are available: ..." text;
//		// fitErr.Preemption, when set, names the node to nominate the pod
//		// to and the pods to evict there.
//	}
//
// The default profile is the newest supported kube-scheduler's (v1.37.2),
// plugin for plugin and in its order: SchedulingGates (PreEnqueue),
// NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
// VolumeZone, PodTopologySpread, InterPodAffinity, DynamicResources (also
// a PreEnqueue plugin, and the one that allocates DRA-backed extended
// resources, which NodeResourcesFit leaves to it), DefaultPreemption
// (PostFilter), NodeResourcesBalancedAllocation, ImageLocality and
// NodeDeclaredFeatures. Its queue-sort and bind plugins (PrioritySort,
// DefaultBinder) place nothing: package queue orders pods, and binding is
// the caller's. The README's "What kubesched leaves out" lists exactly
// what else is not reproduced.
//
// PodTopologySpread's default constraints and InterPodAffinity's namespace
// selectors read Services, controllers and Namespaces, the volume plugins
// the storage objects, DynamicResources ResourceClaims, ResourceSlices,
// DeviceClasses and (from v1.37) DeviceTaintRules, DefaultPreemption
// PodDisruptionBudgets; give them with [framework.WithObjects] or a
// controller's listers with [framework.WithListers].
package kubesched
