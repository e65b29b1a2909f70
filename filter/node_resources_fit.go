package filter

import (
	"context"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// NodeResourcesFit's reasons, as kube-scheduler words them. A scalar
// resource (extended resource, hugepages, ...) that does not fit gives
// [InsufficientResourceReason] of its name.
const (
	ErrReasonTooManyPods                  = "Too many pods"
	ErrReasonInsufficientCPU              = "Insufficient cpu"
	ErrReasonInsufficientMemory           = "Insufficient memory"
	ErrReasonInsufficientEphemeralStorage = "Insufficient ephemeral-storage"
)

// InsufficientResourceReason returns NodeResourcesFit's reason for a
// resource that does not fit, "Insufficient <name>".
func InsufficientResourceReason(name v1.ResourceName) string {
	return "Insufficient " + string(name)
}

var (
	_ fwk.PreFilterPlugin = (*NodeResourcesFit)(nil)
	_ fwk.FilterPlugin    = (*NodeResourcesFit)(nil)
)

// NodeResourcesFit rejects nodes without room for the pod: the node's pod
// capacity, and its allocatable cpu, memory, ephemeral storage and scalar
// resources (extended resources, hugepages) minus what its pods already
// request. The pod's request counts its init containers (the largest step),
// restartable sidecars (running alongside), pod-level requests and overhead.
//
// A node too small for the pod even when empty is rejected as
// UnschedulableAndUnresolvable; one that is merely full as Unschedulable,
// since preemption could make room. Running out of pod slots is always
// Unschedulable.
//
// An extended resource that a DeviceClass in the cycle's listers provides
// (by its spec.extendedResourceName or as
// deviceclass.resource.kubernetes.io/<class>) is not checked on a node
// whose allocatable lacks it: DynamicResources allocates it there as
// devices, as kube-scheduler does with DRAExtendedResource on by
// default. [InsufficientResources], which has no listers, checks it.
//
// The zero value checks every resource; use [NewNodeResourcesFit] to
// ignore some. It is safe for concurrent use.
type NodeResourcesFit struct {
	ignoredResources sets.Set[string]
	ignoredGroups    sets.Set[string]
}

// NewNodeResourcesFit returns the filter configured by args,
// kube-scheduler's own type, which score.NewNodeResourcesFit takes too.
// Unset fields (and nil args) take kube-scheduler's defaults; the whole of
// args, scoring strategy included, is then checked as kube-scheduler
// checks it, and an error lists every problem in its words.
func NewNodeResourcesFit(args *configv1.NodeResourcesFitArgs) (*NodeResourcesFit, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &NodeResourcesFit{
		ignoredResources: sets.New(a.IgnoredResources...),
		ignoredGroups:    sets.New(a.IgnoredResourceGroups...),
	}, nil
}

// Name returns "NodeResourcesFit".
func (*NodeResourcesFit) Name() string { return names.NodeResourcesFit }

// InsufficientResource describes one resource a node lacks for a pod.
type InsufficientResource struct {
	// ResourceName names the resource: "pods", "cpu", "memory",
	// "ephemeral-storage", or a scalar resource's name.
	ResourceName v1.ResourceName
	// Reason is the rejection reason, for example "Insufficient cpu".
	Reason string
	// Requested is the pod's request; Used what the node's pods request;
	// Capacity the node's allocatable amount. For pods, Requested is 1.
	Requested, Used, Capacity int64
	// Unresolvable is set when the node could not fit the pod even empty.
	Unresolvable bool
}

// InsufficientResources returns every resource ni lacks for pod, in
// kube-scheduler's order: pods, cpu, memory, ephemeral storage, then scalar
// resources by name. Empty means the pod fits. No resource is ignored. A
// nil pod requests nothing and a nil NodeInfo has nothing allocatable.
//
// It is the check that kube-scheduler's admission of pods into its cache
// (and the kubelet's admission) shares with the filter. It is safe for
// concurrent use.
func InsufficientResources(pod *v1.Pod, ni *nodeinfo.NodeInfo) []InsufficientResource {
	if ni == nil {
		ni = &nodeinfo.NodeInfo{}
	}
	var zero NodeResourcesFit
	st, _ := zero.newState(nil, pod) // no listers, nothing to fail
	return st.appendInsufficient(nil, ni)
}

var resourcesFitStateKey = fwk.NewStateKey[*resourcesFitState]()

// resourcesFitState is a pod's request as the filter checks it.
type resourcesFitState struct {
	milliCPU, memory, ephemeralStorage int64
	// scalars are the non-zero scalar requests not ignored, by name.
	scalars []scalarRequest
}

type scalarRequest struct {
	name     v1.ResourceName
	quantity int64
	reason   string
	// Shared rejections for when this is the only missing resource.
	unschedulable, unresolvable *fwk.Status
	// dra is set when a DeviceClass provides the resource: a node that
	// does not offer it leaves it to DynamicResources.
	dra bool
}

// Rejections for a single missing resource, shared so that rejecting a
// node costs no allocation.
var (
	statusTooManyPods = newFitStatus(fwk.Unschedulable, ErrReasonTooManyPods)
	statusCPU         = [2]*fwk.Status{newFitStatus(fwk.Unschedulable, ErrReasonInsufficientCPU), newFitStatus(fwk.UnschedulableAndUnresolvable, ErrReasonInsufficientCPU)}
	statusMemory      = [2]*fwk.Status{newFitStatus(fwk.Unschedulable, ErrReasonInsufficientMemory), newFitStatus(fwk.UnschedulableAndUnresolvable, ErrReasonInsufficientMemory)}
	statusEphemeral   = [2]*fwk.Status{newFitStatus(fwk.Unschedulable, ErrReasonInsufficientEphemeralStorage), newFitStatus(fwk.UnschedulableAndUnresolvable, ErrReasonInsufficientEphemeralStorage)}
	statusNilPod      = newFitStatus(fwk.Error, "nil pod")
)

func newFitStatus(code fwk.Code, reasons ...string) *fwk.Status {
	return fwk.NewStatus(code, reasons...).WithPlugin(names.NodeResourcesFit)
}

// PreFilter computes the pod's request once for all nodes. It never
// rejects, and returns Error only for a nil pod.
func (pl *NodeResourcesFit) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if pod == nil {
		return nil, statusNilPod
	}
	st, err := pl.newState(state, pod)
	if err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(names.NodeResourcesFit)
	}
	if state != nil {
		resourcesFitStateKey.Write(state, st)
	}
	return nil, nil
}

// Filter returns nil if node has room for pod, otherwise Unschedulable or
// UnschedulableAndUnresolvable with one reason per missing resource (see
// [InsufficientResources]). It returns Error for a NodeInfo without a node
// or a nil pod. Without PreFilter's state it computes the request itself.
// It does not allocate for a node that fits.
func (pl *NodeResourcesFit) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	st, ok := resourcesFitStateKey.Read(state)
	if !ok {
		if pod == nil {
			return statusNilPod
		}
		var err error
		if st, err = pl.newState(state, pod); err != nil {
			return fwk.AsStatus(err).WithPlugin(names.NodeResourcesFit)
		}
	}
	var buf [4]InsufficientResource
	missing := st.appendInsufficient(buf[:0], ni)
	if len(missing) == 0 {
		return nil
	}
	return st.status(missing)
}

// newState computes the pod's request as kube-scheduler's filter does:
// spec only (the pod is not running, so no resize status), pod-level
// requests and overhead included. Requests of zero or less never fail, so
// such scalar requests are dropped here. Scalar resources a DeviceClass in
// state's listers provides are marked; listing the classes is the only
// thing that can fail.
// podRequests returns what pod requests, as component-helpers'
// PodRequests without options works it out. A pod of one container, no
// init containers, no overhead and no pod-level resources, the most
// common kind, requests what its container does: that map is returned
// as it is, spared PodRequests' copies. The caller must not change it.
func podRequests(pod *v1.Pod) v1.ResourceList {
	if len(pod.Spec.Containers) == 1 && len(pod.Spec.InitContainers) == 0 && pod.Spec.Overhead == nil && pod.Spec.Resources == nil {
		return pod.Spec.Containers[0].Resources.Requests
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func (pl *NodeResourcesFit) newState(state *fwk.CycleState, pod *v1.Pod) (*resourcesFitState, error) {
	st := &resourcesFitState{}
	if pod == nil {
		return st, nil
	}
	var resolver *dra.Resolver
	if dra.MayUseExtendedResources(pod) {
		var err error
		if resolver, err = dra.ResolverFor(state); err != nil {
			return nil, err
		}
	}
	for name, q := range podRequests(pod) {
		switch name {
		case v1.ResourceCPU:
			st.milliCPU = q.MilliValue()
		case v1.ResourceMemory:
			st.memory = q.Value()
		case v1.ResourceEphemeralStorage:
			st.ephemeralStorage = q.Value()
		default:
			if q.Value() <= 0 || !nodeinfo.IsScalarResourceName(name) || pl.ignores(name) {
				continue
			}
			reason := InsufficientResourceReason(name)
			st.scalars = append(st.scalars, scalarRequest{
				name:          name,
				quantity:      q.Value(),
				reason:        reason,
				unschedulable: newFitStatus(fwk.Unschedulable, reason),
				unresolvable:  newFitStatus(fwk.UnschedulableAndUnresolvable, reason),
				dra:           resolver.Class(name) != nil,
			})
		}
	}
	// kube-scheduler visits scalars in map order; name order makes the
	// reasons deterministic.
	slices.SortFunc(st.scalars, func(a, b scalarRequest) int { return strings.Compare(string(a.name), string(b.name)) })
	return st, nil
}

// ignores reports whether the filter skips an extended resource, by name
// or by the domain before its '/'. Other scalar resources are always checked.
func (pl *NodeResourcesFit) ignores(name v1.ResourceName) bool {
	if len(pl.ignoredResources) == 0 && len(pl.ignoredGroups) == 0 {
		return false
	}
	if !nodeinfo.IsExtendedResourceName(name) {
		return false
	}
	group, _, _ := strings.Cut(string(name), "/")
	return pl.ignoredResources.Has(string(name)) || pl.ignoredGroups.Has(group)
}

// appendInsufficient appends to dst the resources ni lacks, in
// kube-scheduler's order. Requests of zero or less always fit; a request
// above the node's allocatable amount is unresolvable.
func (st *resourcesFitState) appendInsufficient(dst []InsufficientResource, ni *nodeinfo.NodeInfo) []InsufficientResource {
	alloc, used := ni.Allocatable(), ni.Requested()
	if pods := int64(len(ni.Pods())); pods+1 > alloc.AllowedPodNumber {
		dst = append(dst, InsufficientResource{ResourceName: v1.ResourcePods, Reason: ErrReasonTooManyPods, Requested: 1, Used: pods, Capacity: alloc.AllowedPodNumber})
	}
	check := func(name v1.ResourceName, reason string, req, capacity, inUse int64) {
		if req > 0 && req > capacity-inUse {
			dst = append(dst, InsufficientResource{ResourceName: name, Reason: reason, Requested: req, Used: inUse, Capacity: capacity, Unresolvable: req > capacity})
		}
	}
	check(v1.ResourceCPU, ErrReasonInsufficientCPU, st.milliCPU, alloc.MilliCPU, used.MilliCPU)
	check(v1.ResourceMemory, ErrReasonInsufficientMemory, st.memory, alloc.Memory, used.Memory)
	check(v1.ResourceEphemeralStorage, ErrReasonInsufficientEphemeralStorage, st.ephemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)
	for _, s := range st.scalars {
		if s.dra && alloc.ScalarResources[s.name] <= 0 {
			continue
		}
		check(s.name, s.reason, s.quantity, alloc.ScalarResources[s.name], used.ScalarResources[s.name])
	}
	return dst
}

// status turns missing resources into a rejection, unresolvable if any one
// is, sharing a preallocated status when only one resource is missing.
func (st *resourcesFitState) status(missing []InsufficientResource) *fwk.Status {
	if len(missing) == 1 {
		m := &missing[0]
		i := 0
		if m.Unresolvable {
			i = 1
		}
		switch m.ResourceName {
		case v1.ResourcePods:
			return statusTooManyPods
		case v1.ResourceCPU:
			return statusCPU[i]
		case v1.ResourceMemory:
			return statusMemory[i]
		case v1.ResourceEphemeralStorage:
			return statusEphemeral[i]
		}
		for _, s := range st.scalars {
			if s.name == m.ResourceName {
				return [2]*fwk.Status{s.unschedulable, s.unresolvable}[i]
			}
		}
	}
	code := fwk.Unschedulable
	reasons := make([]string, len(missing))
	for i, m := range missing {
		reasons[i] = m.Reason
		if m.Unresolvable {
			code = fwk.UnschedulableAndUnresolvable
		}
	}
	return newFitStatus(code, reasons...)
}

// NodeLocal reports whether the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin): not when the pod asks for
// an extended resource a DeviceClass may provide, which is judged against
// the cluster's devices.
func (*NodeResourcesFit) NodeLocal(pod *v1.Pod) bool {
	return !dra.MayUseExtendedResources(pod)
}
