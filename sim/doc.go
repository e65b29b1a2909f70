// Package sim is a simulated cluster for the callers that ask "what would
// kube-scheduler do?" many times over a cluster they change as they go:
// autoscalers, deschedulers, capacity planners.
//
// A [Cluster] holds nodes, the pods bound to them and the objects the
// plugins read. [Cluster.Place] makes kube-scheduler's decision for a pod
// and commits it, so the next decision sees the pod (and the
// ResourceClaims it was allocated); [Cluster.PlaceFirstFit] is
// cluster-autoscaler's first-fit search; [Cluster.PlaceAll] places a
// list; [Cluster.CheckPod] asks whether a pod fits one node given the
// whole cluster, without filtering the others; [Cluster.Estimate] is
// cluster-autoscaler's binpacking estimate of the nodes of a [Template]
// some pending pods need.
//
// [Cluster.Fork] starts changes that [Cluster.Revert] undoes or
// [Cluster.Commit] keeps, nested, each at a cost in proportion to the
// changes, not to the cluster's size: add template nodes, place the
// pending pods, read where they went, revert.
//
// A placement commits what kube-scheduler assumes when it binds a pod:
// the pod on its node, its ResourceClaims allocated, the
// PersistentVolumes its unbound claims match bound to them (spec.claimRef)
// and the claims to provision annotated with the node
// (volume.kubernetes.io/selected-node), so that the next pod is not
// offered the same devices or volumes.
//
// Preemption is acted on when asked: [Cluster.PlacePreempting], or
// [Cluster.PlaceAll] with [Preempt], evicts the victims DefaultPreemption
// chose and schedules the pod again, nominated to their node, as
// kube-scheduler's next cycle does. [Cluster.Place] returns the decision
// in the FitError and acts on nothing.
package sim
