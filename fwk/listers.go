package fwk

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Listers give plugins read-only access to the cluster objects some of
// them need besides nodes and pods: namespaces (for namespace selectors),
// the Services and controllers whose selectors define a pod's default
// topology spreading, the storage objects the volume plugins read, the
// Dynamic Resource Allocation objects DynamicResources reads, and the
// PodDisruptionBudgets DefaultPreemption respects.
//
// Each lister is the List method (and for namespaces Get) of the
// client-go lister of the same kind, so a controller can assign its
// informers' listers directly, without kubesched importing client-go:
//
//	framework.WithListers(fwk.Listers{
//		Namespaces:             factory.Core().V1().Namespaces().Lister(),
//		Services:               factory.Core().V1().Services().Lister(),
//		ReplicaSets:            factory.Apps().V1().ReplicaSets().Lister(),
//		StatefulSets:           factory.Apps().V1().StatefulSets().Lister(),
//		ReplicationControllers: factory.Core().V1().ReplicationControllers().Lister(),
//		PersistentVolumeClaims: factory.Core().V1().PersistentVolumeClaims().Lister(),
//		PersistentVolumes:      factory.Core().V1().PersistentVolumes().Lister(),
//		StorageClasses:         factory.Storage().V1().StorageClasses().Lister(),
//		CSINodes:               factory.Storage().V1().CSINodes().Lister(),
//		CSIDrivers:             factory.Storage().V1().CSIDrivers().Lister(),
//		CSIStorageCapacities:   factory.Storage().V1().CSIStorageCapacities().Lister(),
//		VolumeAttachments:      factory.Storage().V1().VolumeAttachments().Lister(),
//		ResourceClaims:         factory.Resource().V1().ResourceClaims().Lister(),
//		ResourceSlices:         factory.Resource().V1().ResourceSlices().Lister(),
//		DeviceClasses:          factory.Resource().V1().DeviceClasses().Lister(),
//		DeviceTaintRules:       factory.Resource().V1().DeviceTaintRules().Lister(),
//		PodDisruptionBudgets:   factory.Policy().V1().PodDisruptionBudgets().Lister(),
//	})
//
// A nil lister behaves as an empty one, as kube-scheduler's plugins do with
// empty informers. Listers must be safe for concurrent use.
type Listers struct {
	// Namespaces, for InterPodAffinity's namespaceSelectors; Services and
	// the controllers, for PodTopologySpread's system default
	// constraints, which spread a pod among those that share its Service
	// or controller.
	Namespaces             NamespaceLister
	Services               Lister[*v1.Service]
	ReplicaSets            Lister[*appsv1.ReplicaSet]
	StatefulSets           Lister[*appsv1.StatefulSet]
	ReplicationControllers Lister[*v1.ReplicationController]

	// The storage objects, for VolumeRestrictions, NodeVolumeLimits,
	// VolumeBinding and VolumeZone.
	PersistentVolumeClaims Lister[*v1.PersistentVolumeClaim]
	PersistentVolumes      Lister[*v1.PersistentVolume]
	StorageClasses         Lister[*storagev1.StorageClass]
	CSINodes               Lister[*storagev1.CSINode]
	CSIDrivers             Lister[*storagev1.CSIDriver]
	CSIStorageCapacities   Lister[*storagev1.CSIStorageCapacity]
	VolumeAttachments      Lister[*storagev1.VolumeAttachment]

	// The DRA objects, for DynamicResources, and DeviceClasses also for
	// NodeResourcesFit, which leaves the extended resources a class
	// provides to DynamicResources. A ResourceClaims lister that also has
	// a method Get(namespace, name string) (*resourceapi.ResourceClaim,
	// error), such as cache.Cache's, is asked for a pod's claims by name
	// instead of being listed.
	ResourceClaims Lister[*resourceapi.ResourceClaim]
	ResourceSlices Lister[*resourceapi.ResourceSlice]
	DeviceClasses  Lister[*resourceapi.DeviceClass]
	// DeviceTaintRules taint the devices of ResourceSlices they select,
	// for DynamicResources' allocations, as kube-scheduler's ResourceSlice
	// tracker applies them; only releases with
	// feature.Features.DRADeviceTaintRules (from v1.37) read them.
	DeviceTaintRules Lister[*resourceapi.DeviceTaintRule]

	// PodDisruptionBudgets, for DefaultPreemption, which prefers victims
	// whose eviction violates none.
	PodDisruptionBudgets Lister[*policyv1.PodDisruptionBudget]
}

// Lister lists one kind of cluster object, as the List method of
// client-go's lister of that kind does: a client-go lister is a
// Lister[*v1.Service], a Lister[*storagev1.StorageClass], and so on.
type Lister[T any] interface {
	// List returns the objects whose labels match selector.
	List(selector labels.Selector) ([]T, error)
}

// NamespaceLister lists and gets Namespaces.
type NamespaceLister interface {
	// List returns the Namespaces whose labels match selector.
	List(selector labels.Selector) ([]*v1.Namespace, error)
	// Get returns the Namespace called name, or an error when there is
	// none, which InterPodAffinity reads as a namespace without labels.
	Get(name string) (*v1.Namespace, error)
}

// NewListers returns in-memory listers over objs: Namespaces, Services,
// ReplicaSets, StatefulSets, ReplicationControllers, PersistentVolumeClaims,
// PersistentVolumes, StorageClasses, CSINodes, CSIDrivers,
// CSIStorageCapacities, VolumeAttachments, ResourceClaims, ResourceSlices,
// DeviceClasses, DeviceTaintRules and PodDisruptionBudgets (as pointers).
// Any other type is an error. It is what framework.WithObjects uses,
// and serves to call plugins outside a framework
// ([CycleState.SetListers]).
func NewListers(objs ...runtime.Object) (Listers, error) {
	var s objectSet
	for i, o := range objs {
		switch o := o.(type) {
		case *v1.Namespace:
			s.namespaces = append(s.namespaces, o)
		case *v1.Service:
			s.services = append(s.services, o)
		case *appsv1.ReplicaSet:
			s.replicaSets = append(s.replicaSets, o)
		case *appsv1.StatefulSet:
			s.statefulSets = append(s.statefulSets, o)
		case *v1.ReplicationController:
			s.replicationControllers = append(s.replicationControllers, o)
		case *v1.PersistentVolumeClaim:
			s.claims = append(s.claims, o)
		case *v1.PersistentVolume:
			s.volumes = append(s.volumes, o)
		case *storagev1.StorageClass:
			s.classes = append(s.classes, o)
		case *storagev1.CSINode:
			s.csiNodes = append(s.csiNodes, o)
		case *storagev1.CSIDriver:
			s.csiDrivers = append(s.csiDrivers, o)
		case *storagev1.CSIStorageCapacity:
			s.capacities = append(s.capacities, o)
		case *storagev1.VolumeAttachment:
			s.attachments = append(s.attachments, o)
		case *resourceapi.ResourceClaim:
			s.resourceClaims = append(s.resourceClaims, o)
		case *resourceapi.ResourceSlice:
			s.resourceSlices = append(s.resourceSlices, o)
		case *resourceapi.DeviceClass:
			s.deviceClasses = append(s.deviceClasses, o)
		case *resourceapi.DeviceTaintRule:
			s.deviceTaintRules = append(s.deviceTaintRules, o)
		case *policyv1.PodDisruptionBudget:
			s.budgets = append(s.budgets, o)
		default:
			return Listers{}, fmt.Errorf("object %d is a %T; want a Namespace, Service, ReplicaSet, StatefulSet, ReplicationController, PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment, ResourceClaim, ResourceSlice, DeviceClass, DeviceTaintRule or PodDisruptionBudget", i, o)
		}
	}
	return Listers{
		Namespaces:             namespaceList(s.namespaces),
		Services:               list[*v1.Service](s.services),
		ReplicaSets:            list[*appsv1.ReplicaSet](s.replicaSets),
		StatefulSets:           list[*appsv1.StatefulSet](s.statefulSets),
		ReplicationControllers: list[*v1.ReplicationController](s.replicationControllers),
		PersistentVolumeClaims: list[*v1.PersistentVolumeClaim](s.claims),
		PersistentVolumes:      list[*v1.PersistentVolume](s.volumes),
		StorageClasses:         list[*storagev1.StorageClass](s.classes),
		CSINodes:               list[*storagev1.CSINode](s.csiNodes),
		CSIDrivers:             list[*storagev1.CSIDriver](s.csiDrivers),
		CSIStorageCapacities:   list[*storagev1.CSIStorageCapacity](s.capacities),
		VolumeAttachments:      list[*storagev1.VolumeAttachment](s.attachments),
		ResourceClaims:         newClaimList(s.resourceClaims),
		ResourceSlices:         list[*resourceapi.ResourceSlice](s.resourceSlices),
		DeviceClasses:          list[*resourceapi.DeviceClass](s.deviceClasses),
		DeviceTaintRules:       list[*resourceapi.DeviceTaintRule](s.deviceTaintRules),
		PodDisruptionBudgets:   list[*policyv1.PodDisruptionBudget](s.budgets),
	}, nil
}

type objectSet struct {
	namespaces             []*v1.Namespace
	services               []*v1.Service
	replicaSets            []*appsv1.ReplicaSet
	statefulSets           []*appsv1.StatefulSet
	replicationControllers []*v1.ReplicationController
	claims                 []*v1.PersistentVolumeClaim
	volumes                []*v1.PersistentVolume
	classes                []*storagev1.StorageClass
	csiNodes               []*storagev1.CSINode
	csiDrivers             []*storagev1.CSIDriver
	capacities             []*storagev1.CSIStorageCapacity
	attachments            []*storagev1.VolumeAttachment
	resourceClaims         []*resourceapi.ResourceClaim
	resourceSlices         []*resourceapi.ResourceSlice
	deviceClasses          []*resourceapi.DeviceClass
	deviceTaintRules       []*resourceapi.DeviceTaintRule
	budgets                []*policyv1.PodDisruptionBudget
}

// list is an in-memory lister of one kind.
type list[T interface{ GetLabels() map[string]string }] []T

// List returns the objects whose labels match selector (all for nil).
func (l list[T]) List(selector labels.Selector) ([]T, error) {
	if selector == nil || selector.Empty() {
		return slices.Clone(l), nil
	}
	var out []T
	for _, o := range l {
		if selector == nil || selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

type namespaceList []*v1.Namespace

// List returns the namespaces whose labels match selector (all for nil).
func (l namespaceList) List(selector labels.Selector) ([]*v1.Namespace, error) {
	return list[*v1.Namespace](l).List(selector)
}

// Get returns a NotFound-style error for a missing namespace, with the
// same message client-go listers give.
func (l namespaceList) Get(name string) (*v1.Namespace, error) {
	for _, ns := range l {
		if ns.Name == name {
			return ns, nil
		}
	}
	return nil, fmt.Errorf("namespace %q not found", name)
}

// claimList is an in-memory ResourceClaim lister that also finds a claim
// by namespace and name without listing.
type claimList struct {
	list[*resourceapi.ResourceClaim]
	byKey map[[2]string]*resourceapi.ResourceClaim
}

func newClaimList(claims []*resourceapi.ResourceClaim) *claimList {
	l := &claimList{list: claims, byKey: make(map[[2]string]*resourceapi.ResourceClaim, len(claims))}
	for _, c := range claims {
		l.byKey[[2]string{c.Namespace, c.Name}] = c
	}
	return l
}

// Get returns the claim, or an error for which apierrors.IsNotFound
// reports true, as a client-go lister's.
func (l *claimList) Get(namespace, name string) (*resourceapi.ResourceClaim, error) {
	if c, ok := l.byKey[[2]string{namespace, name}]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), name)
}
