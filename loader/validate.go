package loader

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
)

// validate returns what the API server's validation refuses in what
// kube-scheduler reads of obj, in its words, all at once (as "[a, b]"
// when more than one): a node's capacity and allocatable; the resources
// of a pod's containers and init containers, its overhead and its
// pod-level resources, and those of the pod template of a workload,
// whose pods would be refused. It reads obj only.
//
// A pod is validated as the API server validates one it creates, after
// defaulting it, so pod-level requests that [Cluster.Default] would set
// are checked too; a template is validated as the pods made of it would
// be. Errors are in a fixed order, by field, whatever the order of maps.
func validate(obj runtime.Object) error {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *v1.Node:
		errs = validateNodeResources(o)
	case *v1.Pod:
		errs = validatePodResources(&o.Spec, podSpec)
	case *v1.ReplicationController:
		if o.Spec.Template != nil {
			errs = validatePodResources(&o.Spec.Template.Spec, templateSpec)
		}
	case *appsv1.ReplicaSet:
		errs = validatePodResources(&o.Spec.Template.Spec, templateSpec)
	case *appsv1.StatefulSet:
		errs = validatePodResources(&o.Spec.Template.Spec, templateSpec)
	case *appsv1.Deployment:
		errs = validatePodResources(&o.Spec.Template.Spec, templateSpec)
	case *appsv1.DaemonSet:
		errs = validatePodResources(&o.Spec.Template.Spec, templateSpec)
	case *batchv1.Job:
		errs = validatePodResources(&o.Spec.Template.Spec, templateSpec)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.ToAggregate()
}

// The paths of the pod specs validate reads.
var (
	podSpec      = field.NewPath("spec")
	templateSpec = field.NewPath("spec", "template", "spec")
)

// validateNodeResources checks a node's capacity and allocatable, as
// the API server's ValidateNodeResources does: each a quantity of its
// resource (their names are not checked).
func validateNodeResources(n *v1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   v1.ResourceList
	}{{"capacity", n.Status.Capacity}, {"allocatable", n.Status.Allocatable}} {
		start := len(errs)
		for name, q := range list.rl {
			if quantityFine(name, &q) {
				continue
			}
			// The API server's path: a child, not a key.
			errs = appendQuantityErrors(errs, name, &q, field.NewPath("status", list.name, string(name)))
		}
		sortErrors(errs[start:])
	}
	return errs
}

// validatePodResources checks the resources of the pod spec at path:
// its overhead, as the limits of a container, each container's, each
// init container's, then the pod-level ones. Ephemeral containers',
// which kube-scheduler does not read, are not.
func validatePodResources(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Overhead != nil {
		errs = validateRequirements(errs, &v1.ResourceRequirements{Limits: spec.Overhead}, resourcesAt{spec: path, in: "overhead"})
	}
	for i := range spec.Containers {
		errs = validateRequirements(errs, &spec.Containers[i].Resources, resourcesAt{spec: path, in: "containers", index: i})
	}
	for i := range spec.InitContainers {
		errs = validateRequirements(errs, &spec.InitContainers[i].Resources, resourcesAt{spec: path, in: "initContainers", index: i})
	}
	if spec.Resources != nil {
		errs = validatePodLevelResources(errs, spec, path)
	}
	return errs
}

// resourcesAt is where a ResourceRequirements is in a pod spec: in is
// "containers" or "initContainers" for a container's, the one at index;
// "resources" for the pod's; "overhead" for the pod's overhead. Its
// path is made only for an error, so that a valid object costs no
// allocation.
type resourcesAt struct {
	spec  *field.Path
	in    string
	index int
}

func (at resourcesAt) path() *field.Path {
	switch at.in {
	case "containers", "initContainers":
		return at.spec.Child(at.in).Index(at.index).Child("resources")
	}
	return at.spec.Child(at.in)
}

func (at resourcesAt) podLevel() bool { return at.in == "resources" }

// key is the path of one resource of the requirements' limits or
// requests.
func (at resourcesAt) key(list string, name v1.ResourceName) *field.Path {
	return at.path().Child(list).Key(string(name))
}

// validateRequirements appends to errs what the API server's
// validateResourceRequirements finds in r: resource names that are
// not a container's (or, at pod level, not cpu, memory or hugepages);
// quantities below zero, or fractional for resources counted in
// units; requests over their limits, or unequal to them where they may
// not be overcommitted (extended resources and hugepages), where a
// limit is required too; hugepages that are not a whole number of
// pages, or without cpu or memory. A limit without a request needs no
// comparing: the API server's defaulting makes the request the limit.
func validateRequirements(errs field.ErrorList, r *v1.ResourceRequirements, at resourcesAt) field.ErrorList {
	start := len(errs)
	var cpuOrMemory, hugePages bool
	for name, q := range r.Limits {
		if !nameFine(name, at.podLevel()) {
			errs = append(errs, nameErrors(name, at.podLevel(), at.key("limits", name))...)
		}
		if !quantityFine(name, &q) {
			errs = appendQuantityErrors(errs, name, &q, at.key("limits", name))
		}
		if isHugePages(name) {
			hugePages = true
			errs = appendPageErrors(errs, name, &q, at.key("limits", name))
		}
		cpuOrMemory = cpuOrMemory || name == v1.ResourceCPU || name == v1.ResourceMemory
	}
	for name, q := range r.Requests {
		if !nameFine(name, at.podLevel()) {
			errs = append(errs, nameErrors(name, at.podLevel(), at.key("requests", name))...)
		}
		if !quantityFine(name, &q) {
			errs = appendQuantityErrors(errs, name, &q, at.key("requests", name))
		}
		limit, limited := r.Limits[name]
		switch {
		case limited && !overcommitAllowed(name) && q.Cmp(limit) != 0:
			// The API server's path: the requests, not the request.
			errs = append(errs, field.Invalid(at.path().Child("requests"), q.String(),
				fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case limited && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(at.path().Child("requests"), q.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !limited && !overcommitAllowed(name):
			errs = append(errs, field.Required(at.path().Child("limits"), "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(name) {
			hugePages = true
			errs = appendPageErrors(errs, name, &q, at.key("requests", name))
		}
		cpuOrMemory = cpuOrMemory || name == v1.ResourceCPU || name == v1.ResourceMemory
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(at.path(), "HugePages require cpu or memory"))
	}
	sortErrors(errs[start:])
	return errs
}

// validatePodLevelResources appends to errs what the API server finds
// in the pod-level resources of spec, at path, once defaulted: those of
// a windows pod at all, claims, what validateRequirements finds, and
// requests under the sum of the containers', hugepages limits under the
// sum of the containers', and containers' limits over the pod's.
func validatePodLevelResources(errs field.ErrorList, spec *v1.PodSpec, path *field.Path) field.ErrorList {
	at := resourcesAt{spec: path, in: "resources"}
	if spec.OS != nil && spec.OS.Name == v1.Windows {
		return append(errs, field.Forbidden(at.path(), "may not be set for a windows pod"))
	}
	if spec.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(at.path().Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	pod := defaultedResources(spec)
	r := pod.Spec.Resources
	errs = validateRequirements(errs, r, at)
	start := len(errs)
	for name, sum := range resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if request, ok := r.Requests[name]; ok && sum.Cmp(request) > 0 {
			errs = append(errs, field.Invalid(at.key("requests", name), request.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", sum.String())))
		}
	}
	for name, sum := range resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{}) {
		if limit, ok := r.Limits[name]; ok && isHugePages(name) && sum.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(at.key("limits", name), limit.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container limits of %s", sum.String())))
		}
	}
	for i := range pod.Spec.Containers {
		for name, limit := range pod.Spec.Containers[i].Resources.Limits {
			if podLimit, ok := r.Limits[name]; ok && limit.Cmp(podLimit) > 0 {
				// The API server's path, under the pod's resources.
				errs = append(errs, field.Invalid(at.path().Child("containers").Index(i).Key(string(name)).Child("limits"), limit.String(),
					fmt.Sprintf("must be less than or equal to pod limits of %s", podLimit.String())))
			}
		}
	}
	sortErrors(errs[start:])
	return errs
}

// defaultedResources returns a pod of spec's containers and resources,
// copied, with what Default sets of them: containers' requests from
// their limits, then pod-level requests.
func defaultedResources(spec *v1.PodSpec) *v1.Pod {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: slices.Clone(spec.InitContainers),
		Containers:     slices.Clone(spec.Containers),
		Resources:      spec.Resources.DeepCopy(),
	}}
	for _, containers := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			containers[i].Resources = *containers[i].Resources.DeepCopy()
			requestsFromLimits(&containers[i].Resources)
		}
	}
	podLevelRequests(pod)
	return pod
}

// quantityFine says whether q is an amount of name the API server
// accepts, quickly: what appendQuantityErrors would find nothing in.
func quantityFine(name v1.ResourceName, q *resource.Quantity) bool {
	return q.Sign() >= 0 && (q.MilliValue()%1000 == 0 || !countedInUnits(name))
}

// appendQuantityErrors appends what the API server's
// ValidateResourceQuantityValue finds in q as an amount of name.
func appendQuantityErrors(errs field.ErrorList, name v1.ResourceName, q *resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), apivalidation.IsNegativeErrorMsg))
	}
	if countedInUnits(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be an integer"))
	}
	return errs
}

// appendPageErrors appends an error for a quantity of hugepages that is
// not a whole number of their pages, which a pod the API server creates
// may not have.
func appendPageErrors(errs field.ErrorList, name v1.ResourceName, q *resource.Quantity, path *field.Path) field.ErrorList {
	page, err := resource.ParseQuantity(strings.TrimPrefix(string(name), v1.ResourceHugePagesPrefix))
	if err == nil && page.Sign() > 0 && page.MilliValue()%1000 == 0 && q.Value()%page.Value() == 0 {
		return errs
	}
	return append(errs, field.Invalid(path, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name)))
}

// nameFine says whether name is a resource a container (or at pod
// level, a pod) may ask for, quickly for the usual ones.
func nameFine(name v1.ResourceName, podLevel bool) bool {
	switch name {
	case v1.ResourceCPU, v1.ResourceMemory:
		return true
	case v1.ResourceEphemeralStorage:
		return !podLevel
	}
	return len(nameErrors(name, podLevel, nil)) == 0
}

// nameErrors are what the API server finds wrong with name, at path, as
// a container's resource (ValidateContainerResourceName) or a pod's
// (validatePodResourceName).
func nameErrors(name v1.ResourceName, podLevel bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	unqualified := !strings.Contains(string(name), "/")
	if len(errs) == 0 && unqualified && !standardResources.Has(name) && !isQuotaHugePages(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	switch {
	case podLevel:
		if len(errs) == 0 && !resourcehelper.IsSupportedPodLevelResource(name) {
			errs = append(errs, field.NotSupported(path, name, sets.List(resourcehelper.SupportedPodLevelResources())))
		}
	case unqualified:
		if !standardContainerResources.Has(name) && !isHugePages(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	case !native(name) && !extended(name):
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// The API server's sets of resource names.
var (
	standardContainerResources = sets.New(v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage)
	// standardResources are those known without a domain, anywhere.
	standardResources = sets.New(
		v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage,
		v1.ResourceRequestsCPU, v1.ResourceRequestsMemory, v1.ResourceRequestsEphemeralStorage,
		v1.ResourceLimitsCPU, v1.ResourceLimitsMemory, v1.ResourceLimitsEphemeralStorage,
		v1.ResourcePods, v1.ResourceQuotas, v1.ResourceServices, v1.ResourceReplicationControllers,
		v1.ResourceSecrets, v1.ResourceConfigMaps, v1.ResourcePersistentVolumeClaims, v1.ResourceStorage,
		v1.ResourceRequestsStorage, v1.ResourceServicesNodePorts, v1.ResourceServicesLoadBalancers,
	)
	// unitResources are the standard resources counted in units.
	unitResources = sets.New(
		v1.ResourcePods, v1.ResourceQuotas, v1.ResourceServices, v1.ResourceReplicationControllers,
		v1.ResourceSecrets, v1.ResourceConfigMaps, v1.ResourcePersistentVolumeClaims,
		v1.ResourceServicesNodePorts, v1.ResourceServicesLoadBalancers,
	)
)

func isQuotaHugePages(name v1.ResourceName) bool {
	return isHugePages(name) || strings.HasPrefix(string(name), v1.ResourceRequestsHugePagesPrefix)
}

// native says whether name is in the kubernetes.io domain, as names
// without a domain are.
func native(name v1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix)
}

// extended says whether name is an extended resource's: of another
// domain, and a valid name once "requests." is put before it, as a quota
// names it.
func extended(name v1.ResourceName) bool {
	return !native(name) && !strings.HasPrefix(string(name), v1.DefaultResourceRequestsPrefix) &&
		len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// overcommitAllowed says whether a request of name may be below its
// limit: not for extended resources or hugepages.
func overcommitAllowed(name v1.ResourceName) bool {
	return native(name) && !isHugePages(name)
}

// countedInUnits says whether name is counted in whole units: extended
// resources and the objects a quota counts.
func countedInUnits(name v1.ResourceName) bool {
	return unitResources.Has(name) || extended(name)
}

// sortErrors puts errors in the order of their fields, then of their
// messages.
func sortErrors(errs field.ErrorList) {
	if len(errs) < 2 {
		return
	}
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.ErrorBody(), b.ErrorBody()))
	})
}
