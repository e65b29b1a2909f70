package volumebinding

import (
	"math"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/noderesources"
)

// Scorer ranks a node by the storage utilization the pod's claims would
// cause there. It is immutable and safe for concurrent use.
type Scorer struct {
	shape noderesources.Shape
}

// NewScorer returns the scorer of a shape checked as kube-scheduler
// checks it.
func NewScorer(shape []configv1.UtilizationShapePoint) *Scorer {
	return &Scorer{shape: noderesources.NewShape(shape)}
}

// classUse is what the pod would request of a storage class on a node,
// against what the class has there.
type classUse struct {
	class               string
	requested, capacity int64
}

// Score returns the node's score for the placement Check found there: the
// mean, rounded, of the shape at each storage class's utilization. When
// the placement binds existing volumes, it scores those (a class's
// capacity is the sum of the chosen volumes' sizes); otherwise the
// volumes to provision that have a CSIStorageCapacity (a class's capacity
// is that object's capacity; unset counts as 0). A class with no capacity,
// or with less than requested, scores as full. A placement with neither
// scores 0. Arithmetic is kube-scheduler's int64 arithmetic, overflow
// included.
func (s *Scorer) Score(pl *Placement) int64 {
	var uses []classUse
	use := func(class string) *classUse {
		for i := range uses {
			if uses[i].class == class {
				return &uses[i]
			}
		}
		uses = append(uses, classUse{class: class})
		return &uses[len(uses)-1]
	}
	if len(pl.static) > 0 {
		for _, b := range pl.static {
			u := use(b.pv.Spec.StorageClassName)
			u.requested += storageRequest(b.claim)
			size := b.pv.Spec.Capacity[v1.ResourceStorage]
			u.capacity += size.Value()
		}
	} else {
		for _, d := range pl.dynamic {
			if d.capacity == nil {
				continue
			}
			// kube-scheduler reads spec.storageClassName (and would crash
			// without one; then the class comes from the annotation).
			class := ClaimClass(d.claim)
			if d.claim.Spec.StorageClassName != nil {
				class = *d.claim.Spec.StorageClassName
			}
			u := use(class)
			// Not a sum: claims of one class share the same capacity.
			u.capacity = 0
			if d.capacity.Capacity != nil {
				u.capacity = d.capacity.Capacity.Value()
			}
			u.requested += storageRequest(d.claim)
		}
	}
	if len(uses) == 0 {
		return 0
	}
	var sum int64
	for _, u := range uses {
		utilization := int64(noderesources.MaxUtilization)
		if u.capacity != 0 && u.requested <= u.capacity {
			utilization = u.requested * noderesources.MaxUtilization / u.capacity
		}
		sum += s.shape.Score(utilization)
	}
	return int64(math.Round(float64(sum) / float64(len(uses))))
}

func storageRequest(c *v1.PersistentVolumeClaim) int64 {
	q := c.Spec.Resources.Requests[v1.ResourceStorage]
	return q.Value()
}
