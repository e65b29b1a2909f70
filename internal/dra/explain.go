package dra

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Explain says which of the pod's claims stand in the way on ni, for
// people: allocated claims whose devices the node cannot reach or whose
// binding timed out, and, when allocating fails, each claim that cannot
// be allocated on the node even alone, or, when each can, that they
// cannot all be allocated together. It allocates each claim alone
// without remembering the result, so Filter's memo is untouched. It
// returns nil when it has nothing to add (the node fits, or Filter's
// reason says all there is).
func (p *Plugin) Explain(ctx context.Context, s *State, pod *v1.Pod, ni *nodeinfo.NodeInfo) []string {
	if s.Empty() || ni.Node() == nil {
		return nil
	}
	node := ni.Node()
	extended, _, status := s.extendedForNode(pod, ni)
	if status != nil {
		return s.explainExtended(ni, status)
	}
	var out []string
	for i, c := range s.claims {
		if sel := s.availableOn[i]; sel != nil && !sel.Match(node) {
			out = append(out, fmt.Sprintf("%s is allocated to devices this node cannot reach", claimName(s, i, c)))
			continue
		}
		if c.Status.Allocation == nil {
			continue
		}
		ready, err := readyForBinding(c)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: %v", claimName(s, i, c), err))
		case !ready && p.bindingTimedOut(c):
			out = append(out, fmt.Sprintf("%s: its devices' binding conditions did not turn true in time", claimName(s, i, c)))
		}
	}
	if s.allocator == nil {
		return out
	}
	toAllocate := s.toAllocate
	if extended != nil {
		toAllocate = append(toAllocate[:len(toAllocate)-1:len(toAllocate)-1], extended)
	}
	a, err := s.allocator.get(ctx)
	if err != nil {
		return append(out, err.Error())
	}
	together, err := p.tryAllocate(ctx, a, node, toAllocate)
	if err == nil && len(together) == len(toAllocate) {
		return out
	}
	alone := 0
	for _, c := range toAllocate {
		res, err := p.tryAllocate(ctx, a, node, []*resourceapi.ResourceClaim{c})
		if err == nil && len(res) == 1 {
			alone++
			continue
		}
		msg := fmt.Sprintf("%s (%s) cannot be allocated on this node", nameOf(s, c), describeRequests(c))
		if len(toAllocate) > 1 {
			msg += ", even alone"
		}
		if err != nil && errors.Is(err, structured.ErrFailedAllocationOnNode) {
			msg += ": " + err.Error()
		}
		out = append(out, msg)
	}
	if alone == len(toAllocate) && len(toAllocate) > 1 {
		names := make([]string, len(toAllocate))
		for i, c := range toAllocate {
			names[i] = nameOf(s, c)
		}
		out = append(out, fmt.Sprintf("%s can each be allocated on this node, but not all together", strings.Join(names, ", ")))
	}
	return out
}

// tryAllocate allocates claims on node within the filter timeout, as
// Filter does, but remembers nothing.
func (p *Plugin) tryAllocate(ctx context.Context, a structured.Allocator, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	if p.filterTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.filterTimeout)
		defer cancel()
	}
	return allocate(ctx, a, node, claims)
}

// claimName names the i-th of the pod's claims.
func claimName(s *State, i int, c *resourceapi.ResourceClaim) string {
	if i == s.extendedIndex() {
		return "the claim for the pod's extended resources"
	}
	return fmt.Sprintf("claim %s/%s", c.Namespace, c.Name)
}

// nameOf names a claim to allocate: one of the pod's, or the node's
// variant of the extended-resource claim.
func nameOf(s *State, c *resourceapi.ResourceClaim) string {
	for i, pc := range s.claims {
		if pc == c {
			return claimName(s, i, c)
		}
	}
	return "the claim for the pod's extended resources"
}

// describeRequests lists a claim's requests: "gpu: 2 of gpu.example.com".
func describeRequests(c *resourceapi.ResourceClaim) string {
	var parts []string
	for _, r := range c.Spec.Devices.Requests {
		switch {
		case r.Exactly != nil:
			parts = append(parts, r.Name+": "+describeExact(r.Exactly.AllocationMode, r.Exactly.Count, r.Exactly.DeviceClassName))
		case len(r.FirstAvailable) > 0:
			alts := make([]string, len(r.FirstAvailable))
			for i, sub := range r.FirstAvailable {
				alts[i] = sub.Name + ": " + describeExact(sub.AllocationMode, sub.Count, sub.DeviceClassName)
			}
			parts = append(parts, r.Name+": the first of "+strings.Join(alts, " or "))
		default:
			parts = append(parts, r.Name)
		}
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return strings.Join(parts, "; ")
}

func describeExact(mode resourceapi.DeviceAllocationMode, count int64, class string) string {
	if mode == resourceapi.DeviceAllocationModeAll {
		return "all devices of " + class
	}
	if count == 0 {
		count = 1
	}
	return fmt.Sprintf("%d of %s", count, class)
}

// explainExtended says why the pod's extended resources rule ni out
// before any allocation.
func (s *State) explainExtended(ni *nodeinfo.NodeInfo, status *fwk.Status) []string {
	if status.Message() == ReasonStaleExtendedClaim {
		c := s.claims[s.extendedIndex()]
		return []string{fmt.Sprintf("claim %s/%s, made for the pod's extended resources in an earlier attempt, still holds its requests: kube-scheduler deletes it and tries again", c.Namespace, c.Name)}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.scalars)) {
		q := s.scalars[name]
		if q == 0 || !IsExtendedResourceName(name) {
			continue
		}
		allocatable, offered := ni.Allocatable().ScalarResources[name]
		if !offered && (s.resolver.Class(name) == nil || allocatable != 0) {
			out = append(out, fmt.Sprintf("the pod requests %d %s: the node offers none and no DeviceClass provides it", q, name))
		}
	}
	return out
}
