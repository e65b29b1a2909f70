package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// DynamicResources' PreBind and Unreserve, as kube-scheduler v1.37.2
// runs them for a pod whose placement allocated or reserved
// ResourceClaims, or needs a claim for its DRA-backed extended
// resources.

// kube-scheduler's PreBind waits for its informer to report the claim
// it created for a pod's extended resources, looking at once and then
// every second, at most 120 seconds
// (AssumeExtendedResourceTimeoutDefaultSeconds), before it stops
// counting the devices it assumed allocated to it.
const (
	extendedClaimPollInterval = time.Second
	extendedClaimTimeout      = 120 * time.Second
)

// claimWrites is what DynamicResources' PreBind wrote for a pod, which
// Unreserve undoes when the pod is not bound.
type claimWrites struct {
	// reserved are the pod's own claims written with it in reservedFor.
	reserved []*resourceapi.ResourceClaim
	// extended is the claim created for the pod's DRA-backed extended
	// resources: as created, or as last written once PreBind wrote all
	// of it. Nil when none was created.
	extended *resourceapi.ResourceClaim
}

// bindClaims is DynamicResources' PreBind: it writes the placement's
// claims (filter.Claims) in order and stops at the first that
// fails (writeClaims for the pod's own claims). When ext
// (filter.ExtendedResourceClaimStatus) is set, the last claim is the one
// to create for the pod's extended resources (see bindExtendedClaim).
// pod is the pod as the API server has it. What was written is recorded
// in w, for unreserveClaims.
func (c *Controller) bindClaims(ctx context.Context, pod *v1.Pod, claims []*resourceapi.ResourceClaim, ext *v1.PodExtendedResourceClaimStatus, w *claimWrites) error {
	own := claims
	if ext != nil {
		own = claims[:len(claims)-1]
	}
	written, err := c.writeClaims(ctx, own)
	w.reserved = written
	if err != nil || ext == nil {
		return err
	}
	return c.bindExtendedClaim(ctx, pod, claims[len(claims)-1], ext, w)
}

// writeClaims writes what the placement did to the pod's ResourceClaims
// before the pod is bound, as DynamicResources' PreBind does: the
// finalizer that keeps an allocated claim, then the allocation and the
// pod in reservedFor. A conflict reads the claim again and reapplies the
// change, unless another writer allocated it meanwhile. It returns the
// claims it wrote, those before the one that failed.
func (c *Controller) writeClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) ([]*resourceapi.ResourceClaim, error) {
	for i, want := range claims {
		api := c.client.ResourceV1().ResourceClaims(want.Namespace)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			claim, err := api.Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if claim.UID != want.UID {
				return fmt.Errorf("ResourceClaim %s/%s was replaced", want.Namespace, want.Name)
			}
			if claim.Status.Allocation != nil && want.Status.Allocation != nil && !equality.Semantic.DeepEqual(claim.Status.Allocation, want.Status.Allocation) {
				return fmt.Errorf("ResourceClaim %s/%s was allocated meanwhile", want.Namespace, want.Name)
			}
			missing := false
			for _, f := range want.Finalizers {
				if !slices.Contains(claim.Finalizers, f) {
					claim.Finalizers = append(claim.Finalizers, f)
					missing = true
				}
			}
			if missing {
				if claim, err = api.Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
					return err
				}
			}
			claim.Status.Allocation = want.Status.Allocation
			claim.Status.ReservedFor = want.Status.ReservedFor
			_, err = api.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return claims[:i], fmt.Errorf("writing ResourceClaim %s/%s: %w", want.Namespace, want.Name, err)
		}
	}
	return claims, nil
}

// bindExtendedClaim is PreBind for the claim of a pod's DRA-backed
// extended resources, in kube-scheduler's order and words: it creates
// the claim from want (without the placement's name, which the API
// server replaces from its generateName, and without its finalizer,
// allocation and reservation), adds the finalizer, writes the
// allocation with the pod in reservedFor (reading the claim again after
// a conflict), and records the claim's name and which of its requests
// serves each container in the pod's status.extendedResourceClaimStatus.
//
// The cache holds want, under the name the placement gave it, so that no
// other pod gets its devices meanwhile. Once the claim exists, whatever
// else fails, bindExtendedClaim waits until the cache holds the claim as
// last written (see awaitClaim) and drops want from it.
func (c *Controller) bindExtendedClaim(ctx context.Context, pod *v1.Pod, want *resourceapi.ResourceClaim, ext *v1.PodExtendedResourceClaimStatus, w *claimWrites) error {
	api := c.client.ResourceV1().ResourceClaims(want.Namespace)
	claim := want.DeepCopy()
	claim.Name, claim.UID = "", ""
	claim.Finalizers = slices.DeleteFunc(claim.Finalizers, func(f string) bool { return f == resourceapi.Finalizer })
	claim.Status = resourceapi.ResourceClaimStatus{}
	created, err := api.Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		// kube-scheduler names the claim before the API server does.
		return fmt.Errorf("create claim for extended resources %s/: %w", want.Namespace, err)
	}
	c.log.Debug("created a claim for extended resources", "pod", key(pod), "claim", created.Name)
	w.extended = created
	claim = created.DeepCopy()
	defer func() {
		c.awaitClaim(ctx, claim)
		if err := c.cache.RemoveClaim(want); err != nil {
			c.log.Error("dropping the assumed claim for extended resources", "pod", key(pod), "err", err)
		}
	}()
	name := created.Namespace + "/" + created.Name
	reread := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if reread {
			latest, err := api.Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get updated claim %s after conflict: %w", name, err)
			}
			claim = latest
		}
		reread = true
		switch {
		case claim.DeletionTimestamp != nil:
			return fmt.Errorf("claim %s got deleted in the meantime", name)
		case claim.Status.Allocation != nil:
			return fmt.Errorf("claim %s got allocated elsewhere in the meantime", name)
		}
		if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
			claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
			updated, err := api.Update(ctx, claim, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("add finalizer to claim %s: %w", name, err)
			}
			claim = updated
		}
		claim.Status.Allocation = want.Status.Allocation.DeepCopy()
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{
			Resource: "pods", Name: pod.Name, UID: pod.UID,
		})
		updated, err := api.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("add allocation and reservation to claim %s: %w", name, err)
		}
		claim = updated
		return nil
	})
	if err != nil {
		return err
	}
	if err := c.patchStatus(ctx, pod, func(s *v1.PodStatus) bool {
		s.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{RequestMappings: ext.RequestMappings, ResourceClaimName: claim.Name}
		return true
	}); err != nil {
		return fmt.Errorf("update pod %s/%s ExtendedResourceClaimStatus: %w", pod.Namespace, pod.Name, err)
	}
	w.extended = claim
	return nil
}

// awaitClaim waits until the cache, fed by the informer, holds claim as
// written or a later version of it, looking at once and then every
// second, at most extendedClaimTimeout, as kube-scheduler waits for its
// assume cache. Until then the informer may still report an older
// version, without the allocation. Giving up is logged, not an error,
// as there.
func (c *Controller) awaitClaim(ctx context.Context, claim *resourceapi.ResourceClaim) {
	err := wait.PollUntilContextTimeout(ctx, extendedClaimPollInterval, extendedClaimTimeout, true, func(context.Context) (bool, error) {
		cached, err := c.cache.ResourceClaims().Get(claim.Namespace, claim.Name)
		return err == nil && !olderThan(cached, claim), nil
	})
	if err != nil {
		c.log.Info("the cache has not seen the claim made for extended resources", "claim", claim.Namespace+"/"+claim.Name, "err", err)
	}
}

// unreserveClaims is DynamicResources' Unreserve, when another PreBind
// or the binding failed. It takes pod out of the reservedFor of its own
// claims written for it, with a patch that removes its entry by UID
// whatever else changed (the allocation stays; a later cycle reuses it
// or PostFilter releases it), then deletes the claim created for its
// extended resources, which a later cycle creates anew.
func (c *Controller) unreserveClaims(ctx context.Context, pod *v1.Pod, w claimWrites) {
	for _, claim := range w.reserved {
		patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"reservedFor":[{"$patch":"delete","uid":%q}]}}`, claim.UID, pod.UID)
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Patch(ctx, claim.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			c.log.Error("unreserving a ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "pod", key(pod), "err", err)
		}
	}
	if claim := w.extended; claim != nil {
		if err := c.deleteClaim(ctx, claim.DeepCopy()); err != nil {
			c.log.Error("deleting the claim made for extended resources", "claim", claim.Namespace+"/"+claim.Name, "pod", key(pod), "err", err)
		}
	}
}
