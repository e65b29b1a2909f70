package volumebinding

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/internal/nodeaffinity"
)

// Explain says, for people, which of the pod's claims stand in the way on
// the node with that name and labels, and why: a bound volume that is
// missing or whose node affinity excludes the node (with the terms it
// fails), a claim being provisioned for another node, a claim no free
// volume reachable from the node matches and that its class cannot
// provision there (no provisioner, allowedTopologies, or no
// CSIStorageCapacity with room). Unlike Check it goes on past the first
// problem. It returns nil when the claims fit the node.
func (c *Claims) Explain(nodeName string, nodeLabels map[string]string) []string {
	if c == nil {
		return nil
	}
	// Matched against the labels only, as Check and kube-scheduler do.
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: nodeLabels}}
	var out []string
	for _, b := range c.bound {
		name := claimText(b.claim)
		if b.pv == nil {
			out = append(out, fmt.Sprintf("%s is bound to volume %s, which does not exist", name, b.claim.Spec.VolumeName))
			continue
		}
		affinity := b.affinity
		migrated := b.plugin != "" && b.csiErr == nil && slices.Contains(c.migrated[nodeName], b.plugin)
		if migrated {
			affinity = b.csiAffinity
		}
		if admits(affinity, node) {
			continue
		}
		msg := fmt.Sprintf("%s is bound to volume %s, whose node affinity excludes the node", name, b.pv.Name)
		if migrated {
			msg += " (as migrated to CSI)"
		} else if na := b.pv.Spec.NodeAffinity; na != nil && na.Required != nil {
			if terms := nodeaffinity.Unmet(na.Required, node); len(terms) > 0 {
				msg += ": " + strings.Join(terms, "; ")
			}
		}
		out = append(out, msg)
	}
	for _, u := range c.selected {
		if sel := u.claim.Annotations[annSelectedNode]; sel != nodeName {
			out = append(out, fmt.Sprintf("%s is being provisioned for node %s", claimText(u.claim), sel))
		}
	}
	var taken []*v1.PersistentVolume
	var unmatched []*unboundClaim
	if c.matchErr == nil {
		for _, u := range c.toMatch {
			if pv := u.match(node, taken); pv != nil {
				taken = append(taken, pv)
				continue
			}
			unmatched = append(unmatched, u)
		}
	}
	nodeSet := labels.Set(nodeLabels)
	for _, u := range unmatched {
		msg := fmt.Sprintf("%s (%s): no free PersistentVolume of class %s reachable from the node matches it", claimText(u.claim), sizeText(u), className(u))
		if why := u.class.cannotProvision(u, nodeSet); why != "" {
			out = append(out, msg+", and "+why)
		}
	}
	for _, u := range c.selected {
		if u.claim.Annotations[annSelectedNode] != nodeName {
			continue
		}
		if why := u.class.cannotProvision(u, nodeSet); why != "" {
			out = append(out, fmt.Sprintf("%s (%s): %s", claimText(u.claim), sizeText(u), why))
		}
	}
	return out
}

// cannotProvision says why the class cannot provision the claim for a
// node with these labels, or "" when it can.
func (p *provisioning) cannotProvision(u *unboundClaim, nodeLabels labels.Set) string {
	switch {
	case !p.provisioner:
		return fmt.Sprintf("class %s cannot provision volumes (it has no provisioner)", p.class.Name)
	case !p.admits(nodeLabels):
		return fmt.Sprintf("class %s's allowedTopologies exclude the node", p.class.Name)
	case u.hasRequest && p.checkCapacity && p.capacityFor(u.request.Value(), nodeLabels) == nil:
		return fmt.Sprintf("no CSIStorageCapacity of class %s reachable from the node has room for %s", p.class.Name, sizeText(u))
	}
	return ""
}

func claimText(c *v1.PersistentVolumeClaim) string {
	return fmt.Sprintf("claim %s/%s", c.Namespace, c.Name)
}

func sizeText(u *unboundClaim) string {
	if !u.hasRequest {
		return "no size"
	}
	// String caches its text in the Quantity: write a copy's, since
	// nodes are explained concurrently over the same claims.
	q := u.request
	return q.String()
}

func className(u *unboundClaim) string {
	if u.class != nil && u.class.class != nil {
		return u.class.class.Name
	}
	return ClaimClass(u.claim)
}
