package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// objectKinds are the kinds a [Scenario]'s Objects may have: the cluster
// objects kube-scheduler's default plugins read through informers.
// InterPodAffinity reads Namespaces for namespace selectors;
// PodTopologySpread reads Services and controllers for default spreading;
// the volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
// VolumeZone) read the storage kinds; DynamicResources (and
// NodeResourcesFit, for extended resources backed by devices) reads the
// resource.k8s.io kinds; DefaultPreemption reads PodDisruptionBudgets.
// They are also the kinds kubesched's framework.WithObjects accepts, apart
// from PodDisruptionBudgets, which no Filter or Score plugin reads (see
// [schedulingObjects]). The kinds only the linked release reads
// ([linkedKinds]) come last.
var objectKinds = append([]schema.GroupVersionKind{
	v1.SchemeGroupVersion.WithKind("Namespace"),
	v1.SchemeGroupVersion.WithKind("Service"),
	v1.SchemeGroupVersion.WithKind("ReplicationController"),
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
	v1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
	v1.SchemeGroupVersion.WithKind("PersistentVolume"),
	storagev1.SchemeGroupVersion.WithKind("StorageClass"),
	storagev1.SchemeGroupVersion.WithKind("CSINode"),
	storagev1.SchemeGroupVersion.WithKind("CSIDriver"),
	storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity"),
	storagev1.SchemeGroupVersion.WithKind("VolumeAttachment"),
	resourceapi.SchemeGroupVersion.WithKind("ResourceClaim"),
	resourceapi.SchemeGroupVersion.WithKind("ResourceSlice"),
	resourceapi.SchemeGroupVersion.WithKind("DeviceClass"),
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
}, linkedKinds...)

// podKind is the kind of the pods the preemption oracle writes to its fake
// API server besides a scenario's Objects (see [newPreemptionOracle]).
var podKind = v1.SchemeGroupVersion.WithKind("Pod")

// schedulingObjects returns objs without their PodDisruptionBudgets: the
// objects that filtering and scoring read, which kubesched's
// framework.WithObjects takes.
func schedulingObjects(objs []runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, obj := range objs {
		if _, ok := obj.(*policyv1.PodDisruptionBudget); !ok {
			out = append(out, obj)
		}
	}
	return out
}

// resourceClaimKind is replaced rather than updated when it changes, see
// [clusterObjects.install].
var resourceClaimKind = resourceapi.SchemeGroupVersion.WithKind("ResourceClaim")

// objectKind returns obj's kind, or an error when it is not one of
// [objectKinds]. obj's own TypeMeta is not consulted.
func objectKind(obj runtime.Object) (schema.GroupVersionKind, error) {
	return kindAmong(obj, objectKinds)
}

// kindAmong returns obj's kind, or an error when it is not one of kinds.
func kindAmong(obj runtime.Object, kinds []schema.GroupVersionKind) (schema.GroupVersionKind, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	for _, gvk := range gvks {
		if slices.Contains(kinds, gvk) {
			return gvk, nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("a %T is not a cluster object the scheduler reads; want one of %v", obj, kinds)
}

// objectKey identifies a cluster object, as the API server does.
type objectKey struct {
	kind            schema.GroupVersionKind
	namespace, name string
}

func keyOf(obj runtime.Object) (objectKey, error) {
	return keyAmong(obj, objectKinds)
}

// keyAmong is [keyOf] for an object of one of kinds.
func keyAmong(obj runtime.Object, kinds []schema.GroupVersionKind) (objectKey, error) {
	gvk, err := kindAmong(obj, kinds)
	if err != nil {
		return objectKey{}, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return objectKey{}, err
	}
	return objectKey{kind: gvk, namespace: m.GetNamespace(), name: m.GetName()}, nil
}

// clusterObjects keeps the objects of the oracle's fake API server equal to
// a scenario's, and tells when its informers (which upstream's plugins
// list) have caught up.
type clusterObjects struct {
	tracker clienttesting.ObjectTracker
	// kinds are the kinds it keeps: [objectKinds], and for the
	// preemption oracle pods too.
	kinds []schema.GroupVersionKind
	// stores are the informers' caches, by kind.
	stores map[schema.GroupVersionKind]cache.Store
	// installed are the objects last written to the tracker.
	installed map[objectKey]runtime.Object
	// lagging, when set, describes what else, fed by the informers, has
	// not caught up with want yet (the oracle's DRA manager), or returns
	// "" when nothing has.
	lagging func(want map[objectKey]runtime.Object) string
}

// newClusterObjects registers an informer for each of [objectKinds], and
// of extraKinds, with factory, so it must be called before the factory is
// started. Upstream's plugins ask for the same informers, and the factory
// shares them. It makes every write to client's objects, its own and
// upstream's plugins', give the object a new resource version (see
// [versioningTracker]).
func newClusterObjects(client *fake.Clientset, factory informers.SharedInformerFactory, extraKinds ...schema.GroupVersionKind) (*clusterObjects, error) {
	tracker := &versioningTracker{ObjectTracker: client.Tracker()}
	// Ahead of the reaction NewSimpleClientset installed, which writes
	// to the tracker itself.
	client.PrependReactor("*", "*", clienttesting.ObjectReaction(tracker))
	kinds := append(slices.Clone(objectKinds), extraKinds...)
	c := &clusterObjects{tracker: tracker, kinds: kinds, stores: map[schema.GroupVersionKind]cache.Store{}}
	for _, gvk := range kinds {
		informer, err := factory.ForResource(resourceOf(gvk))
		if err != nil {
			return nil, err
		}
		c.stores[gvk] = informer.Informer().GetStore()
	}
	return c, nil
}

func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	// Exact for these kinds: namespaces, services, storageclasses,
	// csistoragecapacities, resourceslices, deviceclasses, ...
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return gvr
}

// informerTimeout bounds the wait for the fake API server's watch events,
// which normally arrive within a millisecond.
const informerTimeout = 5 * time.Second

// watchBatch is how many tracker writes install makes before waiting for
// the informers, well below the fake watchers' buffer of 100 events.
const watchBatch = 50

// install makes objs the fake API server's only cluster objects, creating,
// updating and deleting only what differs from the previous call, and
// waits until the informers list exactly objs. It does not modify objs.
// After an error, the next call starts from what was written.
//
// Every write carries a new resource version (see [versioningTracker]).
// A ResourceClaim that changed is deleted and created anew rather than
// updated, and every deletion comes before every write: upstream's
// tracker of allocated devices ignores an update from one allocation to
// another (the API server never makes one), and holds the devices as a
// set, so a claim deleted after another claim took its device would free
// it. DeviceTaintRules are deleted first and written last, see below.
// Objects are written in the order of objs, which is the order informers'
// event handlers see them in (scheduler.New's extended resource cache
// depends on it).
func (c *clusterObjects) install(ctx context.Context, objs []runtime.Object) error {
	want := make(map[objectKey]runtime.Object, len(objs))
	keys := make([]objectKey, len(objs))
	for i, obj := range objs {
		key, err := keyAmong(obj, c.kinds)
		if err != nil {
			return err
		}
		if _, dup := want[key]; dup {
			return fmt.Errorf("two objects are %s %s/%s", key.kind.Kind, key.namespace, key.name)
		}
		want[key], keys[i] = obj, key
	}
	// The fake watchers hold few events (watch.DefaultChanSize) and panic
	// when full: after every batch of writes, let the informers catch up
	// with the batch. Checking the batch alone keeps install linear in
	// the number of objects; the full comparison comes at the end.
	var batch []objectKey
	settle := func(key objectKey) error {
		if batch = append(batch, key); len(batch) < watchBatch {
			return nil
		}
		err := c.waitForBatch(ctx, batch)
		batch = batch[:0]
		return err
	}
	if c.installed == nil {
		c.installed = map[objectKey]runtime.Object{}
	}
	// DeviceTaintRules ([linkedKinds]) go first and come last, while
	// nothing else is on its way to the informers: a ResourceSlice tracker
	// told of a rule while a slice's change has reached the slice informer
	// but not the tracker compares the new slice's devices one by one with
	// its old copy's, and panics when the slice has gained devices.
	rule := func(key objectKey) bool { return slices.Contains(linkedKinds, key.kind) }
	other := func(key objectKey) bool { return !rule(key) }
	remove := func(which func(objectKey) bool) (int, error) {
		n := 0
		for key, old := range c.installed {
			if !which(key) {
				continue
			}
			if obj, keep := want[key]; keep && (key.kind != resourceClaimKind || sameObject(old, obj)) {
				continue
			}
			if err := c.tracker.Delete(resourceOf(key.kind), key.namespace, key.name); err != nil {
				return n, fmt.Errorf("deleting %s %s/%s: %w", key.kind.Kind, key.namespace, key.name, err)
			}
			delete(c.installed, key)
			n++
			if err := settle(key); err != nil {
				return n, err
			}
		}
		return n, nil
	}
	write := func(which func(objectKey) bool) (int, error) {
		n := 0
		for i, key := range keys {
			obj := objs[i]
			old, exists := c.installed[key]
			if !which(key) || exists && sameObject(old, obj) {
				continue
			}
			// installed must not change when the caller's objs do.
			copied := obj.DeepCopyObject()
			var err error
			if exists {
				err = c.tracker.Update(resourceOf(key.kind), copied, key.namespace)
			} else {
				err = c.tracker.Create(resourceOf(key.kind), copied, key.namespace)
			}
			if err != nil {
				// installed still says what the tracker holds.
				return n, fmt.Errorf("writing %s %s/%s: %w", key.kind.Kind, key.namespace, key.name, err)
			}
			c.installed[key] = copied
			n++
			if err := settle(key); err != nil {
				return n, err
			}
		}
		return n, nil
	}
	if n, err := remove(rule); err != nil {
		return err
	} else if n > 0 {
		if err := c.waitForInformers(ctx, c.installed); err != nil {
			return err
		}
		// The caches (and the tracker's slices) may say a rule is gone
		// before the tracker's handler for its deletion has run, when
		// the rule tainted nothing; run late, that handler resyncs the
		// rule's slices while the writes below change them, and panics
		// as above. Nothing tells when it has run: give it time to.
		time.Sleep(ruleHandlerGrace)
	}
	if _, err := remove(other); err != nil {
		return err
	}
	if n, err := write(other); err != nil {
		return err
	} else if n > 0 && slices.ContainsFunc(keys, func(key objectKey) bool {
		old, exists := c.installed[key]
		return rule(key) && (!exists || !sameObject(old, want[key]))
	}) {
		if err := c.waitForInformers(ctx, c.installed); err != nil {
			return err
		}
	}
	if _, err := write(rule); err != nil {
		return err
	}
	return c.waitForInformers(ctx, want)
}

// ruleHandlerGrace is how long install waits, after deleting
// DeviceTaintRules, for the ResourceSlice tracker's handlers to take the
// deletions in.
const ruleHandlerGrace = 20 * time.Millisecond

// sameObject reports whether two versions of an object differ only in
// what the fake API server may set or drop (see [normalized]).
func sameObject(a, b runtime.Object) bool {
	return equality.Semantic.DeepEqual(normalized(a), normalized(b))
}

// waitForInformers polls the informers' caches, and whatever lagging
// watches, until they hold exactly want, or fails after
// [informerTimeout].
func (c *clusterObjects) waitForInformers(ctx context.Context, want map[objectKey]runtime.Object) error {
	return pollInformers(ctx, "the scenario's objects", func() string { return c.informerDiff(want) })
}

// waitForBatch polls the informers' caches until each of keys is listed
// as installed says (or not listed, for a key installed no longer
// holds), or fails after [informerTimeout].
func (c *clusterObjects) waitForBatch(ctx context.Context, keys []objectKey) error {
	return pollInformers(ctx, "a batch of writes", func() string { return c.batchDiff(keys) })
}

// pollInformers calls diff until it returns "", or fails after
// [informerTimeout] with the last difference, saying what the informers
// did not catch up with.
func pollInformers(ctx context.Context, what string, diff func() string) error {
	ctx, cancel := context.WithTimeout(ctx, informerTimeout)
	defer cancel()
	for {
		d := diff()
		if d == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("informers did not catch up with %s: %s", what, d)
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// batchDiff describes the first of keys the informers do not list as
// installed says, or returns "" when there is none.
func (c *clusterObjects) batchDiff(keys []objectKey) string {
	for _, key := range keys {
		storeKey := key.name
		if key.namespace != "" {
			storeKey = key.namespace + "/" + key.name
		}
		item, listed, err := c.stores[key.kind].GetByKey(storeKey)
		if err != nil {
			return err.Error()
		}
		want, installed := c.installed[key]
		switch {
		case listed && !installed:
			return fmt.Sprintf("%s %s is still listed", key.kind.Kind, storeKey)
		case !listed && installed:
			return fmt.Sprintf("%s %s is not listed yet", key.kind.Kind, storeKey)
		case listed:
			if obj, ok := item.(runtime.Object); !ok || !sameObject(obj, want) {
				return fmt.Sprintf("%s %s is listed with old contents", key.kind.Kind, storeKey)
			}
		}
	}
	return ""
}

// informerDiff describes the first difference between the informers'
// caches and want, then what lagging says, or returns "" when there is
// none.
func (c *clusterObjects) informerDiff(want map[objectKey]runtime.Object) string {
	seen := 0
	for gvk, store := range c.stores {
		for _, item := range store.List() {
			obj, ok := item.(runtime.Object)
			if !ok {
				return fmt.Sprintf("the %s informer holds a %T", gvk.Kind, item)
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				return err.Error()
			}
			key := objectKey{kind: gvk, namespace: m.GetNamespace(), name: m.GetName()}
			w, ok := want[key]
			if !ok {
				return fmt.Sprintf("%s %s/%s is still listed", gvk.Kind, key.namespace, key.name)
			}
			if !sameObject(obj, w) {
				return fmt.Sprintf("%s %s/%s is listed with old contents", gvk.Kind, key.namespace, key.name)
			}
			seen++
		}
	}
	if seen != len(want) {
		return fmt.Sprintf("%d of %d objects are listed", seen, len(want))
	}
	if c.lagging != nil {
		return c.lagging(want)
	}
	return ""
}

// normalized returns a copy of obj without the fields the fake API server
// may set or drop: type metadata, resource version and managed fields.
func normalized(obj runtime.Object) runtime.Object {
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion("")
		m.SetManagedFields(nil)
	}
	return obj
}

// resync makes installed say again what the tracker holds, after
// something other than install wrote to it: preemption deletes its
// victims and patches their status, and DynamicResources' PostFilter may
// deallocate or delete a claim. Only the objects install wrote are
// looked at; nothing writes new ones.
func (c *clusterObjects) resync() error {
	for key := range c.installed {
		obj, err := c.tracker.Get(resourceOf(key.kind), key.namespace, key.name)
		switch {
		case apierrors.IsNotFound(err):
			delete(c.installed, key)
		case err != nil:
			return fmt.Errorf("reading %s %s/%s back: %w", key.kind.Kind, key.namespace, key.name, err)
		default:
			c.installed[key] = obj
		}
	}
	return nil
}

// versioningTracker gives every object written to it a new resource
// version, a number greater than any it gave before, as the API server
// does. The fake clientset's own tracker stores objects as they come, so
// that a claim upstream's DynamicResources PostFilter deallocates (with an
// UpdateStatus of the claim it read) would keep its version, and
// upstream's assume cache for ResourceClaims, which ignores an update
// whose version is not greater than the one it holds, would go on
// holding the allocated claim that the informer and the tracker no longer
// do; the next [clusterObjects.install] would then wait in vain for the
// DRA manager to catch up with what [clusterObjects.resync] read back.
type versioningTracker struct {
	clienttesting.ObjectTracker
	// mu makes versions increase in the order the writes are stored.
	mu      sync.Mutex
	version int64
}

func (t *versioningTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	return t.write(obj, func(obj runtime.Object) error { return t.ObjectTracker.Create(gvr, obj, ns, opts...) })
}

func (t *versioningTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	return t.write(obj, func(obj runtime.Object) error { return t.ObjectTracker.Update(gvr, obj, ns, opts...) })
}

func (t *versioningTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	return t.write(obj, func(obj runtime.Object) error { return t.ObjectTracker.Patch(gvr, obj, ns, opts...) })
}

// Apply merges the new version into the stored object with the rest of
// applyConfiguration.
func (t *versioningTracker) Apply(gvr schema.GroupVersionResource, applyConfiguration runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	return t.write(applyConfiguration, func(obj runtime.Object) error { return t.ObjectTracker.Apply(gvr, obj, ns, opts...) })
}

// write stores a copy of obj, with a new resource version, with store.
func (t *versioningTracker) write(obj runtime.Object, store func(runtime.Object) error) error {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	m.SetResourceVersion(strconv.FormatInt(t.version, 10))
	return store(obj)
}
