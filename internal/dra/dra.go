// Package dra is kube-scheduler's DynamicResources plugin without an API
// server: it finds a pod's ResourceClaims, checks the ones already
// allocated against each node, and allocates the others per node with
// k8s.io/dynamic-resource-allocation's structured allocator, the one
// kube-scheduler itself runs. The filter and score packages wrap it.
package dra

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Defaults of kube-scheduler's DynamicResourcesArgs.
const (
	DefaultFilterTimeout  = 10 * time.Second
	DefaultBindingTimeout = 600 * time.Second
)

// Reasons, worded as kube-scheduler's.
const (
	ReasonNotAvailable   = "resourceclaim not available on the node"
	ReasonCannotAllocate = "cannot allocate all claims"
)

// Args configures the plugin. The zero value is kube-scheduler's
// default configuration and feature gates.
type Args struct {
	// FilterTimeout bounds one node's allocation attempt; 0 means
	// DefaultFilterTimeout, a negative value no limit.
	FilterTimeout time.Duration
	// BindingTimeout is how long an allocated claim may wait for its
	// devices' binding conditions before the nodes reject it; 0 means
	// DefaultBindingTimeout.
	BindingTimeout time.Duration
	// Now is the clock binding timeouts are measured with; nil is
	// time.Now.
	Now func() time.Time
}

// Plugin is the configured plugin, shared by the filter and the scorer.
type Plugin struct {
	filterTimeout  time.Duration
	bindingTimeout time.Duration
	now            func() time.Time
	features       structured.Features
	cel            *cel.Cache
	// memo remembers allocations per node across cycles.
	memo memo
}

// allocatorFeatures are kube-scheduler's default gates, as its allocator
// sees them.
var allocatorFeatures = structured.Features{
	AdminAccess:            true,
	PrioritizedList:        true,
	PartitionableDevices:   true,
	DeviceTaints:           true,
	DeviceBindingAndStatus: true,
	ConsumableCapacity:     true,
}

// New returns the plugin configured by args.
func New(args Args) *Plugin {
	p := &Plugin{
		filterTimeout:  args.FilterTimeout,
		bindingTimeout: args.BindingTimeout,
		now:            args.Now,
		features:       allocatorFeatures,
		// kube-scheduler keeps the ten most recent compiled expressions;
		// DRAListTypeAttributes (alpha) is off.
		cel: cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}),
	}
	if p.filterTimeout == 0 {
		p.filterTimeout = DefaultFilterTimeout
	}
	if p.bindingTimeout == 0 {
		p.bindingTimeout = DefaultBindingTimeout
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// StateKey is where PreFilter keeps a pod's [State] for the cycle.
var StateKey = fwk.NewStateKey[*State]()

// State is what PreFilter found for a pod, and what Filter allocated per
// node, read by Score and Reserve.
type State struct {
	// claims are the pod's claims in spec.resourceClaims order, skipping
	// template claims without a generated claim.
	claims []*resourceapi.ResourceClaim
	// availableOn holds, per claim, the node selector of its allocation
	// (nil when unallocated or allocated for every node).
	availableOn []*nodeaffinity.NodeSelector
	// allocator is set when some claim needs allocating; it is built on
	// the first node the memo cannot answer for.
	allocator *lazyAllocator
	// numToAllocate counts claims without allocation.
	numToAllocate int
	// toAllocate are those claims, in claim order, shared by every
	// node's Filter (the allocator only reads them).
	toAllocate []*resourceapi.ResourceClaim
	// prioritized is set when some claim has a request with subrequests,
	// the only ones Score counts.
	prioritized bool
	// world keys the plugin's memo of allocations; nil when the claims
	// to allocate differ per node (DRA-backed extended resources).
	world *world

	// hasExtended is set when the last of claims is the claim for the
	// pod's DRA-backed extended resources.
	hasExtended bool
	// scalars are the pod's scalar requests, kept when it has DRA-backed
	// extended resources.
	scalars map[v1.ResourceName]int64
	// resolver maps extended resources to DeviceClasses.
	resolver *Resolver

	mu sync.Mutex
	// unavailable are the indices of allocated claims some node could not
	// use: claims PostFilter would ask to deallocate.
	unavailable sets.Set[int]
	// allocations holds what Filter allocated on each feasible node.
	allocations map[string]nodeAllocation
}

// nodeAllocation is what Filter allocated on one node.
type nodeAllocation struct {
	// results are the allocations of the claims without allocation, in
	// claim order.
	results []resourceapi.AllocationResult
	// extended is the node's variant of the extended-resource claim, with
	// its requests, and mappings its container-to-request mappings.
	extended *resourceapi.ResourceClaim
	mappings []v1.ContainerExtendedResourceRequest
}

// extendedIndex is the index of the claim for the pod's DRA-backed
// extended resources, or -1.
func (s *State) extendedIndex() int {
	if !s.hasExtended {
		return -1
	}
	return len(s.claims) - 1
}

// Empty reports whether the pod has no claim to check.
func (s *State) Empty() bool { return s == nil || len(s.claims) == 0 }

// Prioritized reports whether some claim has a request with subrequests
// (a prioritized list), the only case in which Score is not 0.
func (s *State) Prioritized() bool { return s != nil && s.prioritized }

// PreEnqueue checks that the pod's claims can be had at all, as
// kube-scheduler does before it tries the pod.
func PreEnqueue(listers fwk.Listers, pod *v1.Pod) *fwk.Status {
	if pod == nil || len(pod.Spec.ResourceClaims) == 0 {
		return nil
	}
	if _, err := PodClaims(listers.ResourceClaims, pod); err != nil {
		return unresolvable(err.Error())
	}
	return nil
}

// PreFilter looks the pod's claims up and prepares the allocator; when
// the pod asks for DRA-backed extended resources, a claim for them comes
// last (the one an earlier attempt made, or one in memory, without
// requests until Filter sees a node). It returns a nil state and Skip for
// a pod without claims. The cluster's objects come from state's listers;
// with fs.DRADeviceTaintRules, the allocator sees the slices with the
// taints of the DeviceTaintRules listed applied.
func (p *Plugin) PreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, fs feature.Features) (*State, *fwk.Status) {
	listers := state.Listers()
	var claims []*resourceapi.ResourceClaim
	if len(pod.Spec.ResourceClaims) > 0 {
		var err error
		if claims, err = PodClaims(listers.ResourceClaims, pod); err != nil {
			return nil, unresolvable(err.Error())
		}
	}
	s := &State{}
	if MayUseExtendedResources(pod) {
		r, err := ResolverFor(state)
		if err != nil {
			return nil, fwk.AsStatus(err)
		}
		if scalars := extendedRequests(pod, r); scalars != nil {
			var all []*resourceapi.ResourceClaim
			if listers.ResourceClaims != nil {
				if all, err = listers.ResourceClaims.List(labels.Everything()); err != nil {
					return nil, fwk.AsStatus(fmt.Errorf("listing ResourceClaims: %w", err))
				}
			}
			ext := findExtendedClaim(pod, all)
			if ext == nil {
				ext = newExtendedClaim(pod)
			}
			s.hasExtended, s.scalars, s.resolver = true, scalars, r
			claims = append(claims, ext)
		}
	}
	if len(claims) == 0 {
		return nil, skip
	}
	s.claims, s.availableOn = claims, make([]*nodeaffinity.NodeSelector, len(claims))
	for _, c := range claims {
		for _, r := range c.Spec.Devices.Requests {
			s.prioritized = s.prioritized || len(r.FirstAvailable) > 0
		}
	}
	var classes *classIndex
	for i, c := range claims {
		// resourceclaim.CanBeReserved admits any number of consumers in
		// both supported releases, so a claim in use by other pods is never turned down.
		if a := c.Status.Allocation; a != nil {
			if a.NodeSelector != nil {
				sel, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
				if err != nil {
					return nil, fwk.AsStatus(err)
				}
				s.availableOn[i] = sel
			}
			continue
		}
		s.numToAllocate++
		if i == s.extendedIndex() {
			// Its requests, if any, are checked by Filter.
			continue
		}
		if classes == nil {
			var err error
			if classes, err = listClasses(listers.DeviceClasses); err != nil {
				return nil, fwk.AsStatus(err)
			}
		}
		for _, r := range c.Spec.Devices.Requests {
			switch {
			case r.Exactly != nil:
				if st := classes.validate(r.Exactly.DeviceClassName, r.Name); st != nil {
					return nil, st
				}
			case len(r.FirstAvailable) > 0:
				for _, sub := range r.FirstAvailable {
					if st := classes.validate(sub.DeviceClassName, r.Name+"/"+sub.Name); st != nil {
						return nil, st
					}
				}
			default:
				return nil, unresolvable(fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", c.Namespace, c.Name, r.Name))
			}
		}
	}
	if s.numToAllocate == 0 {
		return s, nil
	}
	if classes == nil {
		var err error
		if classes, err = listClasses(listers.DeviceClasses); err != nil {
			return nil, fwk.AsStatus(err)
		}
	}
	allocated, err := p.memo.allocatedState(listers.ResourceClaims, p.features.ConsumableCapacity)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("gather allocation state: %w", err))
	}
	slices, err := listSlices(listers.ResourceSlices)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if fs.DRADeviceTaintRules {
		if slices, err = p.memo.applyTaintRules(slices, listers.DeviceTaintRules); err != nil {
			return nil, fwk.AsStatus(err)
		}
	}
	s.allocator = &lazyAllocator{build: func(ctx context.Context) (structured.Allocator, error) {
		return structured.NewAllocator(ctx, p.features, *allocated.state, classes, slices, p.cel)
	}}
	s.allocations = make(map[string]nodeAllocation, len(state.AllNodes()))
	for _, c := range claims {
		if c.Status.Allocation == nil {
			s.toAllocate = append(s.toAllocate, c)
		}
	}
	if ext := s.extendedIndex(); ext < 0 || claims[ext].Status.Allocation != nil {
		s.world = p.memo.world(s.toAllocate, classes.list, slices, allocated)
	}
	return s, nil
}

// Filter checks the pod's claims against one node and, when some need
// allocating, allocates them there, keeping the result for Score and
// Reserve. s may be nil (no claims).
func (p *Plugin) Filter(ctx context.Context, s *State, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if s.Empty() {
		return nil
	}
	node := ni.Node()
	extended, mappings, status := s.extendedForNode(pod, ni)
	if status != nil {
		return status
	}
	if extended == nil && s.extendedIndex() == 0 {
		// Only extended resources, all offered by the node itself.
		return nil
	}
	var unavailable []int
	for i, c := range s.claims {
		if sel := s.availableOn[i]; sel != nil && !sel.Match(node) {
			unavailable = append(unavailable, i)
			continue
		}
		if c.Status.Allocation == nil {
			continue
		}
		ready, err := readyForBinding(c)
		if err != nil || (!ready && p.bindingTimedOut(c)) {
			unavailable = append(unavailable, i)
		}
	}
	var allocations []resourceapi.AllocationResult
	if s.allocator != nil {
		toAllocate := s.toAllocate
		if extended != nil {
			// The node's own variant of the extended-resource claim,
			// always the last to allocate.
			toAllocate = append(slices.Clip(toAllocate[:len(toAllocate)-1]), extended)
		}
		w := s.world
		if extended != nil {
			w = nil
		}
		result, remembered := p.memo.lookup(w, node)
		var err error
		if !remembered {
			result, err = p.allocate(ctx, s.allocator, w, node, toAllocate)
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return fwk.AsStatus(fmt.Errorf("node %s: timed out trying to allocate devices", node.Name))
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			return unresolvable(err.Error())
		case ctx.Err() != nil:
			return unresolvable(fmt.Sprintf("asked by caller to stop allocating devices: %v", context.Cause(ctx)))
		case err != nil:
			return fwk.AsStatus(err)
		case len(result) != len(toAllocate):
			return unresolvable(ReasonCannotAllocate)
		}
		allocations = result
	}
	if s.allocator == nil && len(unavailable) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(unavailable) > 0 {
		if s.unavailable == nil {
			s.unavailable = sets.New[int]()
		}
		s.unavailable.Insert(unavailable...)
		return unresolvable(ReasonNotAvailable)
	}
	s.allocations[node.Name] = nodeAllocation{results: allocations, extended: extended, mappings: mappings}
	return nil
}

// Score is the prioritized-list score of the allocation Filter made on the
// node: for every request with subrequests, 8 minus the position of the
// subrequest chosen, summed over the pod's claims. s may be nil.
func Score(s *State, nodeName string) (int64, *fwk.Status) {
	if s.Empty() || !s.prioritized {
		return 0, nil
	}
	s.mu.Lock()
	na, ok := s.allocations[nodeName]
	s.mu.Unlock()
	if !ok {
		return 0, nil
	}
	allocations := na.results
	var total int64
	next := 0
	for _, c := range s.claims {
		a := c.Status.Allocation
		if a == nil {
			if next >= len(allocations) {
				return 0, fwk.AsStatus(fmt.Errorf("number of allocations %d is smaller than number of claims needing allocation", len(allocations)))
			}
			a = &allocations[next]
			next++
		}
		chosen := sets.New[string]()
		for _, r := range a.Devices.Results {
			if resourceclaim.IsSubRequestRef(r.Request) {
				chosen.Insert(r.Request)
			}
		}
		for _, r := range c.Spec.Devices.Requests {
			if r.Exactly != nil {
				continue
			}
			for i, sub := range r.FirstAvailable {
				if chosen.Has(resourceclaim.CreateSubRequestRef(r.Name, sub.Name)) {
					total += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - i)
				}
			}
		}
	}
	return total, nil
}

// Reserve returns the pod's claims as kube-scheduler writes them when it
// binds the pod to nodeName: copies, each with the pod in
// status.reservedFor, and the claims that needed allocating with Filter's
// allocation on that node and kube-scheduler's finalizer; an allocation
// without a time gets the current one. s may be nil.
//
// The claim for DRA-backed extended resources, when the node needed one,
// comes last, named as the API server could name it (see generatedName),
// with the pod's status.extendedResourceClaimStatus that goes with it.
// When the node offers all of them itself there is no such claim.
func (p *Plugin) Reserve(s *State, pod *v1.Pod, nodeName string) ([]*resourceapi.ResourceClaim, *v1.PodExtendedResourceClaimStatus, *fwk.Status) {
	if s.Empty() {
		return nil, nil, nil
	}
	var na nodeAllocation
	if s.numToAllocate > 0 {
		s.mu.Lock()
		a, ok := s.allocations[nodeName]
		s.mu.Unlock()
		ext := s.extendedIndex()
		onlyExtended := s.numToAllocate == 1 && ext >= 0 && s.claims[ext].Status.Allocation == nil
		switch {
		case (!ok || len(a.results) == 0) && onlyExtended:
			// The node offers the extended resources itself.
			a = nodeAllocation{}
		case !ok || len(a.results) != s.numToAllocate:
			return nil, nil, fwk.AsStatus(fmt.Errorf("claim allocation not found for node %s", nodeName))
		}
		na = a
	}
	out := make([]*resourceapi.ResourceClaim, 0, len(s.claims))
	var extStatus *v1.PodExtendedResourceClaimStatus
	next := 0
	for i, c := range s.claims {
		if i == s.extendedIndex() && c.Status.Allocation == nil {
			if na.extended == nil || len(na.extended.Spec.Devices.Requests) == 0 {
				// Nothing to allocate through DRA on this node.
				next++
				continue
			}
			c = na.extended.DeepCopy()
			c.Name, c.UID = generatedName(pod), ""
			extStatus = &v1.PodExtendedResourceClaimStatus{
				RequestMappings:   slices.Clone(na.mappings),
				ResourceClaimName: c.Name,
			}
		} else {
			c = c.DeepCopy()
		}
		if c.Status.Allocation == nil {
			c.Status.Allocation = na.results[next].DeepCopy()
			next++
			if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
				c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
			}
		}
		if !resourceclaim.IsReservedForPod(pod, c, false) {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{
				Resource: "pods", Name: pod.Name, UID: pod.UID,
			})
		}
		// With DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
		// on, as by default, every claim bound gets a time.
		if c.Status.Allocation.AllocationTimestamp == nil {
			c.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: p.now()}
		}
		out = append(out, c)
	}
	return out, extStatus, nil
}

// lazyAllocator builds the cycle's allocator once, when first needed:
// building it indexes every slice, which a cycle the memo answers for
// entirely does without.
type lazyAllocator struct {
	build func(context.Context) (structured.Allocator, error)
	once  sync.Once
	a     structured.Allocator
	err   error
}

func (l *lazyAllocator) get(ctx context.Context) (structured.Allocator, error) {
	l.once.Do(func() { l.a, l.err = l.build(ctx) })
	return l.a, l.err
}

// allocate runs the allocator on node within the filter timeout and
// remembers its answer for w, unless it was cut short or failed.
func (p *Plugin) allocate(ctx context.Context, l *lazyAllocator, w *world, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	a, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	if p.filterTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.filterTimeout)
		defer cancel()
	}
	result, err := allocate(ctx, a, node, claims)
	if err == nil && ctx.Err() == nil {
		p.memo.remember(w, node, result)
	}
	return result, err
}

// allocate runs the allocator, turning a panic into an error: objects API
// validation would have rejected (a selector without an expression, a
// request without a name) reach a library's listers unchecked, and the
// allocator trusts them.
func allocate(ctx context.Context, a structured.Allocator, node *v1.Node, claims []*resourceapi.ResourceClaim) (result []resourceapi.AllocationResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fmt.Errorf("node %s: allocating devices failed on an invalid ResourceClaim, DeviceClass or ResourceSlice: %v", node.Name, r)
		}
	}()
	return a.Allocate(ctx, node, claims)
}

func hasBindingConditions(a *resourceapi.AllocationResult) bool {
	for _, r := range a.Devices.Results {
		if len(r.BindingConditions) > 0 {
			return true
		}
	}
	return false
}

// readyForBinding reports whether every device of the claim that has
// binding conditions has them all true, or an error when one of its
// binding failure conditions is true.
func readyForBinding(c *resourceapi.ResourceClaim) (bool, error) {
	for _, r := range c.Status.Allocation.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		var status *resourceapi.AllocatedDeviceStatus
		for i := range c.Status.Devices {
			d := &c.Status.Devices[i]
			if d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device {
				status = d
				break
			}
		}
		if status == nil {
			return false, nil
		}
		for _, cond := range r.BindingFailureConditions {
			if f := apimeta.FindStatusCondition(status.Conditions, cond); f != nil && f.Status == metav1.ConditionTrue {
				return false, fmt.Errorf("device binding failed: claim=%s, reason=%s, message=%q", c.Name, f.Reason, f.Message)
			}
		}
		for _, cond := range r.BindingConditions {
			if !apimeta.IsStatusConditionTrue(status.Conditions, cond) {
				return false, nil
			}
		}
	}
	return true, nil
}

// bindingTimedOut reports whether the claim's allocation has waited for
// its binding conditions longer than the binding timeout.
func (p *Plugin) bindingTimedOut(c *resourceapi.ResourceClaim) bool {
	a := c.Status.Allocation
	if a.AllocationTimestamp == nil || !hasBindingConditions(a) {
		return false
	}
	return a.AllocationTimestamp.Add(p.bindingTimeout).Before(p.now())
}

var skip = fwk.NewStatus(fwk.Skip)

func unresolvable(reason string) *fwk.Status {
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason)
}

// claimGetter is the optional fast path of a claim lister.
type claimGetter interface {
	Get(namespace, name string) (*resourceapi.ResourceClaim, error)
}

// PodClaims returns the pod's claims in spec order, or the error
// kube-scheduler turns the pod down with.
func PodClaims(lister fwk.Lister[*resourceapi.ResourceClaim], pod *v1.Pod) ([]*resourceapi.ResourceClaim, error) {
	var all map[[2]string]*resourceapi.ResourceClaim // when listing
	getter, _ := lister.(claimGetter)
	claims := make([]*resourceapi.ResourceClaim, 0, len(pod.Spec.ResourceClaims))
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return nil, err
		}
		if name == nil {
			// A template that deliberately produced no claim.
			continue
		}
		var c *resourceapi.ResourceClaim
		switch {
		case lister == nil:
		case getter != nil:
			c, err = getter.Get(pod.Namespace, *name)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		default:
			if all == nil {
				list, err := lister.List(labels.Everything())
				if err != nil {
					return nil, err
				}
				all = make(map[[2]string]*resourceapi.ResourceClaim, len(list))
				for _, c := range list {
					all[[2]string{c.Namespace, c.Name}] = c
				}
			}
			c = all[[2]string{pod.Namespace, *name}]
		}
		if c == nil {
			// kube-scheduler's assume cache words it so.
			return nil, fmt.Errorf("could not find ResourceClaim %q", pod.Namespace+"/"+*name)
		}
		if c.DeletionTimestamp != nil {
			return nil, fmt.Errorf("resourceclaim %q is being deleted", c.Name)
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, c, false); err != nil {
				return nil, err
			}
		}
		claims = append(claims, c)
	}
	return claims, nil
}

// classIndex is the DeviceClasses by name, as the allocator looks them up.
type classIndex struct {
	list   []*resourceapi.DeviceClass
	byName map[string]*resourceapi.DeviceClass
}

func listClasses(lister fwk.Lister[*resourceapi.DeviceClass]) (*classIndex, error) {
	idx := &classIndex{}
	if lister != nil {
		var err error
		if idx.list, err = lister.List(labels.Everything()); err != nil {
			return nil, err
		}
	}
	idx.byName = make(map[string]*resourceapi.DeviceClass, len(idx.list))
	for _, c := range idx.list {
		idx.byName[c.Name] = c
	}
	return idx, nil
}

// List returns every class.
func (c *classIndex) List() ([]*resourceapi.DeviceClass, error) { return c.list, nil }

// Get returns the class, or a NotFound error as a client-go lister's.
func (c *classIndex) Get(name string) (*resourceapi.DeviceClass, error) {
	if dc, ok := c.byName[name]; ok {
		return dc, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// validate is kube-scheduler's check that a request's class exists.
func (c *classIndex) validate(className, request string) *fwk.Status {
	if className == "" {
		return fwk.AsStatus(fmt.Errorf("request %s: unsupported request type", request))
	}
	if _, ok := c.byName[className]; !ok {
		return unresolvable(fmt.Sprintf("request %s: device class %s does not exist", request, className))
	}
	return nil
}

func listSlices(lister fwk.Lister[*resourceapi.ResourceSlice]) ([]*resourceapi.ResourceSlice, error) {
	if lister == nil {
		return nil, nil
	}
	return lister.List(labels.Everything())
}

// allocatedState collects the devices every allocated claim holds, as
// kube-scheduler's claim tracker does: admin-access results hold nothing;
// with consumable capacity, a result with a share ID holds a share and its
// consumed capacity instead of the whole device.
func allocatedState(claims []*resourceapi.ResourceClaim, consumable bool) *structured.AllocatedState {
	st := &structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID != nil {
				if !consumable {
					st.AllocatedDevices.Insert(id)
					continue
				}
				st.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			st.AllocatedDevices.Insert(id)
		}
	}
	return st
}

// PostFilter is DynamicResources' PostFilter for a pod no node fits: it
// picks, in random order drawn with intN, an allocated claim some node
// could not use and that no other pod holds, and returns it to
// deallocate; failing that, a claim an earlier cycle made for the pod's
// DRA-backed extended resources, to delete. The reasons are
// kube-scheduler's; with quiet, as from v1.37, finding nothing to do
// gives none. A nil s is a pod without claims.
func (p *Plugin) PostFilter(s *State, pod *v1.Pod, intN func(int) int, quiet bool) (deallocate, del *resourceapi.ResourceClaim, status *fwk.Status) {
	nothing := func(reason string) *fwk.Status {
		if quiet {
			return fwk.NewStatus(fwk.Unschedulable)
		}
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	if s.Empty() {
		return nil, nil, nothing("no new claims to deallocate")
	}
	var extended *resourceapi.ResourceClaim
	if i := s.extendedIndex(); i >= 0 {
		extended = s.claims[i]
	}
	staleExtended := extended != nil && extended.Name != ExtendedClaimName
	s.mu.Lock()
	order := sets.List(s.unavailable)
	s.mu.Unlock()
	// kube-scheduler walks a map, in random order; a Fisher-Yates shuffle
	// with the framework's source does the same, reproducibly.
	for i := len(order) - 1; i > 0; i-- {
		j := intN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	for _, i := range order {
		claim := s.claims[i]
		if claim == extended {
			if staleExtended {
				break
			}
			continue
		}
		reserved := claim.Status.ReservedFor
		if len(reserved) == 0 || len(reserved) == 1 && reserved[0].UID == pod.UID {
			c := claim.DeepCopy()
			c.Status.ReservedFor = nil
			c.Status.Allocation = nil
			c.Status.Devices = nil
			return c, nil, fwk.NewStatus(fwk.Unschedulable, "deallocation of ResourceClaim completed")
		}
	}
	if staleExtended {
		return nil, extended.DeepCopy(), fwk.NewStatus(fwk.Unschedulable, "deletion of ResourceClaim completed")
	}
	return nil, nil, nothing("still not schedulable")
}

// celDevice is where dynamic-resource-allocation v0.37 names the device a
// selector's CEL runtime error happened on.
var celDevice = regexp.MustCompile(`(selector #[0-9]+) on device [^:]*(: CEL runtime error: )`)

// celKeyHint is what dynamic-resource-allocation v0.37 adds to a CEL
// runtime error about a missing map key.
const celKeyHint = ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields"

// CELErrorWithoutDevice words an allocator error as
// dynamic-resource-allocation v0.36 did: a selector's CEL runtime error
// without the device it happened on, and without the hint on missing map
// keys. Other messages are returned as they are.
func CELErrorWithoutDevice(msg string) string {
	if !strings.Contains(msg, "CEL runtime error: ") {
		return msg
	}
	return strings.Replace(celDevice.ReplaceAllString(msg, "$1$2"), celKeyHint, "", 1)
}
