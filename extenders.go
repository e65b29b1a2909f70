package kubesched

import (
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/extender"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
)

// DefaultPluginsWithExtenders returns [DefaultPlugins] with the scheduler
// extenders cfgs, a KubeSchedulerConfiguration's `extenders:` list, set up
// as kube-scheduler sets them up: the list is checked by
// [extender.Validate], each entry becomes an [extender.Client] added with
// [framework.WithExtender], and NodeResourcesFit's filter ignores the
// managed resources marked ignoredByScheduler, since the extenders account
// for them. It returns an error saying which entry is wrong.
func DefaultPluginsWithExtenders(cfgs ...configv1.Extender) ([]framework.Option, error) {
	if err := extender.Validate(cfgs...); err != nil {
		return nil, err
	}
	fit, err := filter.NewNodeResourcesFit(filter.NodeResourcesFitArgs{IgnoredResources: extender.IgnoredResources(cfgs...)})
	if err != nil {
		return nil, err
	}
	opts := defaultPlugins(fit)
	for _, cfg := range cfgs {
		c, err := extender.New(cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, framework.WithExtender(c))
	}
	return opts, nil
}

// DefaultFrameworkWithExtenders builds kube-scheduler v1.36.3's default
// profile with the scheduler extenders cfgs, as
// [DefaultPluginsWithExtenders] sets them up; opts come after, as in
// [DefaultFramework]. A simulation then calls the cluster's extenders
// exactly as kube-scheduler would.
func DefaultFrameworkWithExtenders(cfgs []configv1.Extender, opts ...framework.Option) (*framework.Framework, error) {
	plugins, err := DefaultPluginsWithExtenders(cfgs...)
	if err != nil {
		return nil, err
	}
	return framework.New(append(plugins, opts...)...)
}
