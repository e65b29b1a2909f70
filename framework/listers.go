package framework

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Listers give plugins read-only access to the cluster objects some of
// them need besides nodes and pods: namespaces (for namespace selectors)
// and the Services and controllers whose selectors define a pod's default
// topology spreading.
//
// Each lister interface is the List method (and for namespaces Get) of the
// client-go lister of the same kind, so a controller can assign its
// informers' listers directly, without kubesched importing client-go:
//
//	framework.WithListers(framework.Listers{
//		Namespaces: factory.Core().V1().Namespaces().Lister(),
//		Services:   factory.Core().V1().Services().Lister(),
//		ReplicaSets: factory.Apps().V1().ReplicaSets().Lister(),
//		...
//	})
//
// A nil lister behaves as an empty one, as kube-scheduler's plugins do with
// empty informers. Listers must be safe for concurrent use.
type Listers struct {
	Namespaces             NamespaceLister
	Services               ServiceLister
	ReplicaSets            ReplicaSetLister
	StatefulSets           StatefulSetLister
	ReplicationControllers ReplicationControllerLister
}

// NamespaceLister lists and gets Namespaces.
type NamespaceLister interface {
	List(selector labels.Selector) ([]*v1.Namespace, error)
	Get(name string) (*v1.Namespace, error)
}

// ServiceLister lists Services in all namespaces.
type ServiceLister interface {
	List(selector labels.Selector) ([]*v1.Service, error)
}

// ReplicaSetLister lists ReplicaSets in all namespaces.
type ReplicaSetLister interface {
	List(selector labels.Selector) ([]*appsv1.ReplicaSet, error)
}

// StatefulSetLister lists StatefulSets in all namespaces.
type StatefulSetLister interface {
	List(selector labels.Selector) ([]*appsv1.StatefulSet, error)
}

// ReplicationControllerLister lists ReplicationControllers in all namespaces.
type ReplicationControllerLister interface {
	List(selector labels.Selector) ([]*v1.ReplicationController, error)
}

// WithListers gives the framework's plugins the cluster objects they read
// (see [Listers]), typically a controller's informer listers.
func WithListers(l Listers) Option {
	return func(c *config) error {
		c.listers = l
		return nil
	}
}

// WithObjects gives the framework's plugins these objects as a fixed,
// in-memory cluster: Namespaces, Services, ReplicaSets, StatefulSets and
// ReplicationControllers (as pointers). Any other type is an error. The
// objects must not be modified afterwards.
func WithObjects(objs ...runtime.Object) Option {
	return func(c *config) error {
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
			default:
				return fmt.Errorf("WithObjects: object %d is a %T; want a Namespace, Service, ReplicaSet, StatefulSet or ReplicationController", i, o)
			}
		}
		c.listers = Listers{
			Namespaces:             namespaceList(s.namespaces),
			Services:               list[*v1.Service](s.services),
			ReplicaSets:            list[*appsv1.ReplicaSet](s.replicaSets),
			StatefulSets:           list[*appsv1.StatefulSet](s.statefulSets),
			ReplicationControllers: list[*v1.ReplicationController](s.replicationControllers),
		}
		return nil
	}
}

type objectSet struct {
	namespaces             []*v1.Namespace
	services               []*v1.Service
	replicaSets            []*appsv1.ReplicaSet
	statefulSets           []*appsv1.StatefulSet
	replicationControllers []*v1.ReplicationController
}

// list is an in-memory lister of one kind.
type list[T interface{ GetLabels() map[string]string }] []T

// List returns the objects whose labels match selector (all for nil).
func (l list[T]) List(selector labels.Selector) ([]T, error) {
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

// Listers returns the cluster objects of the cycle. Fields may be nil,
// meaning none; a nil state has none.
func (s *CycleState) Listers() Listers {
	if s == nil {
		return Listers{}
	}
	return s.listers
}

// SetListers sets the cluster objects plugins see through this state, for
// calling plugins outside a framework. It returns s.
func (s *CycleState) SetListers(l Listers) *CycleState {
	s.listers = l
	return s
}
