package cache

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
)

// DeletedFinalStateUnknown is what an informer delivers on delete when it
// missed the deletion itself (a watch broke and a relist no longer found
// the object): the last state it knew, which may be stale. Its fields are
// those of client-go's cache.DeletedFinalStateUnknown, so that one
// converts to this one, and [Cache.RemoveNode], [Cache.RemovePod],
// [NodeOf] and [PodOf] accept client-go's value as it is, without this
// module importing client-go.
type DeletedFinalStateUnknown struct {
	// Key is the object's namespace/name key.
	Key string
	// Obj is the object's last known state.
	Obj any
}

var tombstoneType = reflect.TypeFor[DeletedFinalStateUnknown]()

// unwrap returns the object inside a tombstone, or obj itself. Any struct
// with DeletedFinalStateUnknown's fields, or pointer to one, counts as a
// tombstone.
func unwrap(obj any) any {
	switch t := obj.(type) {
	case DeletedFinalStateUnknown:
		return t.Obj
	case *DeletedFinalStateUnknown:
		if t == nil {
			return nil
		}
		return t.Obj
	case *v1.Pod, *v1.Node:
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct && v.Type().ConvertibleTo(tombstoneType) {
		return v.Convert(tombstoneType).Interface().(DeletedFinalStateUnknown).Obj
	}
	return obj
}

// PodOf returns the pod an informer's delete notification carries: obj
// itself when it is a *v1.Pod, or the pod inside a tombstone
// ([DeletedFinalStateUnknown] or client-go's). It returns an error for
// anything else, including a nil pod.
func PodOf(obj any) (*v1.Pod, error) {
	pod, ok := unwrap(obj).(*v1.Pod)
	if !ok || pod == nil {
		return nil, fmt.Errorf("cache: %T is neither a pod nor a tombstone holding one", obj)
	}
	return pod, nil
}

// NodeOf is [PodOf] for nodes.
func NodeOf(obj any) (*v1.Node, error) {
	node, ok := unwrap(obj).(*v1.Node)
	if !ok || node == nil {
		return nil, fmt.Errorf("cache: %T is neither a node nor a tombstone holding one", obj)
	}
	return node, nil
}
