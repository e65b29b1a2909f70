package topologyspread

import (
	"context"
	"fmt"
	"maps"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Verdict is the outcome of [Domains.Check] for one node.
type Verdict int

const (
	// Fits: placing the pod on the node keeps every hard constraint.
	Fits Verdict = iota
	// MissingLabel: the node lacks a constraint's topology key, which no
	// other pod's movement can change.
	MissingLabel
	// TooSkewed: the node's domain would exceed a constraint's maxSkew.
	TooSkewed
)

// Domains holds, for one pod's hard constraints, how many matching pods each
// topology domain has: what Filter checks every node against. Build it once
// per pod with [NewDomains]; [Domains.Check] may then run concurrently, but
// [Domains.Update] must not run concurrently with anything.
type Domains struct {
	constraints []Constraint
	// selfMatch[i] is 1 when the pod itself matches constraint i's selector:
	// placing it adds one to its domain.
	selfMatch []int
	// counts[i] maps each domain of constraint i to its matching pods; a
	// domain is present when some eligible node is in it, even with no pods.
	counts []map[string]int
	// lowest[i] tracks the emptiest domain of constraint i.
	lowest      []lowestTwo
	eligibility eligibility
}

// NewDomains counts, over nodes (every node of the cluster), the pods
// matching each of cs, pod's hard constraints. A node counts only if it
// has every constraint's topology key; for each constraint it must also
// pass that constraint's node inclusion policies. It returns an error only
// if ctx is cancelled. What inc holds spares the count the nodes that did
// not change since the last.
func NewDomains(ctx context.Context, pod *v1.Pod, cs []Constraint, nodes []*nodeinfo.NodeInfo, inc Incremental) (*Domains, error) {
	d := &Domains{
		constraints: cs,
		selfMatch:   make([]int, len(cs)),
		lowest:      make([]lowestTwo, len(cs)),
		eligibility: eligibilityOf(pod),
	}
	if len(cs) == 0 {
		return d, nil
	}
	var err error
	if d.counts, err = countDomains(ctx, pod, cs, &d.eligibility, nodes, inc, true, nil, nil); err != nil {
		return nil, err
	}
	podLabels := labels.Set(pod.Labels)
	for i := range cs {
		if cs[i].Selector.Matches(podLabels) {
			d.selfMatch[i] = 1
		}
	}
	for i := range cs {
		d.lowest[i] = newLowestTwo()
		for v, c := range d.counts[i] {
			d.lowest[i].set(v, c)
		}
	}
	return d, nil
}

// Empty reports whether there are no hard constraints: every node fits.
func (d *Domains) Empty() bool { return len(d.constraints) == 0 }

// Constraints returns the constraints counted. They must not be modified.
func (d *Domains) Constraints() []Constraint { return d.constraints }

// Count returns how many matching pods domain value of constraint i holds,
// and whether the domain exists.
func (d *Domains) Count(i int, value string) (int, bool) {
	c, ok := d.counts[i][value]
	return c, ok
}

// Check tells whether placing the pod on a node with nodeLabels keeps every constraint, in
// constraint order: for each, the node must have the topology key, and the
// node's domain count, plus one if the pod matches itself, minus the global
// minimum must not exceed maxSkew. The global minimum is the emptiest
// domain's count, or 0 while there are fewer domains than minDomains. It
// does not allocate.
func (d *Domains) Check(nodeLabels map[string]string) Verdict {
	for i := range d.constraints {
		c := &d.constraints[i]
		value, ok := nodeLabels[c.TopologyKey]
		if !ok {
			return MissingLabel
		}
		lowest := d.lowest[i][0].count
		if len(d.counts[i]) < int(c.MinDomains) {
			lowest = 0
		}
		if d.counts[i][value]+d.selfMatch[i]-lowest > int(c.MaxSkew) {
			return TooSkewed
		}
	}
	return Fits
}

// Update accounts for p being added to (delta 1) or removed from (delta
// -1) node, for a "what if" evaluation. p counts only if it is in the
// namespace of podToSchedule (the pod the Domains were built for), node has
// every topology key, and for each constraint it matches the selector and
// node passes the inclusion policies. Unlike the initial count, a pod being
// deleted counts.
func (d *Domains) Update(p, podToSchedule *v1.Pod, node *v1.Node, delta int) {
	if p.Namespace != podToSchedule.Namespace || node == nil || !hasAllKeys(node.Labels, d.constraints) {
		return
	}
	podLabels := labels.Set(p.Labels)
	for i := range d.constraints {
		c := &d.constraints[i]
		if !c.Selector.Matches(podLabels) || !d.eligibility.includes(c, node) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		d.counts[i][v] += delta
		d.lowest[i].set(v, d.counts[i][v])
	}
}

// CloneState returns a copy whose counts can be updated without changing
// d's. It implements fwk.StateCloner.
func (d *Domains) CloneState() any {
	c := *d
	c.counts = make([]map[string]int, len(d.counts))
	for i, m := range d.counts {
		c.counts[i] = maps.Clone(m)
	}
	c.lowest = append([]lowestTwo(nil), d.lowest...)
	return &c
}

// lowestTwo remembers two domains with few pods, the emptiest first,
// updated as counts change so that the global minimum needs no scan of all
// domains. After the initial counts it holds the two emptiest domains. As
// in kube-scheduler, updates keep the first exact only while they touch one
// domain at a time, which is how nominated pods and preemption victims on
// one node change counts; the second may then be stale.
type lowestTwo [2]struct {
	value string
	count int
}

func newLowestTwo() lowestTwo {
	var l lowestTwo
	l[0].count, l[1].count = math.MaxInt32, math.MaxInt32
	return l
}

// set records that domain value now has count pods.
func (l *lowestTwo) set(value string, count int) {
	// The empty slots' value is "", so a domain named "" takes the first
	// free slot it meets, exactly as in kube-scheduler.
	switch value {
	case l[0].value:
		l[0].count = count
	case l[1].value:
		l[1].count = count
	default:
		switch {
		case count < l[0].count:
			l[1] = l[0]
			l[0].value, l[0].count = value, count
		case count < l[1].count:
			l[1].value, l[1].count = value, count
		}
		return
	}
	if l[0].count > l[1].count {
		l[0], l[1] = l[1], l[0]
	}
}

// Explain says, for each constraint a node with nodeLabels fails, why:
// the topology label it lacks, or the skew placing the pod there would
// make. It says nothing for a node Check lets through.
func (d *Domains) Explain(nodeLabels map[string]string) []string {
	var out []string
	for i := range d.constraints {
		c := &d.constraints[i]
		value, ok := nodeLabels[c.TopologyKey]
		if !ok {
			out = append(out, fmt.Sprintf("the node has no %s label", c.TopologyKey))
			continue
		}
		lowest := d.lowest[i][0].count
		if len(d.counts[i]) < int(c.MinDomains) {
			lowest = 0
		}
		after := d.counts[i][value] + d.selfMatch[i]
		if skew := after - lowest; skew > int(c.MaxSkew) {
			out = append(out, fmt.Sprintf("%s=%s would hold %d matching pods against %d in the emptiest domain: skew %d, maxSkew %d", c.TopologyKey, value, after, lowest, skew, c.MaxSkew))
		}
	}
	return out
}
