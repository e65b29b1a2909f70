// Package filter holds kube-scheduler's Filter plugins: each decides whether
// a pod may run on one node and, if not, says why with kube-scheduler's own
// reason strings (exported as ErrReason constants).
//
// Every plugin can be called on its own with a pod and a
// [nodeinfo.NodeInfo]; the [framework.CycleState] argument may be nil, in
// which case per-pod values are computed on the spot instead of once per
// scheduling cycle.
//
// A plugin's zero value is kube-scheduler's default. Plugins that take
// arguments are configured by a New function that takes kube-scheduler's
// own args type from k8s.io/kube-scheduler/config/v1, as a
// KubeSchedulerConfiguration's pluginConfig holds it: nil args and unset
// fields take kube-scheduler's defaults, and invalid ones are an error in
// kube-scheduler's words.
package filter
