package extender

import (
	"fmt"
	"net/url"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Validate checks a KubeSchedulerConfiguration's `extenders:` list as
// kube-scheduler does, and returns every problem found, each with its field
// path (extenders[i]....), or nil. Like kube-scheduler it requires a
// positive weight of an extender that prioritizes, valid extended resource
// names among managedResources, no resource managed twice (within or
// across extenders) and at most one extender that binds. Beyond
// kube-scheduler, which would only fail on every call, it requires urlPrefix
// to be an http or https URL with a host and httpTimeout not to be negative.
// TLS files are checked by [New], which reads them.
func Validate(cfgs ...configv1.Extender) error {
	var errs field.ErrorList
	managed := sets.New[string]()
	binders := 0
	root := field.NewPath("extenders")
	for i := range cfgs {
		errs = append(errs, validate(root.Index(i), &cfgs[i], managed)...)
		if cfgs[i].BindVerb != "" {
			binders++
		}
	}
	if binders > 1 {
		errs = append(errs, field.Invalid(root, fmt.Sprintf("found %d extenders implementing bind", binders), "only one extender can implement bind"))
	}
	return aggregate(errs)
}

// validateOne checks a single extender, with paths starting at "extender".
func validateOne(cfg *configv1.Extender) error {
	return aggregate(validate(field.NewPath("extender"), cfg, sets.New[string]()))
}

// validate checks one extender; managed collects the managed resource
// names seen so far, to find duplicates.
func validate(p *field.Path, cfg *configv1.Extender, managed sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	if u, err := url.Parse(cfg.URLPrefix); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, field.Invalid(p.Child("urlPrefix"), cfg.URLPrefix, "must be an http or https URL with a host, such as http://127.0.0.1:8888"))
	}
	if cfg.PrioritizeVerb != "" && cfg.Weight <= 0 {
		errs = append(errs, field.Invalid(p.Child("weight"), cfg.Weight, "must have a positive weight applied to it"))
	}
	if cfg.HTTPTimeout.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("httpTimeout"), cfg.HTTPTimeout.Duration.String(), "must not be negative"))
	}
	for j, r := range cfg.ManagedResources {
		rp := p.Child("managedResources").Index(j).Child("name")
		errs = append(errs, validateExtendedResourceName(rp, r.Name)...)
		if managed.Has(r.Name) {
			errs = append(errs, field.Invalid(rp, r.Name, "duplicate extender managed resource name"))
		}
		managed.Insert(r.Name)
	}
	return errs
}

func validateExtendedResourceName(p *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) == 0 && !nodeinfo.IsExtendedResourceName(v1.ResourceName(name)) {
		errs = append(errs, field.Invalid(p, name, "is an invalid extended resource name"))
	}
	return errs
}

func aggregate(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid extender configuration: %w", errs.ToAggregate())
}

// IgnoredResources returns the managed resources of cfgs marked
// ignoredByScheduler, in order: the resources kube-scheduler's
// NodeResourcesFit then does not check, since the extenders account for
// them.
func IgnoredResources(cfgs ...configv1.Extender) []string {
	var names []string
	for _, cfg := range cfgs {
		for _, r := range cfg.ManagedResources {
			if r.IgnoredByScheduler {
				names = append(names, r.Name)
			}
		}
	}
	return names
}
