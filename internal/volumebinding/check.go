package volumebinding

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
)

// Placement is what Check decided for a node that fits: the volumes the
// unbound claims would bind, and the claims that would be provisioned.
// The capacity scorer reads it.
type Placement struct {
	static  []binding
	dynamic []provision
}

type binding struct {
	claim *v1.PersistentVolumeClaim
	pv    *v1.PersistentVolume
}

type provision struct {
	claim *v1.PersistentVolumeClaim
	// capacity is the CSIStorageCapacity that has room, nil if the
	// class's driver publishes none or the claim has no size.
	capacity *storagev1.CSIStorageCapacity
}

// Check decides whether the node with the given name and labels can hold
// the pod's volumes, as kube-scheduler's FindPodVolumes does: the bound
// volumes' node affinity must admit the node, and every unbound claim
// must find a free matching volume there or be provisionable there. It
// returns the conflicts (none when the node fits) or an Error status
// when a claim's selector does not parse or a bound in-tree volume cannot
// be translated to CSI. When the node fits and out is not nil, Check
// fills it. A nil Claims fits every node. Check is safe for concurrent
// use and allocates nothing when out is nil.
func (c *Claims) Check(nodeName string, nodeLabels map[string]string, out *Placement) (Conflicts, *fwk.Status) {
	if c == nil {
		return 0, nil
	}
	// kube-scheduler matches volume node affinity against a node that has
	// only the labels: matchFields on metadata.name are ignored.
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: nodeLabels}}
	var conflicts Conflicts
	for _, b := range c.bound {
		if b.pv == nil {
			conflicts |= PVNotExist
			break
		}
		affinity := b.affinity
		if b.plugin != "" && slices.Contains(c.migrated[nodeName], b.plugin) {
			if b.csiErr != nil {
				return 0, b.csiErr
			}
			affinity = b.csiAffinity
		}
		if !admits(affinity, node) {
			conflicts |= NodeConflict
			break
		}
	}
	if len(c.selected)+len(c.toMatch) == 0 {
		return conflicts, nil
	}
	// A claim being provisioned for another node cannot come here.
	for _, u := range c.selected {
		if u.claim.Annotations[annSelectedNode] != nodeName {
			return conflicts | BindConflict, nil
		}
	}

	// The pod has a handful of claims: fixed buffers keep Filter free of
	// allocations.
	var chosenBuf, unmatchedBuf [8]*unboundClaim
	var volumeBuf [8]*v1.PersistentVolume
	chosen, unmatched, volumes := chosenBuf[:0], unmatchedBuf[:0], volumeBuf[:0]
	if len(c.toMatch) > 0 {
		if c.matchErr != nil {
			return 0, c.matchErr
		}
		for _, u := range c.toMatch {
			pv := u.match(node, volumes)
			if pv == nil {
				unmatched = append(unmatched, u)
				continue
			}
			chosen, volumes = append(chosen, u), append(volumes, pv)
		}
	}
	bindable := len(unmatched) == 0
	if len(c.selected) > 0 || len(unmatched) > 0 {
		var enough bool
		bindable, enough = c.provisionable(unmatched, node, out)
		if !enough {
			conflicts |= NotEnoughSpace
		}
	}
	if !bindable {
		conflicts |= BindConflict
	}
	if conflicts == 0 && out != nil {
		for i, u := range chosen {
			out.static = append(out.static, binding{claim: u.claim, pv: volumes[i]})
		}
	}
	return conflicts, nil
}

// admits reports whether a volume's compiled node affinity (nil: none)
// lets the node use it.
func admits(affinity *nodeaffinity.Selector, node *v1.Node) bool {
	return affinity == nil || affinity.Matches(node)
}

// match returns the volume the claim binds on node, or nil: a volume
// pre-bound to the claim if it is the first such candidate (nil if it
// does not admit the node), else the smallest candidate that admits the
// node and is not taken, the first listed among equals.
func (u *unboundClaim) match(node *v1.Node, taken []*v1.PersistentVolume) *v1.PersistentVolume {
	list := &u.candidates
	// Merge the two index lists to visit candidates in list order.
	anyHost, onHost := list.anyHost, list.onHost[node.Labels[v1.LabelHostname]]
	var best *candidate
	for len(anyHost) > 0 || len(onHost) > 0 {
		var i int
		if len(onHost) == 0 || len(anyHost) > 0 && anyHost[0] < onHost[0] {
			i, anyHost = anyHost[0], anyHost[1:]
		} else {
			i, onHost = onHost[0], onHost[1:]
		}
		cand := &list.all[i]
		if isTaken(cand.pv, taken) {
			continue
		}
		ok := cand.affinity.admits(node)
		if cand.prebound {
			if !ok {
				return nil
			}
			return cand.pv
		}
		if ok && (best == nil || best.size.Cmp(cand.size) > 0) {
			best = cand
		}
	}
	if best == nil {
		return nil
	}
	return best.pv
}

// isTaken reports whether another claim of the pod chose pv on this node.
// Volumes are told apart by name, as kube-scheduler does.
func isTaken(pv *v1.PersistentVolume, taken []*v1.PersistentVolume) bool {
	for _, t := range taken {
		if t.Name == pv.Name {
			return true
		}
	}
	return false
}

// provisionable checks the claims to provision on node, the selected ones
// first, then unmatched, and stops at the first that cannot be: bindable
// is false when its class cannot provision or its allowed topologies
// exclude the node, enough is false when no capacity has room for it.
// When both hold and out is not nil, it records the provisions.
func (c *Claims) provisionable(unmatched []*unboundClaim, node *v1.Node, out *Placement) (bindable, enough bool) {
	nodeLabels := labels.Set(node.Labels)
	n := len(c.selected) + len(unmatched)
	for i := range n {
		u := c.selectedOrUnmatched(i, unmatched)
		p := u.class
		if !p.provisioner || !p.admits(nodeLabels) {
			return false, true
		}
		if !u.hasRequest || !p.checkCapacity {
			continue
		}
		if p.capacityFor(u.request.Value(), nodeLabels) == nil {
			return true, false
		}
	}
	if out != nil {
		for i := range n {
			u := c.selectedOrUnmatched(i, unmatched)
			var room *storagev1.CSIStorageCapacity
			if u.hasRequest && u.class.checkCapacity {
				room = u.class.capacityFor(u.request.Value(), nodeLabels)
			}
			out.dynamic = append(out.dynamic, provision{claim: u.claim, capacity: room})
		}
	}
	return true, true
}

func (c *Claims) selectedOrUnmatched(i int, unmatched []*unboundClaim) *unboundClaim {
	if i < len(c.selected) {
		return c.selected[i]
	}
	return unmatched[i-len(c.selected)]
}

// admits reports whether the class's allowed topologies include the node.
func (p *provisioning) admits(nodeLabels labels.Set) bool {
	if p.anyTopology {
		return true
	}
	for _, sel := range p.topologies {
		if sel.Matches(nodeLabels) {
			return true
		}
	}
	return false
}

// capacityFor returns the first of the class's capacities reachable from
// the node with room for a volume of size bytes, or nil.
func (p *provisioning) capacityFor(size int64, nodeLabels labels.Set) *storagev1.CSIStorageCapacity {
	for i := range p.capacities {
		c := &p.capacities[i]
		if c.hasLimit && c.limit >= size && c.nodes != nil && c.nodes.Matches(nodeLabels) {
			return c.c
		}
	}
	return nil
}
