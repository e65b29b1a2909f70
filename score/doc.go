// Package score holds kube-scheduler's Score plugins: each ranks the nodes
// that passed filtering, in [framework.MinNodeScore, framework.MaxNodeScore]
// after normalization. A plugin that also filters has the same name here and
// in package filter, and both share one matching helper.
//
// A plugin's zero value is kube-scheduler's default. Plugins that take
// arguments are configured by a New function that takes kube-scheduler's
// own args type from k8s.io/kube-scheduler/config/v1, as a
// KubeSchedulerConfiguration's pluginConfig holds it: nil args and unset
// fields take kube-scheduler's defaults, and invalid ones are an error in
// kube-scheduler's words.
package score
