package main

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// assumeCache shows an informer's objects with the changes scheduling
// assumed laid over them, as kube-scheduler's VolumeBinding shows
// PersistentVolumes and claims: a PersistentVolume the last cycle matched
// to a claim is seen with its claimRef set before the API server has it,
// so that the next cycle does not match it to another claim.
//
// An assumed object has the resourceVersion of the informer's object it
// changes, and is seen only while the informer still holds that version:
// once the informer has a newer one (the write, or someone else's), the
// informer's object is seen and the assumed one is dropped. It is safe
// for concurrent use, and is a fwk.Lister[T].
type assumeCache[T metav1.Object] struct {
	resource schema.GroupResource
	store    toolscache.Store

	// mu makes a comparison of the store's version with assumed's, and
	// the change that follows, one step.
	mu      sync.RWMutex
	assumed map[string]T
}

func newAssumeCache[T metav1.Object](resource schema.GroupResource, informer toolscache.SharedIndexInformer) *assumeCache[T] {
	return &assumeCache[T]{resource: resource, store: informer.GetStore(), assumed: map[string]T{}}
}

// List returns the informer's objects whose labels match selector, each
// replaced by its assumed version while the informer's is the one it
// changes.
func (c *assumeCache[T]) List(selector labels.Selector) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []T
	var err error
	listErr := toolscache.ListAll(c.store, selector, func(obj any) {
		o, ok := obj.(T)
		if !ok {
			err = fmt.Errorf("%s: the informer holds a %T", c.resource, obj)
			return
		}
		out = append(out, c.overlay(o))
	})
	if listErr != nil {
		return nil, listErr
	}
	return out, err
}

// Get returns the object called key (namespace/name, or the name of a
// cluster-scoped object) as List shows it, or a NotFound error.
func (c *assumeCache[T]) Get(key string) (T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	obj, err := c.informerObject(key)
	if err != nil {
		return obj, err
	}
	return c.overlay(obj), nil
}

// overlay returns the assumed version of the informer's obj, or obj.
// The caller holds mu.
func (c *assumeCache[T]) overlay(obj T) T {
	if a, ok := c.assumed[objectKey(obj)]; ok && a.GetResourceVersion() == obj.GetResourceVersion() {
		return a
	}
	return obj
}

// informerObject returns the informer's object called key, whatever is
// assumed about it, or a NotFound error.
func (c *assumeCache[T]) informerObject(key string) (T, error) {
	var zero T
	obj, ok, err := c.store.GetByKey(key)
	switch {
	case err != nil:
		return zero, err
	case !ok:
		return zero, apierrors.NewNotFound(c.resource, key)
	}
	o, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("%s %q: the informer holds a %T", c.resource, key, obj)
	}
	return o, nil
}

// Assume lays obj over the informer's object of the same key. It is an
// error when the informer has no such object or has another version of
// it than obj was made from: obj would change something already changed.
func (c *assumeCache[T]) Assume(obj T) error {
	key := objectKey(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	stored, err := c.informerObject(key)
	if err != nil {
		return err
	}
	if stored.GetResourceVersion() != obj.GetResourceVersion() {
		return fmt.Errorf("%q is out of sync (stored: %s, assume: %s)", key, stored.GetResourceVersion(), obj.GetResourceVersion())
	}
	c.assumed[key] = obj
	return nil
}

// Restore drops what is assumed about obj's key if it is obj's version:
// after a write, the object the API server returned has a newer version,
// and what was assumed stays until the informer catches up.
func (c *assumeCache[T]) Restore(obj T) {
	key := objectKey(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumed[key]; ok && a.GetResourceVersion() == obj.GetResourceVersion() {
		delete(c.assumed, key)
	}
}

// expire drops what is assumed about the key of an informer event's
// object once the informer holds another version or none: from then on
// the assumed object is never seen, and keeping it would only hold
// memory.
func (c *assumeCache[T]) expire(obj any) {
	key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.assumed[key]
	if !ok {
		return
	}
	if stored, err := c.informerObject(key); err == nil && stored.GetResourceVersion() == a.GetResourceVersion() {
		return // a resync
	}
	delete(c.assumed, key)
}

// handler keeps the cache tidy on its informer's events.
func (c *assumeCache[T]) handler() toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    c.expire,
		UpdateFunc: func(_, obj any) { c.expire(obj) },
		DeleteFunc: c.expire,
	}
}

// assumedCount is the number of objects assumed and not yet expired.
func (c *assumeCache[T]) assumedCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.assumed)
}

func objectKey(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
