package podaffinity

import "k8s.io/apimachinery/pkg/util/validation/field"

// DefaultHardPodAffinityWeight is kube-scheduler's default
// hardPodAffinityWeight.
const DefaultHardPodAffinityWeight int32 = 1

// MaxHardPodAffinityWeight is the largest hardPodAffinityWeight allowed.
const MaxHardPodAffinityWeight int32 = 100

// Args configures InterPodAffinity as kube-scheduler's InterPodAffinityArgs
// does. The zero value is kube-scheduler's default. Only scoring reads
// them; the filter validates them too, as kube-scheduler does.
type Args struct {
	// HardPodAffinityWeight is what an already placed pod's required
	// affinity term adds to the score of the nodes in its domain when the
	// incoming pod matches it. Nil means DefaultHardPodAffinityWeight; 0
	// turns this part of scoring off. It must lie in [0, 100].
	HardPodAffinityWeight *int32
	// IgnorePreferredTermsOfExistingPods skips scoring altogether for pods
	// without preferred pod affinity or anti-affinity of their own.
	IgnorePreferredTermsOfExistingPods bool
}

// HardWeight returns HardPodAffinityWeight with the default filled in.
func (a Args) HardWeight() int32 {
	if a.HardPodAffinityWeight == nil {
		return DefaultHardPodAffinityWeight
	}
	return *a.HardPodAffinityWeight
}

// Validate returns an error in kube-scheduler's wording if an argument is
// out of range, or nil.
func (a Args) Validate() error {
	if w := a.HardWeight(); w < 0 || w > MaxHardPodAffinityWeight {
		return field.Invalid(field.NewPath("hardPodAffinityWeight"), w, "not in valid range [0, 100]")
	}
	return nil
}
