package noderesources

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

type scorerKind uint8

const (
	leastAllocated scorerKind = iota
	mostAllocated
	requestedToCapacityRatio
	balancedAllocation
)

// shapePoint is a UtilizationShapePoint with its score scaled to 0-100.
type shapePoint struct{ utilization, score int64 }

// Shape is a scoring shape ready to evaluate, as RequestedToCapacityRatio
// and VolumeBinding's capacity scoring use it: the points of a checked
// shape with their scores scaled from 0-10 to 0-100.
type Shape []shapePoint

// NewShape returns points, checked as kube-scheduler checks a shape,
// ready to evaluate.
func NewShape(points []configv1.UtilizationShapePoint) Shape {
	s := make(Shape, len(points))
	for i, p := range points {
		s[i] = shapePoint{
			utilization: int64(p.Utilization),
			score:       int64(p.Score) * (fwk.MaxNodeScore / MaxShapeScore),
		}
	}
	return s
}

// Scorer scores a node by how much of a list of resources a pod would use
// there. It is what NodeResourcesFit's strategies and
// NodeResourcesBalancedAllocation have in common: the same pod request
// vector and the same reading of the node, combined by different formulas.
//
// Extended resources are read from node allocatable; [Scorer.ScoreWithDRA]
// counts a DRA-backed one's devices where the node has none.
//
// A Scorer is immutable and safe for concurrent use.
type Scorer struct {
	kind      scorerKind
	resources []ResourceSpec
	// kinds[i] says how to read resources[i] off a node, decided once here
	// rather than by comparing names for every node.
	kinds []resourceKind
	// cpuMemory: the resources are exactly cpu then memory (the default).
	cpuMemory bool
	shape     Shape
	// useRequested: read the node's and the pod's plain cpu and memory
	// requests (BalancedAllocation) rather than those with defaults for
	// unset requests (NodeResourcesFit).
	useRequested bool
	// containersOnly: sum the pod's container specs, ignoring pod-level
	// requests and resize status. kube-scheduler's NodeResourcesFit scorer
	// does so whatever the feature gates, since it never receives them;
	// BalancedAllocation does receive them.
	containersOnly bool
}

// Default scorers, from kube-scheduler's default args.
var (
	DefaultFitScorer = NewFitScorer(&configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type: configv1.LeastAllocated, Resources: defaultResources}})
	DefaultBalancedScorer = NewBalancedScorer(&configv1.NodeResourcesBalancedAllocationArgs{Resources: defaultResources})
)

var defaultResources = []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}

// NewFitScorer returns the scorer of args' strategy. args must be
// defaulted and checked.
func NewFitScorer(args *configv1.NodeResourcesFitArgs) *Scorer {
	s := args.ScoringStrategy
	sc := newScorer(resourceSpecs(s.Resources))
	sc.containersOnly = true
	switch s.Type {
	case configv1.MostAllocated:
		sc.kind = mostAllocated
	case configv1.RequestedToCapacityRatio:
		sc.kind = requestedToCapacityRatio
		sc.shape = NewShape(s.RequestedToCapacityRatio.Shape)
	default:
		sc.kind = leastAllocated
	}
	return sc
}

// NewBalancedScorer returns the balanced-allocation scorer. args must be
// defaulted and checked.
func NewBalancedScorer(args *configv1.NodeResourcesBalancedAllocationArgs) *Scorer {
	sc := newScorer(resourceSpecs(args.Resources))
	sc.kind = balancedAllocation
	sc.useRequested = true
	return sc
}

// resourceKind is where a node keeps a resource's amounts.
type resourceKind uint8

const (
	// kindOther is a name the node accounts for nowhere: it scores as absent.
	kindOther resourceKind = iota
	kindCPU
	kindMemory
	kindEphemeralStorage
	// kindScalar is left out when the pod does not request it.
	kindScalar
)

func newScorer(resources []ResourceSpec) *Scorer {
	sc := &Scorer{resources: resources, kinds: make([]resourceKind, len(resources))}
	for i, r := range resources {
		switch {
		case r.Name == v1.ResourceCPU:
			sc.kinds[i] = kindCPU
		case r.Name == v1.ResourceMemory:
			sc.kinds[i] = kindMemory
		case r.Name == v1.ResourceEphemeralStorage:
			sc.kinds[i] = kindEphemeralStorage
		case nodeinfo.IsScalarResourceName(r.Name):
			sc.kinds[i] = kindScalar
		}
	}
	sc.cpuMemory = len(sc.kinds) == 2 && sc.kinds[0] == kindCPU && sc.kinds[1] == kindMemory
	return sc
}

// Resources returns the scored resources, defaults filled in. The caller
// must not modify the result.
func (s *Scorer) Resources() []ResourceSpec { return s.resources }

// PodRequests returns pod's request for each scored resource, in the order
// of [Scorer.Resources]: millicores for cpu, whole units otherwise. Like
// kube-scheduler it counts init containers, sidecars and overhead.
//
// NodeResourcesFit's scorer, as kube-scheduler's, reads container
// specs only, with 100m cpu and 200Mi memory for each container that leaves
// them unset. BalancedAllocation's reads requests as set, pod-level
// requests and resized containers' status included (PodLevelResources,
// InPlacePodVerticalScaling and InPlacePodLevelResourcesVerticalScaling are
// on by default in both supported releases).
func (s *Scorer) PodRequests(pod *v1.Pod) []int64 {
	if c := plainContainer(pod); c != nil {
		// What PodRequests works out for such a pod, without its maps.
		out := make([]int64, len(s.resources))
		for i, r := range s.resources {
			q, found := c.Resources.Requests[r.Name]
			switch {
			case !found && !s.useRequested && r.Name == v1.ResourceCPU:
				out[i] = nodeinfo.DefaultMilliCPURequest
			case !found && !s.useRequested && r.Name == v1.ResourceMemory:
				out[i] = nodeinfo.DefaultMemoryRequest
			case r.Name == v1.ResourceCPU:
				out[i] = q.MilliValue()
			default:
				out[i] = q.Value()
			}
		}
		return out
	}
	return s.podRequests(pod)
}

// plainContainer returns the container of a pod that has one and
// nothing else that adds to its requests: no init containers, overhead
// or pod-level resources, and no container statuses or pod-level status
// resources, which an in-place resize reads; nil for another pod.
func plainContainer(pod *v1.Pod) *v1.Container {
	spec, status := &pod.Spec, &pod.Status
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 || spec.Overhead != nil || spec.Resources != nil ||
		len(status.ContainerStatuses) != 0 || len(status.InitContainerStatuses) != 0 || status.Resources != nil || status.Resize != "" {
		return nil
	}
	return &spec.Containers[0]
}

// podRequests is PodRequests worked out by component-helpers' PodRequests.
func (s *Scorer) podRequests(pod *v1.Pod) []int64 {
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	}
	if s.containersOnly {
		opts = resourcehelper.PodResourcesOptions{SkipPodLevelResources: true}
	}
	if !s.useRequested {
		opts.NonMissingContainerRequests = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(nodeinfo.DefaultMilliCPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(nodeinfo.DefaultMemoryRequest, resource.BinarySI),
		}
	}
	reqs := resourcehelper.PodRequests(pod, opts)
	out := make([]int64, len(s.resources))
	for i, r := range s.resources {
		q := reqs[r.Name]
		if r.Name == v1.ResourceCPU {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}

// AllZero reports whether a request vector asks for nothing, as a
// best-effort pod's does.
func AllZero(podRequests []int64) bool {
	for _, r := range podRequests {
		if r != 0 {
			return false
		}
	}
	return true
}

// stackResources is how many resources Score handles without allocating.
const stackResources = 8

// Score returns the node's score for a pod with podRequests (from
// [Scorer.PodRequests]). A resource the node has none of is left out of the
// average; so is a scalar resource the pod does not request. A node with
// nothing left to score gets 0 (75 for balanced allocation). podRequests
// must have one entry per scored resource.
func (s *Scorer) Score(podRequests []int64, ni *nodeinfo.NodeInfo) int64 {
	return s.ScoreWithDRA(podRequests, ni, nil)
}

// DRATotals returns how many devices behind a DRA-backed extended resource
// reach the node, and how many of them are allocated; 0 capacity when no
// DeviceClass provides the resource.
type DRATotals func(name v1.ResourceName) (capacity, allocated int64)

// ScoreWithDRA is Score where an extended resource the node has 0 of (or
// does not list) is counted from its DeviceClass's devices by dra, as
// kube-scheduler does with DRAExtendedResource on. dra may be nil.
func (s *Scorer) ScoreWithDRA(podRequests []int64, ni *nodeinfo.NodeInfo, dra DRATotals) int64 {
	if s.cpuMemory {
		return s.scoreCPUMemory(podRequests, ni)
	}
	n := len(s.resources)
	var reqBuf, usedBuf, capBuf [stackResources]int64
	var requested, allocated, allocatable []int64
	if n <= stackResources {
		requested, allocated, allocatable = reqBuf[:n], usedBuf[:n], capBuf[:n]
	} else {
		requested, allocated, allocatable = make([]int64, n), make([]int64, n), make([]int64, n)
	}
	for i, kind := range s.kinds {
		if podRequests[i] == 0 && kind == kindScalar {
			continue
		}
		capacity, used := s.nodeAmounts(ni, i, kind, dra)
		if capacity == 0 {
			continue
		}
		allocatable[i] = capacity
		allocated[i] = used
		requested[i] = used + podRequests[i]
	}
	return s.combine(requested, allocated, allocatable)
}

// scoreCPUMemory is Score for the default resources, cpu then memory, read
// straight off the node: it runs for every node of every cycle.
func (s *Scorer) scoreCPUMemory(podRequests []int64, ni *nodeinfo.NodeInfo) int64 {
	used := ni.NonZeroRequested()
	if s.useRequested {
		used = ni.Requested()
	}
	var requested, allocated, allocatable [2]int64
	if c := ni.Allocatable().MilliCPU; c != 0 {
		allocatable[0], allocated[0], requested[0] = c, used.MilliCPU, used.MilliCPU+podRequests[0]
	}
	if c := ni.Allocatable().Memory; c != 0 {
		allocatable[1], allocated[1], requested[1] = c, used.Memory, used.Memory+podRequests[1]
	}
	return s.combine(requested[:], allocated[:], allocatable[:])
}

// combine turns per-resource amounts into the score of the scorer's
// formula; resources with zero allocatable are left out.
func (s *Scorer) combine(requested, allocated, allocatable []int64) int64 {
	switch s.kind {
	case mostAllocated:
		return weightedMean(s.resources, requested, allocatable, mostRequestedScore)
	case requestedToCapacityRatio:
		return s.ratioScore(requested, allocatable)
	case balancedAllocation:
		withPod := balance(requested, allocatable)
		without := balance(allocated, allocatable)
		// Each balance is in [50, 100], so the change is in [-50, 50]; this
		// maps it to [50, 100], 75 meaning the pod leaves the balance as is.
		return fwk.MaxNodeScore/2 + (fwk.MaxNodeScore/2+withPod-without)/2
	default:
		return weightedMean(s.resources, requested, allocatable, leastRequestedScore)
	}
}

// nodeAmounts returns the node's allocatable amount of a resource and the
// amount its pods already request. Extended resources the node does not
// list count as 0 allocatable, unless dra counts devices for them. Ephemeral storage and scalar resources have
// no non-zero defaults, so they always read the plain requests.
func (s *Scorer) nodeAmounts(ni *nodeinfo.NodeInfo, i int, kind resourceKind, dra DRATotals) (allocatable, requested int64) {
	cpuMem := ni.NonZeroRequested()
	if s.useRequested {
		cpuMem = ni.Requested()
	}
	switch kind {
	case kindCPU:
		return ni.Allocatable().MilliCPU, cpuMem.MilliCPU
	case kindMemory:
		return ni.Allocatable().Memory, cpuMem.Memory
	case kindEphemeralStorage:
		return ni.Allocatable().EphemeralStorage, ni.Requested().EphemeralStorage
	case kindScalar:
		name := s.resources[i].Name
		a, ok := ni.Allocatable().ScalarResources[name]
		if a == 0 && dra != nil {
			if capacity, allocated := dra(name); capacity > 0 {
				return capacity, allocated
			}
		}
		if ok {
			return a, ni.Requested().ScalarResources[name]
		}
	}
	return 0, 0
}

// weightedMean averages per-resource scores by weight over the resources
// with non-zero allocatable, rounding down.
func weightedMean(resources []ResourceSpec, requested, allocatable []int64, score func(requested, capacity int64) int64) int64 {
	var sum, weights int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		sum += score(requested[i], allocatable[i]) * resources[i].Weight
		weights += resources[i].Weight
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// leastRequestedScore is the free share of capacity in 0-100; an
// over-committed resource scores 0.
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * fwk.MaxNodeScore / capacity
}

// mostRequestedScore is the used share of capacity in 0-100, capped at 100.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	requested = min(requested, capacity)
	return requested * fwk.MaxNodeScore / capacity
}

// ratioScore averages each resource's shape score by weight, leaving out
// resources that score 0, and rounds to nearest.
func (s *Scorer) ratioScore(requested, allocatable []int64) int64 {
	var sum, weights int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		utilization := int64(MaxUtilization)
		if requested[i] <= allocatable[i] {
			utilization = requested[i] * MaxUtilization / allocatable[i]
		}
		if score := s.shape.Score(utilization); score > 0 {
			sum += score * s.resources[i].Weight
			weights += s.resources[i].Weight
		}
	}
	if weights == 0 {
		return 0
	}
	return int64(math.Round(float64(sum) / float64(weights)))
}

// Score evaluates the piecewise-linear function through the shape's points
// at utilization p, as kube-scheduler's BuildBrokenLinearFunction does:
// flat before the first point and after the last, linear between points
// with the division truncating toward zero. The shape must not be empty.
func (shape Shape) Score(p int64) int64 {
	for i, pt := range shape {
		if p > pt.utilization {
			continue
		}
		if i == 0 {
			return pt.score
		}
		prev := shape[i-1]
		return prev.score + (pt.score-prev.score)*(p-prev.utilization)/(pt.utilization-prev.utilization)
	}
	return shape[len(shape)-1].score
}

// balance scores how evenly a node's resources are used, in [50, 100] for
// fractions in [0, 1]: 100 times one minus the standard deviation of the
// used fractions (each capped at 1) of the resources with non-zero
// allocatable. The float operations are kube-scheduler's, in its order, so
// that the truncated result is the same.
func balance(requested, allocatable []int64) int64 {
	fraction := func(i int) float64 {
		return min(float64(requested[i])/float64(allocatable[i]), 1)
	}
	var count int
	var total, first, second float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := fraction(i)
		total += f
		switch count {
		case 0:
			first = f
		case 1:
			second = f
		}
		count++
	}
	var std float64
	switch {
	case count == 2:
		std = math.Abs((first - second) / 2)
	case count > 2:
		mean := total / float64(count)
		var sum float64
		for i := range requested {
			if allocatable[i] == 0 {
				continue
			}
			d := fraction(i) - mean
			sum += d * d
		}
		std = math.Sqrt(sum / float64(count))
	}
	return int64((1 - std) * float64(fwk.MaxNodeScore))
}
