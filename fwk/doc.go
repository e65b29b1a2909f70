// Package fwk is kubesched's plugin API: what a scheduling plugin is
// written against, below the framework that composes plugins (package
// framework) and the plugins themselves (packages filter, score,
// preemption, preenqueue). It is the counterpart of kube-scheduler's
// k8s.io/kube-scheduler/framework, which kube-scheduler's own code
// imports as fwk.
//
//   - The plugin interfaces, one method each besides Name: [PreEnqueuePlugin],
//     [PreFilterPlugin] (with [PreFilterExtensions]), [FilterPlugin],
//     [PreScorePlugin], [ScorePlugin], [NormalizeScorePlugin],
//     [PostFilterPlugin] (reading a [NodeToStatus], returning a
//     [PostFilterResult] such as a [Preemption]), [ReservePlugin]; and
//     the optional [NodeLocalPlugin] (which plugins the framework may
//     remember per node), [FilterExplainer] (the facts behind a
//     rejection, a [Detail] or [Shortfall], for people) and
//     [EnqueueExtensions] (the cluster events that may help the pods a
//     plugin rejected, with their queueing hints, for package queue).
//   - [Handle]: what the framework running a cycle offers its plugins
//     ([HandleOf]): re-running the filters on a changed node, its random
//     source, its extenders ([Extender]).
//   - [Status] and [Code]: a plugin's verdict, where nil means success.
//   - [CycleState]: what one cycle computes once and its plugins read many
//     times, in typed slots ([StateKey]), with the cycle's nodes and the
//     cluster objects plugins read ([Listers]).
//   - [Outputs]: what Reserve and PostFilter plugins leave for the
//     caller, under typed keys ([OutputKey]), in an [OutputHolder].
//   - The cluster events of the queue: [ClusterEvent], [ActionType],
//     [EventResource], [QueueingHintFn], [ClusterEventWithHint],
//     [PluginEvents].
//
// Nothing here runs a cycle: a plugin can be called directly, with a
// state from [NewCycleState], as the package example does.
package fwk
