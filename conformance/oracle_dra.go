package conformance

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/utils/ptr"
)

// draManager is the DRA manager kube-scheduler's scheduler.New hands to
// its frameworks: upstream's DefaultDRAManager over an assume cache of the
// ResourceClaim informer and a ResourceSlice tracker, built from the same
// feature gates. One thing differs. scheduler.New keeps the extended
// resource cache behind DeviceClassResolver up to date by chaining it
// into the DeviceClass informer's event handler, and what that cache
// holds depends on the order of past events. Of two classes naming the
// same extended resource, the newer (by creationTimestamp, then the
// smaller name) backs it; but the older, when it comes second, is
// dropped whole, its own deviceclass.resource.kubernetes.io/ name too,
// and deleting either class forgets the extended resource. The oracle
// replaces every scenario's objects with the next one's, so it builds the
// cache afresh from the listed DeviceClasses before each cycle instead
// ([draManager.resetResolver]), as a scheduler starting with them would.
type draManager struct {
	*dynamicresources.DefaultDRAManager
	classes resourcelisters.DeviceClassLister
	// resolver is what DeviceClassResolver returns: nil (which resolves
	// nothing) when DRAExtendedResource is off. It is only replaced while
	// no cycle runs.
	resolver *extendedresourcecache.ExtendedResourceCache
}

var _ fwk.SharedDRAManager = (*draManager)(nil)

// newDRAManager builds the DRA manager over factory's informers, so it
// must be called before the factory is started. Its ResourceSlice tracker
// applies DeviceTaintRules to the slices when DRADeviceTaintRules is on, as
// scheduler.New's does; it then learns of slices and rules through event
// handlers, after the informers' caches, which [slicesLagging] waits for.
func newDRAManager(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory) (*draManager, error) {
	logger := klog.FromContext(ctx)
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if err := watchDeviceTaintRules(&opts, factory); err != nil {
		return nil, err
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("starting the ResourceSlice tracker: %w", err)
	}
	return &draManager{
		DefaultDRAManager: dynamicresources.NewDRAManager(ctx, claims, tracker, factory),
		classes:           factory.Resource().V1().DeviceClasses().Lister(),
	}, nil
}

// slicesLagging describes the first way m's view of ResourceSlices falls
// behind want, or returns "" when it has caught up. With
// DRADeviceTaintRules a DRA manager lists them from a ResourceSlice
// tracker, which learns of slices and DeviceTaintRules through event
// handlers, after the informers' caches, and hands out each slice with
// the rules' taints applied (see [withTaintRules]), in an order of its
// own.
func slicesLagging(m fwk.SharedDRAManager, want map[objectKey]runtime.Object) string {
	slices, err := m.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return err.Error()
	}
	rules := utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules)
	wantSlices := map[string]*resourceapi.ResourceSlice{}
	for _, obj := range want {
		if slice, ok := obj.(*resourceapi.ResourceSlice); ok {
			if rules {
				slice = withTaintRules(slice, want)
			}
			wantSlices[slice.Name] = slice
		}
	}
	for _, slice := range slices {
		w, ok := wantSlices[slice.Name]
		if !ok {
			return fmt.Sprintf("the ResourceSlice tracker still has %s", slice.Name)
		}
		if !sameObject(taintsSorted(slice), taintsSorted(w)) {
			return fmt.Sprintf("the ResourceSlice tracker has old contents or taints of %s", slice.Name)
		}
	}
	if len(slices) != len(wantSlices) {
		return fmt.Sprintf("the ResourceSlice tracker has %d of %d ResourceSlices", len(slices), len(wantSlices))
	}
	return ""
}

// taintsSorted returns slice with every device's taints in one order, a
// copy when that changes any.
func taintsSorted(slice *resourceapi.ResourceSlice) *resourceapi.ResourceSlice {
	added := func(t resourceapi.DeviceTaint) int64 {
		if t.TimeAdded == nil {
			return 0
		}
		return t.TimeAdded.UnixNano()
	}
	compare := func(a, b resourceapi.DeviceTaint) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Value, b.Value),
			strings.Compare(string(a.Effect), string(b.Effect)), cmp.Compare(added(a), added(b)))
	}
	out := slice
	for i, d := range slice.Spec.Devices {
		if slices.IsSortedFunc(d.Taints, compare) {
			continue
		}
		if out == slice {
			out = slice.DeepCopy()
		}
		slices.SortStableFunc(out.Spec.Devices[i].Taints, compare)
	}
	return out
}

// DeviceClassResolver maps extended resource names to the DeviceClasses
// backing them, as of the last [draManager.resetResolver].
func (m *draManager) DeviceClassResolver() fwk.DeviceClassResolver {
	return m.resolver
}

// resetResolver rebuilds the extended resource cache from the DeviceClass
// informer's cache, adding the classes in name order, as the informer's
// first list delivers them to a scheduler starting up. The caller makes
// sure that no cycle runs.
func (m *draManager) resetResolver(ctx context.Context) error {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
		m.resolver = nil
		return nil
	}
	classes, err := m.classes.List(labels.Everything())
	if err != nil {
		return err
	}
	slices.SortFunc(classes, func(a, b *resourceapi.DeviceClass) int { return strings.Compare(a.Name, b.Name) })
	resolver := extendedresourcecache.NewExtendedResourceCache(klog.FromContext(ctx))
	for _, class := range classes {
		resolver.OnAdd(class, true)
	}
	m.resolver = resolver
	return nil
}

// claimsLagging describes the first way m's view of ResourceClaims falls
// behind want, or returns "" when it has caught up. A DRA manager's claim
// assume cache and its tracker of allocated devices learn of changes
// through informer event handlers, after the informer's own cache has.
// Slices and classes are listed straight from the informers' caches,
// which [clusterObjects] watches itself.
func claimsLagging(m fwk.SharedDRAManager, want map[objectKey]runtime.Object) string {
	wantClaims := map[string]*resourceapi.ResourceClaim{}
	for key, obj := range want {
		if claim, ok := obj.(*resourceapi.ResourceClaim); ok && key.kind == resourceClaimKind {
			wantClaims[key.namespace+"/"+key.name] = claim
		}
	}
	claims, err := m.ResourceClaims().List()
	if err != nil {
		return err.Error()
	}
	for _, claim := range claims {
		w, ok := wantClaims[claim.Namespace+"/"+claim.Name]
		if !ok {
			return fmt.Sprintf("the DRA manager still has ResourceClaim %s/%s", claim.Namespace, claim.Name)
		}
		if !sameObject(claim, w) {
			return fmt.Sprintf("the DRA manager has old contents of ResourceClaim %s/%s", claim.Namespace, claim.Name)
		}
	}
	if len(claims) != len(wantClaims) {
		return fmt.Sprintf("the DRA manager has %d of %d ResourceClaims", len(claims), len(wantClaims))
	}
	got, err := m.ResourceClaims().GatherAllocatedState()
	if err != nil {
		// Also when the state changed while it was gathered.
		return fmt.Sprintf("the DRA manager's allocated devices: %v", err)
	}
	if diff := allocatedStateDiff(got, allocatedStateOf(wantClaims)); diff != "" {
		return "the DRA manager's allocated devices " + diff
	}
	return ""
}

// resolverLagging describes the first DeviceClass of want that r (the
// extended resource cache of scheduler.New's DRA manager) has not seen
// yet, or returns "" when there is none. scheduler.New feeds the cache
// from the DeviceClass informer's event handler, after the informer's own
// cache has the class. It records every class's extended resource name,
// and maps the name every class has of its own
// (deviceclass.resource.kubernetes.io/ and the class's name) to a class
// without an extended resource name; that of a class with one may be left
// out (see [draManager]).
func resolverLagging(r fwk.DeviceClassResolver, want map[objectKey]runtime.Object) string {
	cache, ok := r.(*extendedresourcecache.ExtendedResourceCache)
	if !ok {
		return fmt.Sprintf("the DRA manager's DeviceClassResolver is a %T", r)
	}
	for _, obj := range want {
		class, ok := obj.(*resourceapi.DeviceClass)
		if !ok {
			continue
		}
		if name := class.Spec.ExtendedResourceName; name != nil {
			if cache.GetExtendedResource(class.Name) != *name {
				return fmt.Sprintf("the DRA manager's extended resource cache does not have DeviceClass %s's %s yet", class.Name, *name)
			}
			continue
		}
		if got := cache.GetDeviceClass(v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + class.Name)); got == nil || !sameObject(got, class) {
			return fmt.Sprintf("the DRA manager's extended resource cache does not have DeviceClass %s yet", class.Name)
		}
	}
	return ""
}

// allocatedStateOf returns what upstream's claim tracker holds as
// allocated when claims are the cluster's ResourceClaims, with consumable
// capacity on: every device in an allocation, except those allocated with
// admin access; a device allocated with a share ID as that share, with
// the capacity it consumed.
func allocatedStateOf(claims map[string]*resourceapi.ResourceClaim) *structured.AllocatedState {
	s := &structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID == nil {
				s.AllocatedDevices.Insert(id)
				continue
			}
			s.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				s.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
		}
	}
	return s
}

// allocatedStateDiff describes how got differs from want, or returns "".
// A capacity missing on one side equals zero on the other.
func allocatedStateDiff(got, want *structured.AllocatedState) string {
	if !got.AllocatedDevices.Equal(want.AllocatedDevices) {
		return fmt.Sprintf("are %v, want %v", sets.List(stringSet(got.AllocatedDevices)), sets.List(stringSet(want.AllocatedDevices)))
	}
	if !got.AllocatedSharedDeviceIDs.Equal(want.AllocatedSharedDeviceIDs) {
		return fmt.Sprintf("shared are %v, want %v", sets.List(stringSet(got.AllocatedSharedDeviceIDs)), sets.List(stringSet(want.AllocatedSharedDeviceIDs)))
	}
	zero := resource.Quantity{}
	quantity := func(c structured.ConsumedCapacityCollection, id structured.DeviceID, name resourceapi.QualifiedName) *resource.Quantity {
		if q := c[id][name]; q != nil {
			return q
		}
		return &zero
	}
	for _, c := range []structured.ConsumedCapacityCollection{got.AggregatedCapacity, want.AggregatedCapacity} {
		for id, capacity := range c {
			for name := range capacity {
				if g, w := quantity(got.AggregatedCapacity, id, name), quantity(want.AggregatedCapacity, id, name); g.Cmp(*w) != 0 {
					return fmt.Sprintf("consume %s of %s's %s, want %s", g, id, name, w)
				}
			}
		}
	}
	return ""
}

func stringSet[T interface {
	comparable
	fmt.Stringer
}](s sets.Set[T]) sets.Set[string] {
	out := sets.New[string]()
	for v := range s {
		out.Insert(v.String())
	}
	return out
}
