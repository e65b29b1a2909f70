// Package noderesources holds what the NodeResourcesFit and
// NodeResourcesBalancedAllocation plugins of packages filter and score
// share: their arguments with kube-scheduler's defaults and validation, and
// the resource-allocation scorer both score plugins are built on. Packages
// filter and score re-export the argument types under their own names.
package noderesources

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ScoringStrategyType names a NodeResourcesFit scoring strategy.
type ScoringStrategyType string

// The scoring strategies of kube-scheduler v1.36.3.
const (
	// LeastAllocated favours nodes with the most free capacity (the default).
	LeastAllocated ScoringStrategyType = "LeastAllocated"
	// MostAllocated favours nodes with the least free capacity (bin packing).
	MostAllocated ScoringStrategyType = "MostAllocated"
	// RequestedToCapacityRatio maps each resource's utilization through a
	// piecewise-linear shape.
	RequestedToCapacityRatio ScoringStrategyType = "RequestedToCapacityRatio"
)

// Bounds of a scoring shape. Shape scores are scaled by
// MaxNodeScore/MaxShapeScore (10) to the 0-100 node score range.
const (
	MaxUtilization = 100
	MaxShapeScore  = 10
)

// MaxResourceWeight is the largest weight a NodeResourcesFit resource may have.
const MaxResourceWeight = 100

// ResourceSpec is one resource a scorer looks at, and its weight.
type ResourceSpec struct {
	Name v1.ResourceName
	// Weight multiplies the resource's score in the weighted average;
	// 0 means 1.
	Weight int64
}

// UtilizationShapePoint is one point of a RequestedToCapacityRatio shape:
// at Utilization percent (0-100) of a resource in use, the resource scores
// Score (0-10).
type UtilizationShapePoint struct {
	Utilization int32
	Score       int32
}

// ScoringStrategy configures how NodeResourcesFit scores nodes. The zero
// value is kube-scheduler's default: LeastAllocated over cpu and memory,
// each of weight 1.
type ScoringStrategy struct {
	// Type is the strategy; empty means LeastAllocated.
	Type ScoringStrategyType
	// Resources are the resources scored; empty means cpu and memory with
	// weight 1. Weights must lie in [1, 100] (0 means 1).
	Resources []ResourceSpec
	// Shape is the RequestedToCapacityRatio function, with utilizations in
	// strictly increasing order. Required for that strategy and not allowed
	// for the others.
	Shape []UtilizationShapePoint
}

// FitArgs configures NodeResourcesFit, as kube-scheduler's
// NodeResourcesFitArgs does. The zero value is kube-scheduler's default.
type FitArgs struct {
	// IgnoredResources are extended resources the filter does not check,
	// for example "example.com/foo".
	IgnoredResources []string
	// IgnoredResourceGroups are domains whose extended resources the filter
	// does not check: "example.com" ignores "example.com/foo" and
	// "example.com/bar". A group may not contain '/'.
	IgnoredResourceGroups []string
	// ScoringStrategy configures scoring.
	ScoringStrategy ScoringStrategy
}

// BalancedAllocationArgs configures NodeResourcesBalancedAllocation. The
// zero value is kube-scheduler's default: cpu and memory.
type BalancedAllocationArgs struct {
	// Resources are the resources whose balance is scored; empty means cpu
	// and memory. Names may not repeat and every weight must be 1 (0 means 1).
	Resources []ResourceSpec
}

// defaultResources returns a fresh copy of kube-scheduler's default
// resource list, so callers may not alias each other's slices.
func defaultResources() []ResourceSpec {
	return []ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}}
}

// withDefaultWeights returns resources, or the default list if empty, with
// weight 0 replaced by 1, as kube-scheduler's defaulting does. The input is
// not modified.
func withDefaultWeights(resources []ResourceSpec) []ResourceSpec {
	if len(resources) == 0 {
		return defaultResources()
	}
	out := make([]ResourceSpec, len(resources))
	for i, r := range resources {
		if r.Weight == 0 {
			r.Weight = 1
		}
		out[i] = r
	}
	return out
}

// Defaulted returns s with kube-scheduler's defaults filled in: type
// LeastAllocated, resources cpu and memory, weight 1. s is not modified.
func (s ScoringStrategy) Defaulted() ScoringStrategy {
	if s.Type == "" {
		s.Type = LeastAllocated
	}
	s.Resources = withDefaultWeights(s.Resources)
	return s
}

// Defaulted returns a with kube-scheduler's defaults filled in. a is not
// modified.
func (a BalancedAllocationArgs) Defaulted() BalancedAllocationArgs {
	a.Resources = withDefaultWeights(a.Resources)
	return a
}

var supportedStrategies = []string{string(LeastAllocated), string(MostAllocated), string(RequestedToCapacityRatio)}

// Validate checks a after defaulting and returns every problem found, each
// with its field path and in kube-scheduler's wording, or nil.
func (a FitArgs) Validate() error {
	var errs field.ErrorList
	for i, name := range a.IgnoredResources {
		errs = append(errs, qualifiedName(field.NewPath("ignoredResources").Index(i), name)...)
	}
	for i, group := range a.IgnoredResourceGroups {
		p := field.NewPath("ignoredResourceGroups").Index(i)
		if strings.Contains(group, "/") {
			errs = append(errs, field.Invalid(p, group, "resource group name can't contain '/'"))
		}
		errs = append(errs, qualifiedName(p, group)...)
	}

	s := a.ScoringStrategy.Defaulted()
	sp := field.NewPath("scoringStrategy")
	if !sets.New(supportedStrategies...).Has(string(s.Type)) {
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, supportedStrategies))
	}
	for i, r := range s.Resources {
		if r.Weight <= 0 || r.Weight > MaxResourceWeight {
			msg := fmt.Sprintf("resource weight of %v not in valid range (0, %d]", r.Name, MaxResourceWeight)
			errs = append(errs, field.Invalid(sp.Child("resources").Index(i).Child("weight"), r.Weight, msg))
		}
	}
	if s.Type == RequestedToCapacityRatio {
		errs = append(errs, ValidateShape(sp.Child("shape"), s.Shape)...)
	} else if len(s.Shape) > 0 {
		errs = append(errs, field.Forbidden(sp.Child("shape"), "must be empty when type is not RequestedToCapacityRatio"))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid NodeResourcesFit args: %w", errs.ToAggregate())
}

// Validate checks a after defaulting and returns every problem found, or nil.
func (a BalancedAllocationArgs) Validate() error {
	var errs field.ErrorList
	seen := sets.New[v1.ResourceName]()
	for i, r := range a.Defaulted().Resources {
		p := field.NewPath("resources").Index(i)
		if seen.Has(r.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen.Insert(r.Name)
		if r.Weight != 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), r.Weight, "must be 1"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid NodeResourcesBalancedAllocation args: %w", errs.ToAggregate())
}

func qualifiedName(p *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// ValidateShape checks a scoring shape at path p as kube-scheduler does:
// at least one point, utilizations strictly increasing within [0, 100],
// scores within [0, 10].
func ValidateShape(p *field.Path, shape []UtilizationShapePoint) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(p, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(p.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, pt := range shape {
		if pt.Utilization < 0 || pt.Utilization > MaxUtilization {
			errs = append(errs, field.Invalid(p.Index(i).Child("utilization"), pt.Utilization, fmt.Sprintf("not in valid range [0, %d]", MaxUtilization)))
		}
		if pt.Score < 0 || pt.Score > MaxShapeScore {
			errs = append(errs, field.Invalid(p.Index(i).Child("score"), pt.Score, fmt.Sprintf("not in valid range [0, %d]", MaxShapeScore)))
		}
	}
	return errs
}
