package topologyspread

import (
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/incremental"
	"github.com/kubesched/kubesched/internal/podcount"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Aggregates remember, per way of counting (see aggregateKey), the
// domain counts of the last node list counted and each node's share of
// them, so that counting again over a list where few nodes changed (a
// simulation placing pod after pod, a snapshot updated in place) visits
// the changed nodes alone (see package incremental for the words). The
// zero value is ready; each plugin holds its own, so that two frameworks
// share none.
type Aggregates struct {
	values incremental.ByKey[aggregate]
}

// Incremental is what a count may keep and consult from one cycle to the
// next. Every field may be zero: a count then visits every node.
type Incremental struct {
	// Aggregates, when not nil, are where counts are kept across cycles.
	Aggregates *Aggregates
	// Gens, when not nil, are the counted nodes' generations
	// (fwk.cycle.Hooks.NodeGenerations), which spare reading the
	// unchanged ones.
	Gens []int64
	// State, when not nil, is the cycle's, which may tell which nodes
	// changed since the last count.
	State *fwk.CycleState
}

// aggregate is one way of counting's running totals, used by one count
// at a time; another count at the same time counts without it.
type aggregate struct {
	// positions are the counted nodes' generations and the list's
	// version.
	positions incremental.Positions
	// Per counted constraint c: dom[c][p] is position p's domain (-1: not
	// counted) and share[c][p] its matching pods; ids and values number
	// the domains; sums and members are each domain's matching pods and
	// counted nodes.
	dom, share [][]int32
	ids        []map[string]int32
	values     [][]string
	sums       [][]int
	members    [][]int32

	// alike[p] numbers what position p's raw score depends on, for at
	// most alikeConstraints constraints: its domain under each, or for a
	// hostname constraint its matching pods; -1 when the node is not
	// numbered (too many domains or pods, the domain "", whose label may
	// be missing, or not counted). Nodes alike score alike in a cycle;
	// raws[k] is the raw score of alike number k in the cycle stamps[k]
	// names (Scores.scoreAll's stamp).
	alike  []int32
	raws   []int64
	stamps []uint32
	stamp  uint32
	// uncounted is how many positions the first constraint does not
	// count (dom[0][p] is -1).
	uncounted int
}

// At most alikeConstraints constraints, each with fewer than alikeRadix
// domains or matching pods, number the nodes alike.
const (
	alikeConstraints = 2
	alikeRadix       = 64
)

// cacheable reports whether countDomains' result for pod and cs is a sum
// of what each node holds alone, so that an aggregate can keep it: the
// inclusion policies must not depend on the pod (no taint policy, and
// node affinity honoured only for a pod that requires none).
func cacheable(pod *v1.Pod, cs []Constraint) bool {
	affinityFree := len(pod.Spec.NodeSelector) == 0 &&
		(pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil || pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil)
	for i := range cs {
		if cs[i].NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
			return false
		}
		if cs[i].NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && !affinityFree {
			return false
		}
	}
	return true
}

// aggregateKey describes a way of counting: the namespace, whether every
// topology key is required (and which), and the counted constraints'
// keys and selectors.
func aggregateKey(ns string, cs []Constraint, requireAll bool, counted []bool) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(ns)))
	b.WriteByte(':')
	b.WriteString(ns)
	if requireAll {
		b.WriteString("all:")
		for i := range cs {
			b.WriteString(strconv.Itoa(len(cs[i].TopologyKey)))
			b.WriteByte(':')
			b.WriteString(cs[i].TopologyKey)
		}
	}
	for i := range cs {
		if counted != nil && !counted[i] {
			b.WriteString("skip;")
			continue
		}
		b.WriteString(strconv.Itoa(len(cs[i].TopologyKey)))
		b.WriteByte(':')
		b.WriteString(cs[i].TopologyKey)
		podcount.SelectorText(&b, cs[i].Selector)
	}
	return b.String()
}

// count brings a up to date with nodes, counting again the nodes that
// changed since, and returns the domain counts as countDomains does.
func (a *aggregate) count(pod *v1.Pod, cs []Constraint, keys []podcount.Key, nodes []*nodeinfo.NodeInfo, gens []int64, state *fwk.CycleState, requireAll bool, want func(i int, value string) bool, counted []bool) []map[string]int {
	a.update(pod, cs, keys, nodes, gens, state, requireAll, counted)
	out := make([]map[string]int, len(cs))
	for c := range cs {
		out[c] = map[string]int{}
		if counted != nil && !counted[c] {
			continue
		}
		for d, value := range a.values[c] {
			if a.members[c][d] > 0 && (want == nil || want(c, value)) {
				out[c][value] = a.sums[c][d]
			}
		}
	}
	return out
}

// update brings a up to date with nodes, counting again the nodes that
// changed since ([incremental.Positions.Sync] for gens and state).
func (a *aggregate) update(pod *v1.Pod, cs []Constraint, keys []podcount.Key, nodes []*nodeinfo.NodeInfo, gens []int64, state *fwk.CycleState, requireAll bool, counted []bool) {
	if a.positions.Len() != len(nodes) || len(a.dom) != len(cs) || a.outgrown() {
		a.reset(len(nodes), len(cs))
	}
	a.positions.Sync(state, nodes, gens, func(p int, ni *nodeinfo.NodeInfo, since int64) {
		if since == 0 || !a.shift(pod, cs, keys, ni, p, since, counted) {
			a.recount(pod, cs, keys, ni, p, requireAll, counted)
		}
		a.alike[p] = a.alikeOf(cs, p, counted)
	})
}

// recount counts position p, holding ni, again.
func (a *aggregate) recount(pod *v1.Pod, cs []Constraint, keys []podcount.Key, ni *nodeinfo.NodeInfo, p int, requireAll bool, counted []bool) {
	nodeLabels := ni.Labels()
	counts := ni.Node() != nil && (!requireAll || hasAllKeys(nodeLabels, cs))
	for c := range cs {
		if counted != nil && !counted[c] {
			continue
		}
		if d := a.dom[c][p]; d >= 0 {
			a.sums[c][d] -= int(a.share[c][p])
			a.members[c][d]--
			if c == 0 {
				a.uncounted++
			}
		}
		a.dom[c][p], a.share[c][p] = -1, 0
		if !counts {
			continue
		}
		if c == 0 {
			a.uncounted--
		}
		value := nodeLabels[cs[c].TopologyKey]
		d, ok := a.ids[c][value]
		if !ok {
			d = int32(len(a.values[c]))
			a.ids[c][value] = d
			a.values[c] = append(a.values[c], value)
			a.sums[c] = append(a.sums[c], 0)
			a.members[c] = append(a.members[c], 0)
		}
		n := countMatching(ni, cs[c].Selector, pod.Namespace, keys[c])
		a.dom[c][p], a.share[c][p] = d, int32(n)
		a.sums[c][d] += n
		a.members[c][d]++
	}
}

// shift brings position p's counts up to date with ni by the pods added
// to it and removed from it since generation since, when ni knows them and
// nothing else changed (NodeInfo.PodChangesSince): the node, its labels, and
// so its domains, are the same. keys are the constraints' counting keys
// (matchKey). It reports false, having changed nothing, otherwise.
func (a *aggregate) shift(pod *v1.Pod, cs []Constraint, keys []podcount.Key, ni *nodeinfo.NodeInfo, p int, since int64, counted []bool) bool {
	changes, ok := ni.PodChangesSince(since)
	if !ok {
		return false
	}
	for _, ch := range changes {
		// Constraints with the same key (kube-scheduler's default
		// constraints: hostname and zone) match alike: match once.
		var last podcount.Key
		var matched, known bool
		for c := range cs {
			if counted != nil && !counted[c] {
				continue
			}
			d := a.dom[c][p]
			if d < 0 {
				continue
			}
			if !known || keys[c] != last {
				last, matched, known = keys[c], matches(ch.Pod.Pod, cs[c].Selector, pod.Namespace), true
			}
			if matched {
				a.share[c][p] += int32(ch.Sign)
				a.sums[c][d] += ch.Sign
			}
		}
	}
	return true
}

// alikeOf numbers what position p's raw score depends on (see
// aggregate.alike).
func (a *aggregate) alikeOf(cs []Constraint, p int, counted []bool) int32 {
	if len(cs) > alikeConstraints {
		return -1
	}
	k, radix := int32(0), int32(1)
	for c := range cs {
		if counted != nil && !counted[c] {
			return -1
		}
		d := a.dom[c][p]
		if d < 0 || a.values[c][d] == "" {
			return -1
		}
		v := d
		if cs[c].TopologyKey == v1.LabelHostname {
			v = a.share[c][p]
		}
		if v < 0 || v >= alikeRadix {
			return -1
		}
		k += v * radix
		radix *= alikeRadix
	}
	return k
}

// outgrown reports whether a numbers many more domains than it has
// nodes, as when nodes come and go for long (hostnames): starting over
// keeps its memory in proportion to the cluster.
func (a *aggregate) outgrown() bool {
	for _, values := range a.values {
		if len(values) > 2*a.positions.Len()+64 {
			return true
		}
	}
	return false
}

// reset empties a for n nodes and k constraints.
func (a *aggregate) reset(n, k int) {
	a.positions.Reset(n)
	a.uncounted = n
	a.alike = make([]int32, n)
	for p := range a.alike {
		a.alike[p] = -1
	}
	size := 1
	for range min(k, alikeConstraints) {
		size *= alikeRadix
	}
	a.raws, a.stamps, a.stamp = make([]int64, size), make([]uint32, size), 0
	a.dom, a.share = make([][]int32, k), make([][]int32, k)
	a.ids, a.values = make([]map[string]int32, k), make([][]string, k)
	a.sums, a.members = make([][]int, k), make([][]int32, k)
	for c := range k {
		a.dom[c], a.share[c] = make([]int32, n), make([]int32, n)
		for p := range a.dom[c] {
			a.dom[c][p] = -1
		}
		a.ids[c] = map[string]int32{}
	}
}
