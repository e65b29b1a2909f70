package topologyspread

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/parallel"
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
	// Gt/Lt tolerations are an alpha feature, off in kube-scheduler v1.36.3.
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

// countMatching counts the pods that sel selects in namespace ns, leaving
// out pods being deleted. An empty selector counts nothing.
func countMatching(pods []*nodeinfo.PodInfo, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, pi := range pods {
		p := pi.Pod
		if p.DeletionTimestamp != nil || p.Namespace != ns {
			continue
		}
		if sel.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// notCounted marks a (node, constraint) pair whose pods do not count.
const notCounted = -1

// countNodes counts, in parallel, the pods of each node matching each
// constraint. Node n's count for constraint i is at [n*len(cs)+i], or
// notCounted when the node lacks a topology key (if requireAll), fails the
// constraint's inclusion policies, or want(i, value) is false. want may be
// nil and must be safe for concurrent use. Nodes without a node object are
// not counted. It returns ctx's error if cancelled.
func countNodes(ctx context.Context, pod *v1.Pod, cs []Constraint, e *eligibility, nodes []*nodeinfo.NodeInfo, requireAll bool, want func(i int, value string) bool) ([]int, error) {
	k := len(cs)
	counts := make([]int, len(nodes)*k)
	parallel.Until(ctx, workers, len(nodes), func(n int) {
		out := counts[n*k : (n+1)*k]
		node := nodes[n].Node()
		if node == nil || (requireAll && !hasAllKeys(node.Labels, cs)) {
			for i := range out {
				out[i] = notCounted
			}
			return
		}
		for i := range cs {
			c := &cs[i]
			if !e.includes(c, node) || (want != nil && !want(i, node.Labels[c.TopologyKey])) {
				out[i] = notCounted
				continue
			}
			out[i] = countMatching(nodes[n].Pods, c.Selector, pod.Namespace)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return counts, nil
}
