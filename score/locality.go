package score

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/locality"
	"github.com/kubesched/kubesched/internal/noderesources"
)

// The scorers whose score of a node depends on the pod, the number of
// nodes and that node alone (see package internal/locality), so that the
// framework may remember it for the node's generation.
func init() {
	for _, example := range []any{
		&TaintToleration{}, &TaintToleration{},
		&ImageLocality{}, &ImageLocality{},
		&NodeAffinity{},
	} {
		locality.Register(example, nil)
	}
	// Scoring an extended resource a DeviceClass may provide counts the
	// cluster's devices.
	locality.Register(&NodeResourcesFit{}, func(pl any, _ *v1.Pod) bool {
		return !scoresExtended(pl.(*NodeResourcesFit).getScorer())
	})
	locality.Register(&NodeResourcesBalancedAllocation{}, func(pl any, _ *v1.Pod) bool {
		return !scoresExtended(pl.(*NodeResourcesBalancedAllocation).getScorer())
	})
	// A pod without claims, asking for no resource a DeviceClass could
	// provide, scores 0 on every node.
	locality.Register(&DynamicResources{}, func(_ any, pod *v1.Pod) bool {
		return len(pod.Spec.ResourceClaims) == 0 && !dra.MayUseExtendedResources(pod)
	})
}

// scoresExtended reports whether s scores an extended resource.
func scoresExtended(s *noderesources.Scorer) bool {
	for _, r := range s.Resources() {
		if dra.IsExtendedResourceName(r.Name) {
			return true
		}
	}
	return false
}
