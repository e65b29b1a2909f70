package main

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// DynamicResources' PreBind and Unreserve, as kube-scheduler v1.36.3
// runs them for a pod whose placement allocated or reserved
// ResourceClaims.

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

// unreserveClaims takes pod out of the reservedFor of the claims written
// for it, when another PreBind or its binding failed, as
// DynamicResources' Unreserve does: with a patch that removes its entry
// by UID whatever else changed. The allocation stays; a later cycle
// reuses it or PostFilter releases it.
func (c *Controller) unreserveClaims(ctx context.Context, pod *v1.Pod, claims []*resourceapi.ResourceClaim) {
	for _, claim := range claims {
		patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"reservedFor":[{"$patch":"delete","uid":%q}]}}`, claim.UID, pod.UID)
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Patch(ctx, claim.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			c.log.Error("unreserving a ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "pod", key(pod), "err", err)
		}
	}
}
