package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrNoFork is returned by [Cluster.Revert] and [Cluster.Commit] when no
// fork is open.
var ErrNoFork = errors.New("sim: no fork open")

// Cluster is a simulated cluster: nodes, the pods bound to them, and the
// objects the plugins read, which placements change as kube-scheduler's
// would. It can fork, so that a caller tries changes out and then keeps
// or drops them.
//
// Its methods are safe for concurrent use; a placement or a change waits
// for the one before. NodeInfos it returns never change afterwards.
type Cluster struct {
	mu sync.Mutex
	// fw is the caller's framework reading the cluster's listers.
	fw    *framework.Framework
	cache *cache.Cache
	// order is the node names in the order given to New, then added;
	// named holds the same names, for lookups.
	order []string
	named map[string]bool
	// pods are the bound pods, by namespace/name.
	pods map[string]*v1.Pod
	// nextFit is where the next first-fit search starts in order.
	nextFit int
	// volumes and volumeClaims are the PersistentVolumes and their claims,
	// which placements bind and select for provisioning.
	volumes      *store[*v1.PersistentVolume]
	volumeClaims *store[*v1.PersistentVolumeClaim]
	// snap is the cache's latest snapshot; stale once a change made it
	// out of date. Unless shared (handed to a caller, who may keep it), it
	// is brought up to date in place (cache.Cache.UpdateSnapshot), which
	// costs what changed rather than a copy of the node list.
	snap          *cache.Snapshot
	stale, shared bool
	// forks holds, per open fork, the undo steps of its changes, oldest
	// first.
	forks [][]func() error
}

// New returns a cluster of nodes, in that order, with pods bound where
// their spec.nodeName says (pods without one are pending: pass them to
// [Cluster.Place]), and objs, the objects framework.WithObjects takes,
// for fw's plugins to read. fw's own listers are not read: the cluster
// serves its objects, and keeps its ResourceClaims current as placements
// allocate them. Nodes, pods and objects must not be modified afterwards.
//
// It returns an error for a nil node, two nodes or two pods of one name,
// a pod bound to a node not given, or an object of another kind.
func New(fw *framework.Framework, nodes []*v1.Node, pods []*v1.Pod, objs ...runtime.Object) (*Cluster, error) {
	if fw == nil {
		return nil, errors.New("sim: nil framework")
	}
	var claims []*resourceapi.ResourceClaim
	volumes := newStore(func(pv *v1.PersistentVolume) string { return pv.Name })
	volumeClaims := newStore(func(c *v1.PersistentVolumeClaim) string { return key(c.Namespace, c.Name) })
	others := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		switch o := o.(type) {
		case *resourceapi.ResourceClaim:
			claims = append(claims, o)
		case *v1.PersistentVolume:
			if _, dup := volumes.set(o); dup {
				return nil, fmt.Errorf("sim: two PersistentVolumes called %s", o.Name)
			}
		case *v1.PersistentVolumeClaim:
			if _, dup := volumeClaims.set(o); dup {
				return nil, fmt.Errorf("sim: two PersistentVolumeClaims called %s", key(o.Namespace, o.Name))
			}
		default:
			others = append(others, o)
		}
	}
	listers, err := fwk.NewListers(others...)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	ch, err := cache.New(cache.WithFreshImageStates())
	if err != nil {
		return nil, err
	}
	listers.ResourceClaims = ch.ResourceClaims()
	listers.PersistentVolumes, listers.PersistentVolumeClaims = volumes, volumeClaims
	c := &Cluster{fw: fw.UsingListers(listers), cache: ch, pods: map[string]*v1.Pod{}, named: map[string]bool{},
		volumes: volumes, volumeClaims: volumeClaims}
	for _, claim := range claims {
		if err := ch.AddClaim(claim); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	for i, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("sim: node %d is nil", i)
		}
		if err := c.addNode(n); err != nil {
			return nil, err
		}
	}
	for _, p := range pods {
		if p == nil || p.Spec.NodeName == "" {
			continue
		}
		if err := c.addPod(p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Fork starts a set of changes that [Cluster.Revert] undoes, or
// [Cluster.Commit] keeps. Forks nest: each Revert or Commit ends the
// latest. Both cost in proportion to the changes made since the fork.
func (c *Cluster) Fork() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forks = append(c.forks, nil)
}

// Revert undoes every change since the latest [Cluster.Fork] and ends
// it. It returns ErrNoFork when no fork is open.
func (c *Cluster) Revert() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	steps, err := c.popFork()
	if err != nil {
		return err
	}
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i](); err != nil {
			errs = append(errs, err)
		}
	}
	c.stale = true
	if len(errs) > 0 {
		return fmt.Errorf("sim: revert: %w", errors.Join(errs...))
	}
	return nil
}

// Commit keeps the changes since the latest [Cluster.Fork] and ends it:
// they become changes of the fork around it, if any. It returns ErrNoFork
// when no fork is open.
func (c *Cluster) Commit() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	steps, err := c.popFork()
	if err != nil {
		return err
	}
	if n := len(c.forks); n > 0 {
		c.forks[n-1] = append(c.forks[n-1], steps...)
	}
	return nil
}

// popFork ends the latest fork and returns its undo steps.
func (c *Cluster) popFork() ([]func() error, error) {
	n := len(c.forks)
	if n == 0 {
		return nil, ErrNoFork
	}
	steps := c.forks[n-1]
	c.forks = c.forks[:n-1]
	return steps, nil
}

// Forks returns how many forks are open.
func (c *Cluster) Forks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.forks)
}

// undo records how to undo a change, when a fork is open.
func (c *Cluster) undo(step func() error) {
	if n := len(c.forks); n > 0 {
		c.forks[n-1] = append(c.forks[n-1], step)
	}
	c.stale = true
}

// AddNode adds a node, after the others in first-fit order. It returns an
// error for a nil node or a name the cluster has.
func (c *Cluster) AddNode(node *v1.Node) error {
	if node == nil {
		return errors.New("sim: nil node")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addNode(node)
}

func (c *Cluster) addNode(node *v1.Node) error {
	if c.named[node.Name] {
		return fmt.Errorf("sim: node %q is already in the cluster", node.Name)
	}
	if _, err := c.cache.AddNode(node); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	c.order = append(c.order, node.Name)
	c.named[node.Name] = true
	c.undo(func() error {
		// Changes are undone newest first, so the node is last again.
		c.order = c.order[:len(c.order)-1]
		delete(c.named, node.Name)
		return c.cache.RemoveNode(node)
	})
	return nil
}

// RemoveNode removes the node called name and the pods bound to it.
func (c *Cluster) RemoveNode(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.snapshot().Get(name)
	if !ok {
		return fmt.Errorf("sim: no node %q", name)
	}
	for _, pi := range ni.Pods() {
		if err := c.removePod(pi.Pod); err != nil {
			return err
		}
	}
	node := ni.Node()
	if err := c.cache.RemoveNode(node); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	at := slices.Index(c.order, name)
	c.order = slices.Delete(c.order, at, at+1)
	delete(c.named, name)
	c.undo(func() error {
		c.order = slices.Insert(c.order, at, name)
		c.named[name] = true
		_, err := c.cache.AddNode(node)
		return err
	})
	return nil
}

// AddPod binds pod to the node its spec.nodeName names, without checking
// that it fits there (cluster-autoscaler's ForceAddPod). It returns an
// error for a pod without a node, on a node the cluster lacks, or of a
// namespace and name the cluster has.
func (c *Cluster) AddPod(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("sim: nil pod")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("sim: pod %s/%s has no spec.nodeName", pod.Namespace, pod.Name)
	}
	if !c.named[pod.Spec.NodeName] {
		return fmt.Errorf("sim: pod %s/%s is bound to %q, which is not in the cluster", pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	return c.addPod(pod)
}

func (c *Cluster) addPod(pod *v1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	if _, dup := c.pods[k]; dup {
		return fmt.Errorf("sim: pod %s is already in the cluster", k)
	}
	if err := c.cache.AddPod(pod); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	c.pods[k] = pod
	c.undo(func() error {
		delete(c.pods, k)
		return c.cache.RemovePod(pod)
	})
	return nil
}

// RemovePod removes the pod namespace/name from its node.
func (c *Cluster) RemovePod(namespace, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	pod, ok := c.pods[key(namespace, name)]
	if !ok {
		return fmt.Errorf("sim: no pod %s", key(namespace, name))
	}
	return c.removePod(pod)
}

func (c *Cluster) removePod(pod *v1.Pod) error {
	if err := c.cache.RemovePod(pod); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	k := key(pod.Namespace, pod.Name)
	delete(c.pods, k)
	c.undo(func() error {
		c.pods[k] = pod
		return c.cache.AddPod(pod)
	})
	return nil
}

// setClaim puts claim in the cluster, in place of the one of its name.
func (c *Cluster) setClaim(claim *resourceapi.ResourceClaim) error {
	old, err := c.cache.ResourceClaims().Get(claim.Namespace, claim.Name)
	if err != nil {
		old = nil
	}
	if err := c.cache.AddClaim(claim); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	c.undo(func() error {
		if old != nil {
			return c.cache.AddClaim(old)
		}
		return c.cache.RemoveClaim(claim)
	})
	return nil
}

// NodeInfo returns the node called name, with its pods.
func (c *Cluster) NodeInfo(name string) (*nodeinfo.NodeInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshot().Get(name)
}

// Nodes returns the nodes, in the order given to New followed by those
// added. The slice is the caller's; the NodeInfos never change.
func (c *Cluster) Nodes() []*nodeinfo.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap := c.snapshot()
	out := make([]*nodeinfo.NodeInfo, 0, len(c.order))
	for _, name := range c.order {
		if ni, ok := snap.Get(name); ok {
			out = append(out, ni)
		}
	}
	return out
}

// Pod returns the bound pod namespace/name.
func (c *Cluster) Pod(namespace, name string) (*v1.Pod, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pods[key(namespace, name)]
	return p, ok
}

// Explain explains pod on the cluster as it is now, with its objects, as
// [framework.Framework.Explain] does (nodes in kube-scheduler's order, as
// [Cluster.Snapshot] lists them). Nothing is committed.
func (c *Cluster) Explain(ctx context.Context, pod *v1.Pod) (*framework.Explanation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fw.Explain(ctx, pod, c.snapshot().Nodes())
}

// Snapshot returns the cluster as it is now, in kube-scheduler's node
// order, for framework.ScheduleSnapshot or anything else that reads a
// framework.NodeSnapshot. It never changes.
func (c *Cluster) Snapshot() *cache.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap := c.snapshot()
	c.shared = true
	return snap
}

// snapshot returns the cluster's snapshot, up to date. The caller holds
// c.mu and must not let it out (see Snapshot).
func (c *Cluster) snapshot() *cache.Snapshot {
	switch {
	case c.snap == nil || c.shared && c.stale:
		c.snap, c.shared = c.cache.Snapshot(), false
	case c.stale:
		c.snap = c.cache.UpdateSnapshot(c.snap)
	}
	c.stale = false
	return c.snap
}

// Framework returns the framework the cluster schedules with: the one
// given to New, reading the cluster's objects.
func (c *Cluster) Framework() *framework.Framework { return c.fw }

func key(namespace, name string) string { return namespace + "/" + name }

// CheckPod reports whether pod would pass every filter on the node
// called nodeName, given the whole cluster: PreFilter runs over every
// node, as in a scheduling cycle, and the filters on that node only. It
// returns nil when the pod fits, else the rejection, with kube-scheduler's
// reasons and the rejecting plugin; an Error status for a plugin error,
// a bad call or an unknown node.
func (c *Cluster) CheckPod(ctx context.Context, pod *v1.Pod, nodeName string) *fwk.Status {
	snap := c.Snapshot()
	ni, ok := snap.Get(nodeName)
	if !ok {
		return fwk.AsStatus(fmt.Errorf("sim: no node %q", nodeName))
	}
	state, status := c.fw.RunPreFilterPlugins(ctx, pod, snap)
	if status != nil {
		return status
	}
	if s := framework.ExcludedByPreFilter(state, nodeName); s != nil {
		return s
	}
	return c.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
}
