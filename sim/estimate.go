package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Template is what a node group's new nodes look like, as
// cluster-autoscaler builds them: the node, and the DaemonSet pods each
// new node runs from the start.
type Template struct {
	// Node is copied for each new node, under a name of its own (and
	// with its kubernetes.io/hostname label, if any, set to it).
	Node *v1.Node
	// DaemonSetPods are copied onto each new node, named after it.
	DaemonSetPods []*v1.Pod
}

// Estimate is how many nodes of a template some pending pods need, and
// where each would go.
type Estimate struct {
	// NodeCount is the number of new nodes that took pods.
	NodeCount int
	// Nodes are the new nodes' names, in the order they were added;
	// the last may have taken no pod.
	Nodes []string
	// Placements holds, for each pod given, the new node it would go to,
	// or "" when it would go to none.
	Placements []string
}

// EstimateOption changes how [Cluster.Estimate] estimates; one that
// cannot apply makes Estimate return its error.
type EstimateOption func(*estimateConfig) error

type estimateConfig struct {
	maxNodes int
}

// MaxNodes stops the estimate at n new nodes (0, the default, for no
// limit), as a node group's maximum size or cluster-autoscaler's
// --max-nodes-per-scaleup stop it. A negative n is an error.
func MaxNodes(n int) EstimateOption {
	return func(c *estimateConfig) error {
		if n < 0 {
			return fmt.Errorf("sim: MaxNodes(%d): want 0 (no limit) or more", n)
		}
		c.maxNodes = n
		return nil
	}
}

// Estimate answers cluster-autoscaler's scale-up question in the manner
// of its binpacking estimator, on the cluster as it is, which it leaves
// unchanged: how many nodes like tmpl the pods need.
//
//   - Pods are grouped as cluster-autoscaler groups them: pods of one
//     controller with equal labels and specs together, others alone. The
//     groups go in decreasing order of their first pod's cpu and memory
//     requests as shares of the template's allocatable, the given order
//     breaking ties.
//   - Each pod first tries the new nodes added so far, first fit,
//     round-robin from past the last one that took a pod. Once a pod of
//     a group fits none, the rest of the group only try the newest node,
//     and a new node is added (with the template's DaemonSet pods) when
//     it is full; a pod that does not fit an empty new node ends its
//     group there.
//
// Pods are placed with the filters only, as cluster-autoscaler does, so
// every filter of the cluster's framework applies (affinity, spreading,
// ports, claims). It returns an error for a template without node, or
// what placing returned other than "fits nowhere" (a plugin error, a
// cancelled context), and an error for a nil pod.
//
// Estimate works in a fork of its own, reverted at the end: do not change
// the cluster from elsewhere while it runs.
func (c *Cluster) Estimate(ctx context.Context, tmpl Template, pods []*v1.Pod, opts ...EstimateOption) (*Estimate, error) {
	if tmpl.Node == nil {
		return nil, errors.New("sim: estimate: template without node")
	}
	for i, p := range pods {
		if p == nil {
			return nil, fmt.Errorf("sim: estimate: pod %d is nil", i)
		}
	}
	var cfg estimateConfig
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sim: Estimate: nil EstimateOption")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	c.Fork()
	defer func() { _ = c.Revert() }()

	e := &estimator{c: c, tmpl: tmpl, cfg: cfg, withPods: map[string]bool{}, est: &Estimate{Placements: make([]string, len(pods))}}
	for _, group := range orderGroups(pods, groupPods(pods), tmpl.Node) {
		if err := e.placeGroup(ctx, pods, group); err != nil {
			return nil, err
		}
	}
	e.est.NodeCount = len(e.withPods)
	return e.est, nil
}

// estimator is one Estimate's state.
type estimator struct {
	c    *Cluster
	tmpl Template
	cfg  estimateConfig
	est  *Estimate
	// next is where the next first fit over the new nodes starts.
	next int
	// withPods are the new nodes that took a pod.
	withPods map[string]bool
}

// placeGroup places the pods of a group (indices into pods).
func (e *estimator) placeGroup(ctx context.Context, pods []*v1.Pod, group []int) error {
	rest := group
	for len(rest) > 0 && len(e.est.Nodes) > 0 {
		node, err := e.onNewNodes(ctx, pods[rest[0]])
		if err != nil {
			return err
		}
		if node == "" {
			break
		}
		e.placed(rest[0], node)
		rest = rest[1:]
	}
	for _, i := range rest {
		if n := len(e.est.Nodes); n > 0 {
			node, err := e.on(ctx, pods[i], e.est.Nodes[n-1])
			if err != nil {
				return err
			}
			if node != "" {
				e.placed(i, node)
				continue
			}
			if !e.withPods[e.est.Nodes[n-1]] {
				// It did not fit an empty new node: no new node helps.
				return nil
			}
		}
		if e.cfg.maxNodes > 0 && len(e.est.Nodes) >= e.cfg.maxNodes {
			return nil
		}
		name, err := e.addNode()
		if err != nil {
			return err
		}
		node, err := e.on(ctx, pods[i], name)
		if err != nil || node == "" {
			return err
		}
		e.placed(i, node)
	}
	return nil
}

func (e *estimator) placed(i int, node string) {
	e.est.Placements[i] = node
	e.withPods[node] = true
}

// onNewNodes places pod on the first new node it fits, round-robin.
func (e *estimator) onNewNodes(ctx context.Context, pod *v1.Pod) (string, error) {
	return e.place(ctx, pod, e.est.Nodes, e.next, true)
}

// on places pod on the node called name, if it fits there.
func (e *estimator) on(ctx context.Context, pod *v1.Pod, name string) (string, error) {
	return e.place(ctx, pod, []string{name}, 0, false)
}

// place is firstFit over names from start, with "fits nowhere" as "".
func (e *estimator) place(ctx context.Context, pod *v1.Pod, names []string, start int, advance bool) (string, error) {
	c := e.c
	c.mu.Lock()
	defer c.mu.Unlock()
	res, i, err := c.firstFit(ctx, pod, names, start)
	switch {
	case errors.Is(err, ErrNoNodeFits):
		return "", nil
	case err != nil:
		return "", err
	}
	if advance {
		e.next = (i + 1) % len(names)
	}
	return res.SuggestedHost, nil
}

// addNode adds a node like the template's, with its DaemonSet pods.
func (e *estimator) addNode() (string, error) {
	e.c.mu.Lock()
	name := ""
	for k := len(e.est.Nodes); ; k++ {
		name = fmt.Sprintf("%s-estimate-%d", e.tmpl.Node.Name, k)
		if !e.c.named[name] {
			break
		}
	}
	e.c.mu.Unlock()
	node := e.tmpl.Node.DeepCopy()
	node.Name = name
	node.UID = types.UID("uid-" + name)
	if node.Labels != nil {
		if _, ok := node.Labels[v1.LabelHostname]; ok {
			node.Labels[v1.LabelHostname] = name
		}
	}
	if err := e.c.AddNode(node); err != nil {
		return "", err
	}
	for _, ds := range e.tmpl.DaemonSetPods {
		p := ds.DeepCopy()
		p.Name = p.Name + "-" + name
		p.UID = types.UID(string(p.UID) + "-" + name)
		p.Spec.NodeName = name
		if err := e.c.AddPod(p); err != nil {
			return "", err
		}
	}
	e.est.Nodes = append(e.est.Nodes, name)
	return name, nil
}

// groupPods groups pods (by index) as cluster-autoscaler's equivalence
// groups do: pods of one controller, not a DaemonSet's, with equal
// labels and specs share a group (at most ten groups per controller,
// then alone); others are alone. Groups are in order of their first pod.
func groupPods(pods []*v1.Pod) [][]int {
	const maxGroupsPerController = 10
	var groups [][]int
	byController := map[types.UID][]int{} // group indices
	for i, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind == "DaemonSet" {
			groups = append(groups, []int{i})
			continue
		}
		found := false
		for _, g := range byController[ref.UID] {
			first := pods[groups[g][0]]
			if maps.Equal(first.Labels, p.Labels) && equality.Semantic.DeepEqual(first.Spec, p.Spec) {
				groups[g] = append(groups[g], i)
				found = true
				break
			}
		}
		if found {
			continue
		}
		if len(byController[ref.UID]) < maxGroupsPerController {
			byController[ref.UID] = append(byController[ref.UID], len(groups))
		}
		groups = append(groups, []int{i})
	}
	return groups
}

// orderGroups sorts groups by decreasing size of their first pod: its
// containers' cpu and memory requests as shares of node's allocatable,
// as cluster-autoscaler's decreasing pod orderer measures it. Ties keep
// their order.
func orderGroups(pods []*v1.Pod, groups [][]int, node *v1.Node) [][]int {
	size := func(g []int) float64 {
		p := pods[g[0]]
		var cpu, mem resource.Quantity
		for _, c := range p.Spec.Containers {
			if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
				cpu.Add(q)
			}
			if q, ok := c.Resources.Requests[v1.ResourceMemory]; ok {
				mem.Add(q)
			}
		}
		var score float64
		if q, ok := node.Status.Allocatable[v1.ResourceCPU]; ok && q.MilliValue() > 0 {
			score += float64(cpu.MilliValue()) / float64(q.MilliValue())
		}
		if q, ok := node.Status.Allocatable[v1.ResourceMemory]; ok && q.Value() > 0 {
			score += float64(mem.Value()) / float64(q.Value())
		}
		return score
	}
	sizes := make(map[int]float64, len(groups))
	for _, g := range groups {
		sizes[g[0]] = size(g)
	}
	slices.SortStableFunc(groups, func(a, b []int) int { return cmp.Compare(sizes[b[0]], sizes[a[0]]) })
	return groups
}
