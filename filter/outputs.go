package filter

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubesched/kubesched/fwk"
)

// The outputs DynamicResources and VolumeBinding leave in a
// framework.Result (Reserve) or FitError (PostFilter). The functions
// below read them from either (a [fwk.OutputHolder]); the keys are for
// code that builds a Result or FitError of its own, a test's say.
var (
	// ClaimsOutput holds what [Claims] returns.
	ClaimsOutput = fwk.NewOutputKey[[]*resourceapi.ResourceClaim]()
	// ExtendedResourceClaimStatusOutput holds what
	// [ExtendedResourceClaimStatus] returns.
	ExtendedResourceClaimStatusOutput = fwk.NewOutputKey[*v1.PodExtendedResourceClaimStatus]()
	// VolumesOutput holds what [Volumes] returns.
	VolumesOutput = fwk.NewOutputKey[[]*v1.PersistentVolume]()
	// ProvisionedClaimsOutput holds what [ProvisionedClaims] returns.
	ProvisionedClaimsOutput = fwk.NewOutputKey[[]*v1.PersistentVolumeClaim]()
	// DeallocateClaimOutput holds what [ClaimToDeallocate] returns.
	DeallocateClaimOutput = fwk.NewOutputKey[*resourceapi.ResourceClaim]()
	// DeleteClaimOutput holds what [ClaimToDelete] returns.
	DeleteClaimOutput = fwk.NewOutputKey[*resourceapi.ResourceClaim]()
)

// Claims returns the pod's ResourceClaims as kube-scheduler writes them
// when it binds the pod to r.SuggestedHost (DynamicResources' Reserve):
// copies, each with the pod in status.reservedFor, and those that were
// not allocated yet with the devices allocated on the node in
// status.allocation. Empty for a pod without claims, or a nil r. Giving
// them to cache.Cache.AssumePod (or to the listers the next cycle reads)
// keeps the devices from being handed out twice.
//
// A pod asking for extended resources that a DeviceClass provides on the
// node (DRA-backed extended resources) gets one more claim, last: the
// one kube-scheduler creates for them, with a generateName of
// "<pod>-extended-resources-" and a name as the API server could give
// it, derived from the pod so that runs are reproducible (clear Name
// before creating it in a real cluster).
func Claims(r fwk.OutputHolder) []*resourceapi.ResourceClaim {
	return outputOf(r, ClaimsOutput)
}

// ExtendedResourceClaimStatus returns what kube-scheduler writes in the
// pod's status.extendedResourceClaimStatus along with the claim for its
// DRA-backed extended resources (the last of [Claims]): which of the
// claim's requests serves each container's extended resource. Nil when
// the pod has no such claim, or for a nil r.
func ExtendedResourceClaimStatus(r fwk.OutputHolder) *v1.PodExtendedResourceClaimStatus {
	return outputOf(r, ExtendedResourceClaimStatusOutput)
}

// Volumes returns the PersistentVolumes kube-scheduler assumes bound to
// the pod's unbound claims on r.SuggestedHost (VolumeBinding's Reserve):
// copies with spec.claimRef naming the claim. Empty when the pod's claims
// are all bound or provisioned, or for a nil r. Giving them to the
// listers the next cycle reads keeps a volume from being matched to two
// claims.
func Volumes(r fwk.OutputHolder) []*v1.PersistentVolume {
	return outputOf(r, VolumesOutput)
}

// ProvisionedClaims returns the pod's unbound claims that kube-scheduler
// assumes will be provisioned for r.SuggestedHost: copies annotated
// volume.kubernetes.io/selected-node with its name, as kube-scheduler
// writes them for the provisioner. Empty for a nil r.
func ProvisionedClaims(r fwk.OutputHolder) []*v1.PersistentVolumeClaim {
	return outputOf(r, ProvisionedClaimsOutput)
}

// ClaimToDeallocate returns the ResourceClaim DynamicResources'
// PostFilter deallocates so that its devices can be chosen anew: a copy
// of an allocated claim of the pod that some node could not use, with
// status.allocation, reservedFor and devices cleared, ready for an
// UpdateStatus. Nil when it deallocates nothing, or for a nil fe.
func ClaimToDeallocate(fe fwk.OutputHolder) *resourceapi.ResourceClaim {
	return outputOf(fe, DeallocateClaimOutput)
}

// ClaimToDelete returns the claim an earlier cycle made for the pod's
// DRA-backed extended resources, which DynamicResources' PostFilter
// deletes (after removing its finalizers) when it cannot be used. Nil
// when it deletes nothing, or for a nil fe.
func ClaimToDelete(fe fwk.OutputHolder) *resourceapi.ResourceClaim {
	return outputOf(fe, DeleteClaimOutput)
}

// outputOf returns h's output under k, the zero value for none or a nil
// h.
func outputOf[T any](h fwk.OutputHolder, k fwk.OutputKey[T]) T {
	var v T
	if h != nil {
		v, _ = k.Get(h.PluginOutputs())
	}
	return v
}
