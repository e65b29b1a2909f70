// Package filter holds kube-scheduler's Filter plugins: each decides whether
// a pod may run on one node and, if not, says why with kube-scheduler's own
// reason strings (exported as ErrReason constants).
//
// Every plugin can be called on its own with a pod and a
// [nodeinfo.NodeInfo]; the [fwk.CycleState] argument may be nil, in
// which case per-pod values are computed on the spot instead of once per
// scheduling cycle.
//
// Every plugin is used through a pointer, and is built one of two ways:
// a pointer to its zero value, such as &NodePorts{}, is the plugin as
// kube-scheduler's default profile has it; a plugin that takes arguments
// also has a New function that takes kube-scheduler's own args type from
// k8s.io/kube-scheduler/config/v1, as a KubeSchedulerConfiguration's
// pluginConfig holds it: nil args and unset fields take kube-scheduler's
// defaults, and invalid ones are an error in kube-scheduler's words.
package filter
