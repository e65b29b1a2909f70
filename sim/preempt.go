package sim

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

// PlacePreempting places pod as [Cluster.Place] does and, when no node
// fits it but DefaultPreemption decided to make room (the FitError's
// Preemption), acts on that decision as kube-scheduler and the cluster
// would: the victims are deleted from the cluster (at once: their
// graceful termination is not simulated), and the pod, nominated to the
// chosen node (status.nominatedNodeName on a copy), is scheduled again in
// the next cycle, which tries that node first. It returns that cycle's
// Result and the preemption acted on; nil and no error besides the
// Result for a pod that fit at once. A pod no node fits without room to
// make returns Place's FitError and no preemption; a pod that still fits
// nowhere after the evictions returns the second cycle's error with the
// preemption, whose victims are gone.
func (c *Cluster) PlacePreempting(ctx context.Context, pod *v1.Pod) (*framework.Result, *fwk.Preemption, error) {
	res, err := c.Place(ctx, pod)
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) || fitErr.Preemption == nil {
		return res, nil, err
	}
	p := fitErr.Preemption
	for _, victim := range p.Victims {
		if err := c.RemovePod(victim.Namespace, victim.Name); err != nil {
			return nil, p, fmt.Errorf("evicting %s/%s: %w", victim.Namespace, victim.Name, err)
		}
	}
	nominated := pod.DeepCopy()
	nominated.Status.NominatedNodeName = p.NominatedNodeName
	res, err = c.Place(ctx, nominated)
	return res, p, err
}

// Preempt has [Cluster.PlaceAll] place each pod as
// [Cluster.PlacePreempting] does: a pod that fits nowhere but for which
// DefaultPreemption makes room evicts its victims and is placed in the
// next cycle, before the pods after it. fn, if not nil, is called with
// the pod's position in the list and each preemption acted on, before
// AfterEach's call for that pod. First fit ([FirstFit]) does not preempt,
// as cluster-autoscaler's does not.
func Preempt(fn func(i int, p *fwk.Preemption)) PlaceOption {
	return func(c *placeConfig) error {
		c.preempt = true
		c.onPreemption = fn
		return nil
	}
}
