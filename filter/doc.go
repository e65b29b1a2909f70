// Package filter holds kube-scheduler's Filter plugins: each decides whether
// a pod may run on one node and, if not, says why with kube-scheduler's own
// reason strings (exported as ErrReason constants).
//
// Every plugin can be called on its own with a pod and a
// [nodeinfo.NodeInfo]; the [framework.CycleState] argument may be nil, in
// which case per-pod values are computed on the spot instead of once per
// scheduling cycle.
package filter
