package filter

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/internal/podcount"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// InterPodAffinity's reasons.
const (
	// ErrReasonAffinityRulesNotMatch: the node is outside every domain
	// holding pods that match all of the pod's required affinity terms, or
	// lacks one of their topology keys.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch: the node's domain holds a pod the
	// pod's required anti-affinity rejects.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
	// ErrReasonExistingAntiAffinityRulesNotMatch: the node's domain holds a
	// pod whose required anti-affinity rejects the pod.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// Affinity can only be satisfied by pods arriving, which preemption does
// not do; anti-affinity can be, by evicting the pods in the way.
var (
	affinityRulesMismatch        = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch).WithPlugin(names.InterPodAffinity)
	antiAffinityRulesMismatch    = fwk.NewStatus(fwk.Unschedulable, ErrReasonAntiAffinityRulesNotMatch).WithPlugin(names.InterPodAffinity)
	existingAntiAffinityMismatch = fwk.NewStatus(fwk.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch).WithPlugin(names.InterPodAffinity)
	errNoInterPodAffinityState   = fwk.NewStatus(fwk.Error, "InterPodAffinity: no PreFilter state for the pod (PreFilter did not run or returned Skip)").WithPlugin(names.InterPodAffinity)
)

var interPodAffinityKey = fwk.NewStateKey[*interPodAffinityState]()

// InterPodAffinity enforces required pod affinity and anti-affinity, both
// the pod's own and that of the pods already placed:
//
//   - every required affinity term's topology key must be on the node, and
//     the node's domains must hold a pod matching all the terms at once
//     (else UnschedulableAndUnresolvable). When no pod anywhere matches
//     them but the pod matches its own terms, it is let through, so that
//     the first pod of a group that wants to be together can start;
//   - no domain of the node, for any required anti-affinity term, may hold
//     a pod the term matches (else Unschedulable);
//   - the node may be in no domain of a placed pod's required anti-affinity
//     term that the pod matches (else Unschedulable).
//
// The zero value is ready to use and safe for concurrent use.
type InterPodAffinity struct {
	// Features: ListedNamespacesOnly is read. nil is [feature.Default].
	Features *feature.Features

	aggregates affinityAggregates
}

var (
	_ fwk.PreFilterPlugin     = (*InterPodAffinity)(nil)
	_ fwk.FilterPlugin        = (*InterPodAffinity)(nil)
	_ fwk.PreFilterExtensions = (*InterPodAffinity)(nil)
	_ fwk.StateCloner         = (*interPodAffinityState)(nil)
)

// NewInterPodAffinity returns the filter after checking args (nil for the
// defaults) as kube-scheduler does, with its messages; the filter itself
// reads none of them.
func NewInterPodAffinity(args *configv1.InterPodAffinityArgs) (*InterPodAffinity, error) {
	if _, err := schedconfig.PluginArgs(args); err != nil {
		return nil, err
	}
	return &InterPodAffinity{}, nil
}

// Name returns "InterPodAffinity".
func (*InterPodAffinity) Name() string { return names.InterPodAffinity }

// interPodAffinityState is what PreFilter computes once per pod: the pod's
// required terms, with namespace selectors resolved, and three counts per
// topology pair (key, value):
//
//   - existingAnti: placed pods' required anti-affinity terms the pod
//     matches, by the domain of the pod holding the term;
//   - affinity: placed pods matching all the pod's affinity terms, once per
//     term, by the domain of the placed pod;
//   - antiAffinity: placed pods each of the pod's anti-affinity terms
//     matches, by the domain of the placed pod.
type interPodAffinityState struct {
	pod          *v1.Pod
	affinity     []podaffinity.Term
	antiAffinity []podaffinity.Term
	// nsLabels are the labels of the pod's namespace, against which placed
	// pods' namespace selectors are matched.
	nsLabels labels.Set
	// matchesOwnAffinity: the pod matches all its own affinity terms.
	matchesOwnAffinity bool

	existingAnti, affinityCounts, antiAffinityCounts *podaffinity.Counts
	// shared is set while the counts are an aggregate's, lent: they are
	// copied before AddPod or RemovePod changes them.
	shared bool
}

// CloneState copies the counts, which AddPod and RemovePod change; the
// rest is never changed and is shared.
func (s *interPodAffinityState) CloneState() any {
	c := *s
	c.existingAnti = s.existingAnti.Clone()
	c.affinityCounts = s.affinityCounts.Clone()
	c.antiAffinityCounts = s.antiAffinityCounts.Clone()
	c.shared = false
	return &c
}

// count adds n for a placed pod, with its parsed terms, on a node with
// nodeLabels.
func (s *interPodAffinityState) count(placed *v1.Pod, placedTerms *podaffinity.Terms, nodeLabels map[string]string, n int64) {
	s.countExisting(placedTerms.RequiredAntiAffinity, nodeLabels, n)
	s.countIncoming(placed, nodeLabels, n)
}

// uncounted returns a copy of s with empty counts, to count into.
func (s *interPodAffinityState) uncounted() interPodAffinityState {
	c := *s
	c.existingAnti, c.affinityCounts, c.antiAffinityCounts = &podaffinity.Counts{}, &podaffinity.Counts{}, &podaffinity.Counts{}
	return c
}

// countExisting counts the terms of anti that match the pod, and returns
// how many it counted.
func (s *interPodAffinityState) countExisting(anti []podaffinity.Term, nodeLabels map[string]string, n int64) int {
	counted := 0
	for i := range anti {
		t := &anti[i]
		if !t.Matches(s.pod, s.nsLabels) {
			continue
		}
		if v, ok := nodeLabels[t.TopologyKey]; ok {
			s.existingAnti.Add(t.TopologyKey, v, n)
			counted++
		}
	}
	return counted
}

// countIncoming counts placed for each term of the pod it matches.
func (s *interPodAffinityState) countIncoming(placed *v1.Pod, nodeLabels map[string]string, n int64) {
	var buf [4]int
	counts := buf[:]
	if len(s.antiAffinity)+1 > len(buf) {
		counts = make([]int, len(s.antiAffinity)+1)
	}
	counts = counts[:len(s.antiAffinity)+1]
	s.matchIncoming(placed, counts)
	s.addIncoming(nodeLabels, counts, n)
}

// matchIncoming adds one to counts[0] when placed matches all the pod's
// affinity terms, and to counts[1+i] when it matches its anti-affinity
// term i.
func (s *interPodAffinityState) matchIncoming(placed *v1.Pod, counts []int) {
	if podaffinity.MatchesAll(s.affinity, placed) {
		counts[0]++
	}
	for i := range s.antiAffinity {
		// The pod's own terms are resolved: no namespace labels needed.
		if s.antiAffinity[i].Matches(placed, nil) {
			counts[1+i]++
		}
	}
}

// addIncoming adds counts (as matchIncoming makes them), times n, to the
// pod's term counts in the domains of a node with nodeLabels.
func (s *interPodAffinityState) addIncoming(nodeLabels map[string]string, counts []int, n int64) {
	if counts[0] > 0 {
		for i := range s.affinity {
			if v, ok := nodeLabels[s.affinity[i].TopologyKey]; ok {
				s.affinityCounts.Add(s.affinity[i].TopologyKey, v, int64(counts[0])*n)
			}
		}
	}
	for i := range s.antiAffinity {
		if counts[1+i] == 0 {
			continue
		}
		t := &s.antiAffinity[i]
		if v, ok := nodeLabels[t.TopologyKey]; ok {
			s.antiAffinityCounts.Add(t.TopologyKey, v, int64(counts[1+i])*n)
		}
	}
}

// countingKeys are the keys under which nodes remember what they count
// for the pod: existing for their pods' anti-affinity terms, incoming
// (when the pod has required terms) for the pod's own terms.
type countingKeys struct {
	existing podcount.Key
	incoming []podcount.Key
}

func (s *interPodAffinityState) keys(hasTerms bool) countingKeys {
	k := countingKeys{existing: s.existingKey()}
	if hasTerms {
		k.incoming = s.incomingKeys()
	}
	return k
}

// String names the way of counting, for the aggregates.
func (k countingKeys) String() string {
	return fmt.Sprint(k.existing, k.incoming)
}

// countNode counts what ni's pods count for the pod: the anti-affinity
// terms of its pods that match the pod, and, when keys.incoming is set,
// its pods that the pod's own terms match. counts is scratch space of
// len(keys.incoming).
func (s *interPodAffinityState) countNode(ni *nodeinfo.NodeInfo, keys countingKeys, counts []int) {
	// A node without pods counts nothing; every count is by a node label.
	nodeLabels := ni.Labels()
	if len(ni.Pods()) == 0 || ni.Node() == nil || len(nodeLabels) == 0 {
		return
	}
	memo := ni.CountMemo()
	if len(ni.PodsWithRequiredAntiAffinity()) > 0 {
		if n, ok := podcount.Lookup(memo, ni.Generation(), keys.existing); !ok || n > 0 {
			counted := 0
			for _, pi := range ni.PodsWithRequiredAntiAffinity() {
				counted += s.countExisting(placedTerms(pi).RequiredAntiAffinity, nodeLabels, 1)
			}
			if !ok {
				podcount.Store(memo, ni.Generation(), keys.existing, counted)
			}
		}
	}
	if len(keys.incoming) > 0 {
		s.countIncomingOn(ni, nodeLabels, keys.incoming, counts)
	}
}

// existingKey is the key under which a node remembers whether its pods'
// required anti-affinity terms count anything for the pod: the pod's
// namespace, labels and namespace labels decide it.
func (s *interPodAffinityState) existingKey() podcount.Key {
	var b strings.Builder
	b.WriteString("interpodaffinity-existing\x00")
	b.WriteString(s.pod.Namespace)
	b.WriteByte(0)
	podcount.SetText(&b, s.pod.Labels)
	podcount.SetText(&b, s.nsLabels)
	return podcount.KeyOf(b.String())
}

// incomingKeys are the keys under which a node remembers how many of its
// pods the pod's required terms match: the first for its affinity terms
// together (a pod counts for them when it matches all of them), then one
// per anti-affinity term.
func (s *interPodAffinityState) incomingKeys() []podcount.Key {
	var b strings.Builder
	b.WriteString("interpodaffinity-affinity\x00")
	for i := range s.affinity {
		s.affinity[i].WriteKey(&b)
	}
	keys := []podcount.Key{podcount.KeyOf(b.String())}
	for i := range s.antiAffinity {
		b.Reset()
		b.WriteString("interpodaffinity-anti\x00")
		s.antiAffinity[i].WriteKey(&b)
		keys = append(keys, podcount.KeyOf(b.String()))
	}
	return keys
}

// countIncomingOn counts the pods of ni that the pod's required terms
// match, from ni's memo where it holds the counts (keys from
// incomingKeys), by matching every pod otherwise, and remembers them.
// counts is scratch space of len(keys).
func (s *interPodAffinityState) countIncomingOn(ni *nodeinfo.NodeInfo, nodeLabels map[string]string, keys []podcount.Key, counts []int) {
	memo := ni.CountMemo()
	known := true
	for i, k := range keys {
		var ok bool
		if counts[i], ok = podcount.Lookup(memo, ni.Generation(), k); !ok {
			known = false
			break
		}
	}
	if !known {
		clear(counts)
		for _, pi := range ni.Pods() {
			s.matchIncoming(pi.Pod, counts)
		}
		for i, k := range keys {
			podcount.Store(memo, ni.Generation(), k, counts[i])
		}
	}
	s.addIncoming(nodeLabels, counts, 1)
}

// placedTerms returns the parsed terms of a placed pod. A list that does
// not parse counts as empty, as in kube-scheduler's cache.
func placedTerms(pi *nodeinfo.PodInfo) *podaffinity.Terms {
	return pi.AffinityTerms()
}

// newInterPodAffinityState computes the state for pod over nodes. It
// returns Skip when there is nothing to check: the pod has no required
// terms and no placed pod's required anti-affinity matches it. A term that
// does not parse rejects the pod (UnschedulableAndUnresolvable), as in
// kube-scheduler, even a preferred one; a namespace lister failure or a
// done ctx is an Error.
//
// antiNodes are the nodes among nodes that hold pods with required
// anti-affinity: without terms of its own, the pod needs only those. The
// nodes are counted on the state's workers, each into counts of its own,
// merged at the end; over many nodes, into one of aggs, the plugin's, kept
// from the last count.
func newInterPodAffinityState(ctx context.Context, aggs *affinityAggregates, state *fwk.CycleState, pod *v1.Pod, nodes, antiNodes []*nodeinfo.NodeInfo, listedOnly bool) (*interPodAffinityState, *fwk.Status) {
	lister := state.Listers().Namespaces
	terms, err := podaffinity.Parse(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", err))
	}
	if len(terms.RequiredAffinity) == 0 && len(terms.RequiredAntiAffinity) == 0 && len(antiNodes) == 0 {
		// Nothing to count: no terms of its own, and no placed pod's
		// required anti-affinity to match it.
		return nil, skip
	}
	s := &interPodAffinityState{pod: pod}
	if s.affinity, err = resolveTerms(terms.RequiredAffinity, lister, listedOnly); err != nil {
		return nil, fwk.AsStatus(err)
	}
	if s.antiAffinity, err = resolveTerms(terms.RequiredAntiAffinity, lister, listedOnly); err != nil {
		return nil, fwk.AsStatus(err)
	}
	s.nsLabels = podaffinity.NamespaceLabels(lister, pod.Namespace)
	s.matchesOwnAffinity = podaffinity.MatchesAll(s.affinity, pod)

	hasTerms := len(s.affinity) > 0 || len(s.antiAffinity) > 0
	// A node remembers, for its generation, when its pods counted nothing
	// for a pod like this one, so that a simulation placing pod after pod
	// visits again only the nodes that changed or count something.
	keys := s.keys(hasTerms)
	visited := nodes
	if !hasTerms {
		visited = antiNodes
	}
	if len(visited) >= minAggregateNodes {
		if a, giveBack := aggs.Take(keys.String()); a != nil {
			defer giveBack()
			if err := ctx.Err(); err != nil {
				return nil, fwk.AsStatus(err)
			}
			a.count(s, keys, nodes, cycle.Of(state).NodeGenerations(nodes), state)
			s.existingAnti, s.affinityCounts, s.antiAffinityCounts = a.lend(state)
			s.shared = true
			if !hasTerms && s.existingAnti.Len() == 0 {
				return nil, skip
			}
			return s, nil
		}
	}
	nodes = visited
	partial := make([]interPodAffinityState, cycle.Of(state).Workers(len(nodes)))
	for i := range partial {
		partial[i] = s.uncounted()
	}
	cycle.Of(state).ParallelChunks(ctx, len(nodes), func(worker, start, end int) {
		p := &partial[worker]
		counts := make([]int, len(keys.incoming))
		for _, ni := range nodes[start:end] {
			p.countNode(ni, keys, counts)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, fwk.AsStatus(err)
	}
	s.existingAnti, s.affinityCounts, s.antiAffinityCounts = partial[0].existingAnti, partial[0].affinityCounts, partial[0].antiAffinityCounts
	for _, p := range partial[1:] {
		s.existingAnti.Merge(p.existingAnti)
		s.affinityCounts.Merge(p.affinityCounts)
		s.antiAffinityCounts.Merge(p.antiAffinityCounts)
	}
	if !hasTerms && s.existingAnti.Len() == 0 {
		return nil, skip
	}
	return s, nil
}

func resolveTerms(terms []podaffinity.Term, lister podaffinity.NamespaceLister, listedOnly bool) ([]podaffinity.Term, error) {
	for i := range terms {
		var err error
		if terms[i], err = terms[i].Resolve(lister, listedOnly); err != nil {
			return nil, err
		}
	}
	return terms, nil
}

// PreFilter counts, once per pod, the matching pods per topology domain
// over nodes (all the nodes of the cycle): on nodes holding pods with
// required anti-affinity, those pods' terms that match pod; and, if pod has
// required terms, the pods on every node that match them. It returns Skip
// when there is nothing to check, UnschedulableAndUnresolvable when a term
// of pod does not parse, and Error when the namespace lister fails or ctx
// is done.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	s, status := newInterPodAffinityState(ctx, &pl.aggregates, state, pod, nodes, cycle.Of(state).NodesWithRequiredPodAntiAffinity(nodes), feature.Of(pl.Features).ListedNamespacesOnly)
	if status != nil {
		return nil, status
	}
	interPodAffinityKey.Write(state, s)
	return nil, nil
}

// AddPod counts podToAdd as if it were placed on node. It returns Error
// when PreFilter did not write state for the pod.
func (pl *InterPodAffinity) AddPod(_ context.Context, state *fwk.CycleState, _ *v1.Pod, podToAdd *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	return updateInterPodAffinity(state, podToAdd, node, 1)
}

// RemovePod stops counting podToRemove, placed on node. It returns Error
// when PreFilter did not write state for the pod.
func (pl *InterPodAffinity) RemovePod(_ context.Context, state *fwk.CycleState, _ *v1.Pod, podToRemove *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	return updateInterPodAffinity(state, podToRemove, node, -1)
}

func updateInterPodAffinity(state *fwk.CycleState, pi *nodeinfo.PodInfo, ni *nodeinfo.NodeInfo, n int64) *fwk.Status {
	s, ok := interPodAffinityKey.Read(state)
	if !ok {
		return errNoInterPodAffinityState
	}
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	if s.shared {
		s.existingAnti, s.affinityCounts, s.antiAffinityCounts = s.existingAnti.Clone(), s.affinityCounts.Clone(), s.antiAffinityCounts.Clone()
		s.shared = false
	}
	t := placedTerms(pi)
	s.count(pi.Pod, t, node.Labels, n)
	return nil
}

// Filter checks node against the counts PreFilter wrote; without them
// (nil state, as in unit tests) it first computes them over the state's
// nodes, or over node alone if the state has none. It returns
// UnschedulableAndUnresolvable for pod affinity, Unschedulable for pod
// anti-affinity, then for placed pods' anti-affinity, in that order, as
// kube-scheduler does. With state from PreFilter it does not allocate.
func (pl *InterPodAffinity) Filter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	s, ok := interPodAffinityKey.Read(state)
	if !ok {
		nodes := state.AllNodes()
		if len(nodes) == 0 {
			nodes = []*nodeinfo.NodeInfo{ni}
		}
		var status *fwk.Status
		if s, status = newInterPodAffinityState(ctx, &pl.aggregates, state, pod, nodes, cycle.Of(state).NodesWithRequiredPodAntiAffinity(nodes), feature.Of(pl.Features).ListedNamespacesOnly); status != nil {
			if status.IsSkip() {
				return nil
			}
			return status.WithPlugin(names.InterPodAffinity)
		}
	}
	nodeLabels := ni.Labels()
	if !s.satisfiesAffinity(nodeLabels) {
		return affinityRulesMismatch
	}
	if !s.satisfiesAntiAffinity(nodeLabels) {
		return antiAffinityRulesMismatch
	}
	if s.existingAnti.AnyPositive(nodeLabels) {
		return existingAntiAffinityMismatch
	}
	return nil
}

func (s *interPodAffinityState) satisfiesAffinity(nodeLabels map[string]string) bool {
	found := true
	for i := range s.affinity {
		key := s.affinity[i].TopologyKey
		v, ok := nodeLabels[key]
		if !ok {
			return false
		}
		if s.affinityCounts.Get(key, v) <= 0 {
			found = false
		}
	}
	// The first pod of a group: nothing matches anywhere yet, but the pod
	// itself will.
	return found || (s.affinityCounts.Len() == 0 && s.matchesOwnAffinity)
}

func (s *interPodAffinityState) satisfiesAntiAffinity(nodeLabels map[string]string) bool {
	if s.antiAffinityCounts.Len() == 0 {
		return true
	}
	for i := range s.antiAffinity {
		key := s.antiAffinity[i].TopologyKey
		if v, ok := nodeLabels[key]; ok && s.antiAffinityCounts.Get(key, v) > 0 {
			return false
		}
	}
	return true
}
