package filter

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/requeue"
)

// claimChangeHelps is DynamicResources' ResourceClaim hint. A claim
// deleted while allocated helps (it freed devices, whoever's it is); one
// deleted otherwise does not. While some claim of the pod is missing,
// being deleted or not the pod's, no other claim event helps. Otherwise a
// claim that was deallocated helps, and so does one of the pod's claims
// being created or having its status changed. The pod's claims are read
// from the listers, which hold the claim's new state.
func (h clusterHints) claimChangeHelps(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, claim, err := requeue.Objects[*resourceapi.ResourceClaim](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if claim == nil {
		if old == nil {
			return fwk.Queue, requeue.ErrNoObject
		}
		if old.Status.Allocation != nil {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
	claims, err := dra.PodClaims(h.listers.ResourceClaims, pod)
	if err != nil {
		return fwk.QueueSkip, nil
	}
	if old != nil && old.Status.Allocation != nil && claim.Status.Allocation == nil {
		return fwk.Queue, nil
	}
	uses := false
	for _, c := range claims {
		uses = uses || c.UID == claim.UID
	}
	switch {
	case !uses:
		return fwk.QueueSkip, nil
	case old == nil:
		return fwk.Queue, nil
	case equality.Semantic.DeepEqual(&old.Status, &claim.Status):
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// podClaimsNowUsable is DynamicResources' pod hint: an update of the pod
// (the pod itself, which only [ownUpdate] checks before PodEventsByRole)
// after which all the claims the updated pod names can be had.
func (h clusterHints) podClaimsNowUsable(_ *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	_, updated, err := requeue.Objects[*v1.Pod](nil, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if updated == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if _, err := dra.PodClaims(h.listers.ResourceClaims, updated); err != nil {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
