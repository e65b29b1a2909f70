// Package score holds kube-scheduler's Score plugins: each ranks the nodes
// that passed filtering, in [fwk.MinNodeScore, fwk.MaxNodeScore]
// after normalization. A plugin that also filters has the same name here and
// in package filter, and both share one matching helper.
//
// Every plugin is used through a pointer, and is built one of two ways:
// a pointer to its zero value, such as &ImageLocality{}, is the plugin as
// kube-scheduler's default profile has it; a plugin that takes arguments
// also has a New function that takes kube-scheduler's own args type from
// k8s.io/kube-scheduler/config/v1, as a KubeSchedulerConfiguration's
// pluginConfig holds it: nil args and unset fields take kube-scheduler's
// defaults, and invalid ones are an error in kube-scheduler's words.
package score
