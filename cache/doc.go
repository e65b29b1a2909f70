// Package cache keeps the scheduler's view of the cluster from informer
// events, as kube-scheduler's cache does, and hands it to the framework
// as an incremental [Snapshot].
//
// Feed a [Cache] from informers: nodes with [Cache.AddNode],
// [Cache.UpdateNode] and [Cache.RemoveNode]; pods bound to nodes with
// [Cache.AddPod], [Cache.UpdatePod] and [Cache.RemovePod]. Deletions may
// come as tombstones ([DeletedFinalStateUnknown], or client-go's own,
// which converts). Pods the scheduler has placed but not yet bound are
// "assumed" ([Cache.AssumePod]) so that the next cycles see their node's
// resources taken; [Cache.FinishBinding] and [Cache.ForgetPod] follow the
// bind call, and the pod's informer Add confirms it.
//
// Each scheduling cycle takes [Cache.Snapshot] and passes it to
// Framework.ScheduleSnapshot. A snapshot copies only the
// NodeInfos that changed since the previous one (tracked by
// NodeInfo.Generation) and never changes afterwards, so cycles may read
// it while events keep arriving. A snapshot equals nodeinfo.Build on the
// same nodes and pods, except where kube-scheduler's own cache differs
// from a fresh snapshot: ImageLocality's image sizes and counts (unless
// [WithFreshImageStates]), and a host port two pods held on a node, which
// is free once either leaves.
//
// The package does not import client-go; examples/controller shows the
// informer wiring.
package cache
