// Package score holds kube-scheduler's Score plugins: each ranks the nodes
// that passed filtering, in [framework.MinNodeScore, framework.MaxNodeScore]
// after normalization. A plugin that also filters has the same name here and
// in package filter, and both share one matching helper.
package score
