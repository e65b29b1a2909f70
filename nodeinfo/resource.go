package nodeinfo

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Requests assumed for a container that states none, used only where a pod's
// size must not count as zero (spreading scores); the same defaults as
// kube-scheduler's.
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is a set of resource amounts in the units the scheduler compares:
// millicores for cpu, bytes for memory and ephemeral storage, whole units for
// everything else.
type Resource struct {
	// MilliCPU, Memory and EphemeralStorage are the amounts of cpu, memory
	// and ephemeral-storage.
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is only meaningful for allocatable: the node's pod capacity.
	AllowedPodNumber int64
	// ScalarResources holds extended resources, hugepages and other named
	// resources. Nil when there are none.
	ScalarResources map[v1.ResourceName]int64
}

// NewResource converts a ResourceList. Names the scheduler does not account
// for (for example unprefixed unknown names) are dropped, as kube-scheduler does.
func NewResource(rl v1.ResourceList) Resource {
	var r Resource
	r.Add(rl)
	return r
}

// Add adds the amounts of rl to r.
func (r *Resource) Add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// AddScalar adds quantity to the named scalar resource.
func (r *Resource) AddScalar(name v1.ResourceName, quantity int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = make(map[v1.ResourceName]int64, 1)
	}
	r.ScalarResources[name] += quantity
}

// addSigned adds (sign=1) or subtracts (sign=-1) o from r.
func (r *Resource) addSigned(o *Resource, sign int64) {
	r.MilliCPU += sign * o.MilliCPU
	r.Memory += sign * o.Memory
	r.EphemeralStorage += sign * o.EphemeralStorage
	for name, q := range o.ScalarResources {
		r.AddScalar(name, sign*q)
	}
}

// Clone returns a deep copy of r.
func (r Resource) Clone() Resource {
	c := r
	if r.ScalarResources != nil {
		c.ScalarResources = make(map[v1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			c.ScalarResources[k] = v
		}
	}
	return c
}

// Get returns the amount of a resource by name, in scheduler units.
func (r *Resource) Get(name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case v1.ResourcePods:
		return r.AllowedPodNumber
	default:
		return r.ScalarResources[name]
	}
}

// IsScalarResourceName reports whether name is accounted as a scalar
// resource: an extended resource (domain-prefixed, not kubernetes.io),
// hugepages, a kubernetes.io-prefixed native resource or an attachable-volume
// count.
func IsScalarResourceName(name v1.ResourceName) bool {
	return IsExtendedResourceName(name) || isHugePageResourceName(name) ||
		isPrefixedNativeResource(name) || strings.HasPrefix(string(name), v1.ResourceAttachableVolumesPrefix)
}

// IsExtendedResourceName reports whether name is an extended resource: it has
// a domain prefix other than kubernetes.io and would be a valid quota name.
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	native := !strings.Contains(s, "/") || isPrefixedNativeResource(name)
	if native || strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

func isPrefixedNativeResource(name v1.ResourceName) bool {
	return strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix)
}

func isHugePageResourceName(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// podRequestOptions are the supported releases' default feature gates as
// they affect request accounting: in-place resize is GA (status resources
// count), and pod-level resources are beta and on.
var podRequestOptions = resourcehelper.PodResourcesOptions{
	UseStatusResources: true,
	InPlacePodLevelResourcesVerticalScalingEnabled: true,
}

// PodRequests returns what a pod asks of a node: the larger of the sum of
// its containers and its largest init step (restartable sidecars counted as
// running alongside), pod-level requests where set, plus overhead. nonZeroCPU
// and nonZeroMem are the same with kube-scheduler's defaults filled in for
// cpu and memory a pod leaves unset; spreading scores use them so that
// request-less pods still weigh something.
func PodRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64) {
	if req, nonZeroCPU, nonZeroMem, ok := plainRequests(pod); ok {
		return req, nonZeroCPU, nonZeroMem
	}
	return helperRequests(pod)
}

// helperRequests is PodRequests through component-helpers, for any pod.
func helperRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64) {
	reqs := resourcehelper.PodRequests(pod, podRequestOptions)
	req = NewResource(reqs)
	// The list always has both entries: defaults stand in only where the
	// pod states nothing; with pod-level requests set, only the missing ones.
	nonMissing := v1.ResourceList{}
	podLevel := resourcehelper.IsPodLevelRequestsSet(pod)
	if _, ok := reqs[v1.ResourceCPU]; !ok || !podLevel {
		nonMissing[v1.ResourceCPU] = *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI)
	}
	if _, ok := reqs[v1.ResourceMemory]; !ok || !podLevel {
		nonMissing[v1.ResourceMemory] = *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI)
	}
	nonZero := reqs
	if len(nonMissing) > 0 {
		opts := podRequestOptions
		opts.NonMissingContainerRequests = nonMissing
		nonZero = resourcehelper.PodRequests(pod, opts)
	}
	cpu, mem := nonZero[v1.ResourceCPU], nonZero[v1.ResourceMemory]
	return req, cpu.MilliValue(), mem.Value()
}

// plainRequests is PodRequests without a map, for the common pod it can
// add up exactly: no init containers, overhead, pod-level resources or
// container statuses (so no resize), and containers requesting only cpu,
// memory and ephemeral storage, in amounts whole at the scale accounted
// (millicores, bytes). It reports false for any other pod.
func plainRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64, ok bool) {
	spec := &pod.Spec
	if len(spec.InitContainers) > 0 || len(spec.Overhead) > 0 || spec.Resources != nil ||
		len(pod.Status.ContainerStatuses) > 0 || len(pod.Status.InitContainerStatuses) > 0 {
		return Resource{}, 0, 0, false
	}
	for i := range spec.Containers {
		requests := spec.Containers[i].Resources.Requests
		cpu, mem := int64(DefaultMilliCPURequest), int64(DefaultMemoryRequest)
		for name, q := range requests {
			var v int64
			exact := false
			switch name {
			case v1.ResourceCPU:
				if v, exact = wholeMilli(q); exact {
					req.MilliCPU += v
					cpu = v
				}
			case v1.ResourceMemory:
				if v, exact = whole(q); exact {
					req.Memory += v
					mem = v
				}
			case v1.ResourceEphemeralStorage:
				if v, exact = whole(q); exact {
					req.EphemeralStorage += v
				}
			}
			if !exact {
				return Resource{}, 0, 0, false
			}
		}
		nonZeroCPU += cpu
		nonZeroMem += mem
	}
	return req, nonZeroCPU, nonZeroMem, true
}

// plainLimit bounds the amounts plainRequests adds, so that no sum of a
// pod's containers overflows.
const plainLimit = 1 << 50

// wholeMilli returns q in millicores when that is exact and small.
func wholeMilli(q resource.Quantity) (int64, bool) {
	m := q.MilliValue()
	if m < 0 || m > plainLimit {
		return 0, false
	}
	return m, q.Cmp(*resource.NewMilliQuantity(m, resource.DecimalSI)) == 0
}

// whole returns q as an integer when that is exact and small.
func whole(q resource.Quantity) (int64, bool) {
	v, ok := q.AsInt64()
	return v, ok && v >= 0 && v <= plainLimit
}
