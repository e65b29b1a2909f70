package filter

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// DynamicResources' reasons, worded as kube-scheduler's. Other rejections
// carry the allocator's or the claim lookup's own message, for example
// `could not find ResourceClaim "default/gpu"`, `request gpu: device class
// gpu.example.com does not exist` or `cannot allocate all claims`.
const (
	// ErrReasonClaimNotAvailable: an allocated claim cannot be used on the
	// node (its allocation's node selector excludes the node, or its
	// devices' binding failed or timed out).
	ErrReasonClaimNotAvailable = dra.ReasonNotAvailable
	// ErrReasonCannotAllocate: the allocator returned fewer allocations
	// than claims.
	ErrReasonCannotAllocate = dra.ReasonCannotAllocate
)

// DynamicResources rejects nodes where the pod's ResourceClaims cannot be
// had, as kube-scheduler's DynamicResources plugin decides it with its
// default feature gates (prioritized lists, admin access, partitionable
// devices, device taints, consumable capacity and device binding
// conditions on):
//
//   - PreFilter turns the pod down (UnschedulableAndUnresolvable) when a
//     claim does not exist, is being deleted, was generated from a
//     template for another pod, or names a DeviceClass that does not
//     exist; a template claim is found through the pod's
//     status.resourceClaimStatuses;
//   - an allocated claim fits only nodes its allocation's node selector
//     admits ([ErrReasonClaimNotAvailable]), and none once its devices'
//     binding has failed or timed out;
//   - the claims not yet allocated must all be allocatable on the node by
//     k8s.io/dynamic-resource-allocation's structured allocator, the one
//     kube-scheduler runs, from the ResourceSlices and DeviceClasses in
//     [fwk.CycleState.Listers], with the devices every allocated
//     ResourceClaim holds taken. With DRADeviceTaintRules (from v1.37)
//     the DeviceTaintRules listed there taint the devices they select, as
//     kube-scheduler's ResourceSlice tracker applies them: a device with
//     a NoSchedule or NoExecute taint the request does not tolerate is
//     not allocated.
//
// The allocation made for each feasible node is kept for
// score.DynamicResources and for [DynamicResources.Reserve], which puts
// the claims as kube-scheduler would write them in the Result ([Claims]).
//
// The plugin remembers each node's allocation across cycles, keyed on
// everything the allocator reads there (the node object, every slice of
// the pools the node reaches, the classes, what is allocated from those
// pools, the claims' specs), and runs the allocator only where one of
// those changed: a loop that places pod after pod allocates again only on
// the node that took the last one. Objects are keyed by identity, so
// listers must hand out new objects for changes rather than modify them in
// place, as informers and the cache package do. The memory is bounded (at
// most four answers for each of 262,144 nodes) and holds no object alive.
//
// The zero value is ready to use, with the defaults; each plugin has a
// memory of its own. [NewDynamicResources] builds a configured one.
type DynamicResources struct {
	// Features: DRADeviceTaintRules (whether DeviceTaintRules taint
	// devices), PreemptionMessageNamesVictims and CELErrorsNameTheDevice
	// are read. nil is [feature.Default].
	Features *feature.Features
	p        *dra.Plugin
	once     sync.Once
}

var (
	_ fwk.PreEnqueuePlugin = (*DynamicResources)(nil)
	_ fwk.PreFilterPlugin  = (*DynamicResources)(nil)
	_ fwk.FilterPlugin     = (*DynamicResources)(nil)
	_ fwk.ReservePlugin    = (*DynamicResources)(nil)
)

// NewDynamicResources returns the plugin configured by args,
// kube-scheduler's own type: unset fields (and nil args) take
// kube-scheduler's defaults, filterTimeout 10s (0 turns it off) and
// bindingTimeout 600s. args are checked as kube-scheduler checks them, and
// an error lists every problem in its words.
func NewDynamicResources(args *configv1.DynamicResourcesArgs) (*DynamicResources, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	filterTimeout := a.FilterTimeout.Duration
	if filterTimeout == 0 {
		filterTimeout = -1 // no limit, as kube-scheduler's 0
	}
	return &DynamicResources{p: dra.New(dra.Args{FilterTimeout: filterTimeout, BindingTimeout: a.BindingTimeout.Duration})}, nil
}

// plugin returns the configured plugin, made with the defaults on first
// use of a zero value.
func (pl *DynamicResources) plugin() *dra.Plugin {
	pl.once.Do(func() {
		if pl.p == nil {
			pl.p = dra.New(dra.Args{})
		}
	})
	return pl.p
}

// Name returns "DynamicResources".
func (*DynamicResources) Name() string { return names.DynamicResources }

// PreEnqueue turns down, as UnschedulableAndUnresolvable, a pod that
// kube-scheduler does not try yet because one of its claims does not
// exist, is being deleted, or was generated from a template for another
// pod, with the reason PreFilter would give (for example `could not find
// ResourceClaim "default/gpu"`). The claims come from listers.
func (pl *DynamicResources) PreEnqueue(_ context.Context, listers fwk.Listers, pod *v1.Pod) *fwk.Status {
	return dra.PreEnqueue(listers, pod)
}

// PreFilter looks up the pod's claims and, when some need allocating,
// prepares the allocator over the cluster's slices, classes and allocated
// devices, once for all nodes. It returns Skip for a pod without claims,
// a rejection of the pod as described on [DynamicResources], or Error for
// a failing lister, an unparsable allocation node selector or a request
// without a class.
func (pl *DynamicResources) PreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	draPreFilterRan.Write(state, true)
	s, status := pl.plugin().PreFilter(ctx, state, pod, feature.Of(pl.Features))
	if s != nil {
		dra.StateKey.Write(state, s)
	}
	return nil, status
}

// Filter returns nil if the pod's claims can be had on the node, and
// otherwise the rejection described on [DynamicResources], or Error when
// the allocator fails (a malformed CEL selector, for example) or takes
// longer than FilterTimeout. Without PreFilter's result in state it looks
// the claims up itself. It is safe for concurrent use.
func (pl *DynamicResources) Filter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	s, status := pl.state(ctx, state, pod)
	if status != nil {
		return status
	}
	status = pl.plugin().Filter(ctx, s, pod, ni)
	if status.Code() == fwk.Error && !feature.Of(pl.Features).CELErrorsNameTheDevice {
		if msg := dra.CELErrorWithoutDevice(status.Message()); msg != status.Message() {
			return fwk.AsStatus(errors.New(msg))
		}
	}
	return status
}

// Reserve adds to out's claims ([ClaimsOutput], read from a Result with
// [Claims]) the pod's claims as kube-scheduler writes them when it binds
// the pod to nodeName, and sets its extended resource claim status
// ([ExtendedResourceClaimStatusOutput]).
// It returns Error when Filter did not find nodeName feasible.
func (pl *DynamicResources) Reserve(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodeName string, out *fwk.Outputs) *fwk.Status {
	s, status := pl.state(ctx, state, pod)
	if status != nil {
		return status
	}
	claims, ext, status := pl.plugin().Reserve(s, pod, nodeName)
	if out != nil && len(claims) > 0 {
		had, _ := ClaimsOutput.Get(out)
		ClaimsOutput.Set(out, append(had, claims...))
	}
	if out != nil && ext != nil {
		ExtendedResourceClaimStatusOutput.Set(out, ext)
	}
	return status
}

// draPreFilterRan records that PreFilter ran in the cycle, which
// PostFilter needs, as kube-scheduler's does.
var draPreFilterRan = fwk.NewStateKey[bool]()

// PostFilter runs when no node fits the pod, as kube-scheduler's does:
// it chooses at random (with the framework's source) an allocated claim
// of the pod that some node could not use and that no other pod has
// reserved, and asks for its deallocation ([ClaimToDeallocate],
// "deallocation of ResourceClaim completed"); otherwise it asks for the
// deletion of a claim an earlier cycle made for the pod's DRA-backed
// extended resources ([ClaimToDelete], "deletion of ResourceClaim
// completed"). Its status is
// Unschedulable even then, so DefaultPreemption still runs: "no new
// claims to deallocate" for a pod without claims, "still not
// schedulable" when nothing helps. When PreFilter did not run (an earlier
// PreFilter plugin rejected the pod outright) it returns kube-scheduler's
// Error, "not found".
func (pl *DynamicResources) PostFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ fwk.NodeToStatus) (*fwk.PostFilterResult, *fwk.Status) {
	if ran, _ := draPreFilterRan.Read(state); !ran {
		return nil, fwk.AsStatus(errStateNotFound)
	}
	s, _ := dra.StateKey.Read(state)
	intN := rand.IntN
	if h := fwk.HandleOf(state); h != nil {
		intN = h.IntN
	}
	dealloc, del, status := pl.plugin().PostFilter(s, pod, intN, feature.Of(pl.Features).PreemptionMessageNamesVictims)
	if dealloc == nil && del == nil {
		return nil, status
	}
	r := &fwk.PostFilterResult{}
	if dealloc != nil {
		DeallocateClaimOutput.Set(&r.Outputs, dealloc)
	}
	if del != nil {
		DeleteClaimOutput.Set(&r.Outputs, del)
	}
	return r, status
}

// errStateNotFound is kube-scheduler's error for a cycle state without
// the plugin's data.
var errStateNotFound = errors.New("not found")

// state returns PreFilter's state, running PreFilter when it has not.
func (pl *DynamicResources) state(ctx context.Context, state *fwk.CycleState, pod *v1.Pod) (*dra.State, *fwk.Status) {
	if s, ok := dra.StateKey.Read(state); ok {
		return s, nil
	}
	if len(pod.Spec.ResourceClaims) == 0 && !dra.MayUseExtendedResources(pod) {
		return nil, nil
	}
	s, status := pl.plugin().PreFilter(ctx, state, pod, feature.Of(pl.Features))
	if status.IsSkip() {
		status = nil
	}
	if s != nil && state != nil {
		dra.StateKey.Write(state, s)
	}
	return s, status
}
