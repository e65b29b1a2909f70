package main

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

// kubesched changes nothing in the cluster: when no node fits a pod, its
// PostFilter plugins write into the FitError what kube-scheduler v1.37.2
// would do, and this file does it.

// preemptionParallelism is how many victims are evicted at once, as many
// as kube-scheduler's parallelizer runs by default.
const preemptionParallelism = 16

// victimsToDelete returns the victims of p that need an API call: those
// whose deletion has not started. Nil when p is nil.
func victimsToDelete(p *fwk.Preemption) []*v1.Pod {
	if p == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(p.Victims), func(v *v1.Pod) bool { return v.DeletionTimestamp != nil })
}

// preempt carries out a preemption for preemptor as kube-scheduler's
// asynchronous preemption does: it clears the nominations of the
// lower-priority pods nominated to the node (an error there is logged,
// not returned), then evicts the victims in parallel. It returns the
// first eviction that failed, after which the others are cancelled.
//
// kube-scheduler evicts the last victim apart, so that its PreEnqueue
// check can tell when the preemption is over; the controller keeps the
// preemptor in flight until preempt returns instead, which needs no such
// care.
func (c *Controller) preempt(ctx context.Context, preemptor *v1.Pod, nominationsToClear, victims []*v1.Pod) error {
	for _, p := range nominationsToClear {
		if err := c.patchStatus(ctx, p, func(s *v1.PodStatus) bool {
			changed := s.NominatedNodeName != ""
			s.NominatedNodeName = ""
			return changed
		}); err != nil {
			c.log.Error("clearing the nomination of a lower-priority pod", "pod", key(p), "err", err)
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(preemptionParallelism)
	for _, victim := range victims {
		g.Go(func() error { return c.preemptVictim(ctx, preemptor, victim) })
	}
	return g.Wait()
}

// preemptVictim marks victim with the DisruptionTarget condition, saying
// why it goes, and deletes it. A victim already gone is no error.
func (c *Controller) preemptVictim(ctx context.Context, preemptor, victim *v1.Pod) error {
	cond := v1.PodCondition{
		Type:    v1.DisruptionTarget,
		Status:  v1.ConditionTrue,
		Reason:  v1.PodReasonPreemptionByScheduler,
		Message: fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
	}
	err := c.patchStatus(ctx, victim, func(s *v1.PodStatus) bool { return setCondition(s, victim.Generation, cond) })
	if err == nil {
		err = c.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		c.log.Info("victim already deleted", "preemptor", key(preemptor), "victim", key(victim))
	case err != nil:
		return fmt.Errorf("preempting %s: %w", key(victim), err)
	default:
		c.log.Info("preempted", "preemptor", key(preemptor), "victim", key(victim), "node", victim.Spec.NodeName)
	}
	return nil
}

// releaseClaims does what DynamicResources' PostFilter decided, which
// kube-scheduler does within that plugin: deallocate a claim so that its
// devices can be chosen anew, or delete the claim an earlier cycle made
// for the pod's DRA-backed extended resources. Errors are logged: the
// pod is tried again either way.
func (c *Controller) releaseClaims(ctx context.Context, fe *framework.FitError) {
	if claim := filter.ClaimToDeallocate(fe); claim != nil {
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			c.log.Error("deallocating a ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "err", err)
		}
	}
	if claim := filter.ClaimToDelete(fe); claim != nil {
		if err := c.deleteClaim(ctx, claim.DeepCopy()); err != nil {
			c.log.Error("deleting a ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "err", err)
		}
	}
}

// deleteClaim removes the ResourceClaim controller's finalizer from claim,
// which would otherwise hold the deletion back, reading the claim again
// after a conflict, and deletes it. It modifies claim.
func (c *Controller) deleteClaim(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	claims := c.client.ResourceV1().ResourceClaims(claim.Namespace)
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			latest, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			claim = latest
		}
		first = false
		claim.Finalizers = slices.DeleteFunc(claim.Finalizers, func(f string) bool { return f == resourceapi.Finalizer })
		_, err := claims.Update(ctx, claim, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return claims.Delete(ctx, claim.Name, metav1.DeleteOptions{})
}
