package topologyspread

import (
	"context"
	"runtime"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/internal/podcount"
	"github.com/kubesched/kubesched/internal/taints"
	"github.com/kubesched/kubesched/nodeinfo"
)

// workers is how many goroutines count pods over the nodes, as many as
// kube-scheduler's default parallelism.
const workers = 16

// eligibility decides which nodes' pods count toward a pod's spreading,
// per constraint, by the constraint's node inclusion policies.
type eligibility struct {
	required    nodeaffinity.Required
	tolerations []v1.Toleration
}

func eligibilityOf(pod *v1.Pod) eligibility {
	return eligibility{required: nodeaffinity.RequiredOf(pod), tolerations: pod.Spec.Tolerations}
}

// includes reports whether node's domain counts for c: with
// nodeAffinityPolicy Honor the node must satisfy the pod's nodeSelector and
// required node affinity; with nodeTaintsPolicy Honor the pod must tolerate
// the node's NoSchedule and NoExecute taints.
func (e *eligibility) includes(c *Constraint, node *v1.Node) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && !e.required.Matches(node) {
		return false
	}
	// Gt/Lt tolerations are an alpha feature, off in both supported releases.
	return c.NodeTaintsPolicy != v1.NodeInclusionPolicyHonor || taints.FirstUntolerated(node.Spec.Taints, e.tolerations, false) < 0
}

// hasAllKeys reports whether nodeLabels has every constraint's topology key.
func hasAllKeys(nodeLabels map[string]string, cs []Constraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// countMatching counts the pods on ni that sel selects in namespace ns,
// leaving out pods being deleted; key is matchKey(sel, ns), under which
// the count is remembered for ni's generation. An empty selector counts
// nothing.
func countMatching(ni *nodeinfo.NodeInfo, sel labels.Selector, ns string, key podcount.Key) int {
	if sel.Empty() {
		return 0
	}
	memo := ni.CountMemo()
	if n, ok := podcount.Lookup(memo, ni.Generation(), key); ok {
		return n
	}
	n := 0
	for _, pi := range ni.Pods() {
		if matches(pi.Pod, sel, ns) {
			n++
		}
	}
	podcount.Store(memo, ni.Generation(), key, n)
	return n
}

// matches reports whether countMatching counts p: sel, not empty,
// selects it in namespace ns, and it is not being deleted.
func matches(p *v1.Pod, sel labels.Selector, ns string) bool {
	return p.DeletionTimestamp == nil && p.Namespace == ns && !sel.Empty() && sel.Matches(labels.Set(p.Labels))
}

// matchKey is the key countMatching remembers counts of sel's pods in ns
// under (see podcount.SelectorText).
func matchKey(sel labels.Selector, ns string) podcount.Key {
	var b strings.Builder
	b.WriteString("topologyspread\x00")
	b.WriteString(ns)
	b.WriteByte(0)
	podcount.SelectorText(&b, sel)
	return podcount.KeyOf(b.String())
}

// minNodesPerWorker keeps countDomains from starting goroutines for
// clusters too small to repay them.
const minNodesPerWorker = 256

// countDomains counts, in parallel, the pods matching each constraint per
// topology domain: the result's map i takes each domain value of
// constraint i to its matching pods, summed over the nodes that count. A
// node counts for constraint i unless it has no node object, lacks a
// topology key (any constraint's, if requireAll; constraint i's anyway,
// read as the domain ""), fails the constraint's inclusion policies, or
// want(i, value) is false; a counted node's domain is in the map even with
// no matching pods. want may be nil and must be safe for concurrent use.
// counted, when not nil, leaves out the constraints i for which it is
// false, whose maps stay empty: a cheaper want that needs no domain.
// Workers count into maps of their own, merged at the end; domains are
// few, so merging is cheap. When the counts are a sum of each node's
// share (see cacheable), an aggregate of inc's kept from the last count
// over the same positions counts only the nodes that changed since. It
// returns ctx's error if cancelled.
func countDomains(ctx context.Context, pod *v1.Pod, cs []Constraint, e *eligibility, nodes []*nodeinfo.NodeInfo, inc Incremental, requireAll bool, want func(i int, value string) bool, counted []bool) ([]map[string]int, error) {
	k := len(cs)
	keys := make([]podcount.Key, k)
	for i := range cs {
		keys[i] = matchKey(cs[i].Selector, pod.Namespace)
	}
	if inc.Aggregates != nil && cacheable(pod, cs) {
		if a, giveBack := inc.Aggregates.values.Take(aggregateKey(pod.Namespace, cs, requireAll, counted)); a != nil {
			defer giveBack()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return a.count(pod, cs, keys, nodes, inc.Gens, inc.State, requireAll, want, counted), nil
		}
	}
	return countEach(ctx, pod, cs, keys, e, nodes, requireAll, want, counted)
}

// countEach is countDomains without an aggregate: every node counted, in
// parallel.
func countEach(ctx context.Context, pod *v1.Pod, cs []Constraint, keys []podcount.Key, e *eligibility, nodes []*nodeinfo.NodeInfo, requireAll bool, want func(i int, value string) bool, counted []bool) ([]map[string]int, error) {
	k := len(cs)
	partial := make([][]map[string]int, max(1, min(workers, runtime.GOMAXPROCS(0), len(nodes)/minNodesPerWorker)))
	for w := range partial {
		partial[w] = make([]map[string]int, k)
		for i := range k {
			partial[w][i] = map[string]int{}
		}
	}
	parallel.ByWorker(ctx, len(partial), len(nodes), func(w, start, end int) {
		counts := partial[w]
		for _, ni := range nodes[start:end] {
			node := ni.Node()
			// The NodeInfo's copy of the labels: the Node object itself is
			// one more cache miss per node.
			nodeLabels := ni.Labels()
			if node == nil || (requireAll && !hasAllKeys(nodeLabels, cs)) {
				continue
			}
			for i := range cs {
				if counted != nil && !counted[i] {
					continue
				}
				c := &cs[i]
				value := nodeLabels[c.TopologyKey]
				if !e.includes(c, node) || (want != nil && !want(i, value)) {
					continue
				}
				counts[i][value] += countMatching(ni, c.Selector, pod.Namespace, keys[i])
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := partial[0]
	for _, counts := range partial[1:] {
		for i := range k {
			for value, n := range counts[i] {
				total[i][value] += n
			}
		}
	}
	return total, nil
}
