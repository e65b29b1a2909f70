// Package noderesources holds what the NodeResourcesFit and
// NodeResourcesBalancedAllocation plugins of packages filter and score
// share: the resource-allocation scorer both score plugins are built on,
// from kube-scheduler's own args types once they are defaulted and
// checked (see internal/schedconfig.PluginArgs).
package noderesources

import (
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Bounds of a scoring shape. Shape scores are scaled by
// MaxNodeScore/MaxShapeScore (10) to the 0-100 node score range.
const (
	MaxUtilization = 100
	MaxShapeScore  = 10
)

// ResourceSpec is one resource a scorer looks at, and its weight.
type ResourceSpec struct {
	Name   v1.ResourceName
	Weight int64
}

// resourceSpecs converts kube-scheduler's resource list, defaulted.
func resourceSpecs(rs []configv1.ResourceSpec) []ResourceSpec {
	out := make([]ResourceSpec, len(rs))
	for i, r := range rs {
		out[i] = ResourceSpec{Name: v1.ResourceName(r.Name), Weight: r.Weight}
	}
	return out
}
