package cache

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Option configures a Cache.
type Option func(*Cache) error

// WithClock sets the clock assumed pods expire by (default: the system's,
// clock.RealClock). The cache only reads the time from it; tests pass
// k8s.io/utils/clock/testing's FakeClock.
func WithClock(clk clock.PassiveClock) Option {
	return func(c *Cache) error {
		if clk == nil {
			return errors.New("cache: WithClock: nil clock")
		}
		c.clock = clk
		return nil
	}
}

// WithAssumedPodTTL makes assumed pods expire: a pod assumed, whose binding
// finished ([Cache.FinishBinding]) but whose bound state never arrived
// ([Cache.AddPod]), is forgotten ttl after FinishBinding. A pod still
// binding never expires. 0, the default, never expires anything, as in
// kube-scheduler v1.37.2 (older releases expired after a configurable
// time): with a working informer the bound pod always arrives, and a
// failed binding is undone with [Cache.ForgetPod].
func WithAssumedPodTTL(ttl time.Duration) Option {
	return func(c *Cache) error {
		if ttl < 0 {
			return fmt.Errorf("cache: WithAssumedPodTTL: negative duration %v", ttl)
		}
		c.ttl = ttl
		return nil
	}
}

// Cache is the scheduler's view of the cluster, kept up to date by
// informer events: nodes, the pods bound to them, and the pods the
// scheduler has placed but the API server has not yet confirmed
// ("assumed"). [Cache.Snapshot] turns it into the []*nodeinfo.NodeInfo
// that Framework.Schedule reads, copying only what changed since the
// last snapshot.
//
// A pod is keyed by its UID, or by namespace/name when it has none. Pods
// may arrive before their node (the node's NodeInfo then waits, out of
// snapshots, for the node) and a node may be removed before its pods
// (its pods are then kept, out of snapshots, until their removal
// arrives), as kube-scheduler's cache allows: the two informers are not
// ordered.
//
// All methods are safe for concurrent use. They never modify the objects
// passed in, and keep them: callers must not modify a node or pod after
// handing it over, as informers never do.
type Cache struct {
	mu    sync.Mutex
	clock clock.PassiveClock
	ttl   time.Duration

	// nodes holds an element of recent for every node and every node
	// name pods are bound to.
	nodes map[string]*list.Element
	// recent holds the *nodeItems, most recently changed first, so that a
	// snapshot visits only what changed since the last one.
	recent *list.List
	tree   nodeTree
	// membershipChanged is set when a node joined or left the tree since
	// the last snapshot, which then lists the nodes anew.
	membershipChanged bool
	images            imageIndex

	pods    map[string]*podState
	assumed map[string]*podState

	claims map[claimKey]*resourceapi.ResourceClaim
	// claimList lists claims; nil after a change.
	claimList []*resourceapi.ResourceClaim

	last *Snapshot
	// lastShared says that Snapshot returned last, so that it must never
	// be updated in place.
	lastShared bool
}

type nodeItem struct {
	name string
	info *nodeinfo.NodeInfo
}

type podState struct {
	key     string
	pod     *v1.Pod
	assumed bool
	// deadline is when an assumed pod whose binding finished expires;
	// zero for never.
	deadline time.Time
	// claims are the ResourceClaims the assumed pod changed, until the
	// informer reports them.
	claims []assumedClaim
}

// WithFreshImageStates makes every snapshot's image summaries, which
// ImageLocality reads, what nodeinfo.Build computes from the same
// objects: each node's own image sizes, and how many of the current
// nodes hold each image. kube-scheduler's NewSnapshot computes them so.
//
// Without it the cache keeps them as kube-scheduler's own cache does, so
// that a scheduler built on it scores as a running kube-scheduler does.
// That differs from Build in two ways:
//   - An image name has one size: the one the first node to report it
//     gave (until no node reports it any more), whatever other nodes
//     report.
//   - A node's counts are taken when the node changes (its node object,
//     or a pod added or removed) and copied into the next snapshot. A
//     node that has not changed since keeps the counts it had then.
//
// A simulation, which should see what Build sees, uses this option.
func WithFreshImageStates() Option {
	return func(c *Cache) error {
		c.images.fresh = true
		return nil
	}
}

// New returns an empty cache. It returns an error for a bad option.
func New(opts ...Option) (*Cache, error) {
	c := &Cache{
		clock:   clock.RealClock{},
		nodes:   map[string]*list.Element{},
		recent:  list.New(),
		pods:    map[string]*podState{},
		assumed: map[string]*podState{},
		claims:  map[claimKey]*resourceapi.ResourceClaim{},
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

var errNilNode = errors.New("cache: nil node")

// AddNode adds node, or replaces the cached node of the same name. It
// returns a copy of the node's NodeInfo as it now is, which callers may
// keep (for example for filter.PreCheckForNode).
func (c *Cache) AddNode(node *v1.Node) (*nodeinfo.NodeInfo, error) {
	if node == nil {
		return nil, errNilNode
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.item(node.Name)
	item := e.Value.(*nodeItem)
	old := item.info.Node()
	if old == nil {
		c.tree.add(node)
		c.membershipChanged = true
	} else {
		c.tree.update(old, node)
	}
	item.info.SetNode(node)
	c.images.set(node.Name, old, node)
	item.info.SetImageStates(c.images.summaries(node))
	c.recent.MoveToFront(e)
	return item.info.Clone(), nil
}

// UpdateNode replaces the cached node of node's name with node, as an
// informer's update delivers it; a node not yet cached is added. It is
// AddNode under the name an update handler looks for: the cache keeps
// the old node itself.
func (c *Cache) UpdateNode(node *v1.Node) (*nodeinfo.NodeInfo, error) {
	return c.AddNode(node)
}

// RemoveNode removes the node obj names: a *v1.Node or a tombstone
// holding one ([DeletedFinalStateUnknown], or client-go's). Only the
// name is read, so a stale tombstone is fine. Pods still bound to it are
// kept, out of snapshots, until they are removed. It returns an error
// when obj holds no node or the node is not cached.
func (c *Cache) RemoveNode(obj any) error {
	node, err := NodeOf(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.nodes[node.Name]
	if !ok || e.Value.(*nodeItem).info.Node() == nil {
		return fmt.Errorf("cache: node %q is not in the cache", node.Name)
	}
	item := e.Value.(*nodeItem)
	cached := item.info.Node()
	c.tree.remove(cached)
	c.membershipChanged = true
	c.images.set(node.Name, cached, nil)
	if len(item.info.Pods()) == 0 {
		c.drop(e)
		return nil
	}
	item.info.SetNode(nil)
	c.recent.MoveToFront(e)
	return nil
}

// AddPod adds a pod bound to a node (spec.nodeName set), as an informer
// delivers it when the pod is created bound or gets bound. A pod the
// scheduler assumed is confirmed: the bound pod replaces the assumed one,
// on the node it names. It returns an error for a nil or unbound pod, or
// one already added.
func (c *Cache) AddPod(pod *v1.Pod) error {
	key, err := boundPodKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.pods[key]
	switch {
	case !ok:
		c.addPod(key, pod, false)
	case st.assumed:
		if err := c.removePod(st); err != nil {
			return err
		}
		c.addPod(key, pod, false)
	default:
		return fmt.Errorf("cache: pod %s was already added", nameOf(pod))
	}
	return nil
}

// UpdatePod replaces an added pod with its new state (labels, requests
// resized in place, ...). It returns an error for a nil pod, one not
// added, one only assumed (its confirmation is AddPod), or one whose
// spec.nodeName changed, which the API server never allows and would
// mean the cache missed events.
func (c *Cache) UpdatePod(pod *v1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.pods[key]
	switch {
	case !ok:
		return fmt.Errorf("cache: pod %s is not in the cache, so it cannot be updated", nameOf(pod))
	case st.assumed:
		return fmt.Errorf("cache: pod %s is assumed, not added: AddPod confirms it", nameOf(pod))
	case st.pod.Spec.NodeName != pod.Spec.NodeName:
		return fmt.Errorf("cache: pod %s moved from node %q to %q; the cache has missed events", nameOf(pod), st.pod.Spec.NodeName, pod.Spec.NodeName)
	}
	if err := c.removePod(st); err != nil {
		return err
	}
	c.addPod(key, pod, false)
	return nil
}

// RemovePod removes the pod obj names, added or assumed: a *v1.Pod or a
// tombstone holding one ([DeletedFinalStateUnknown], or client-go's). The
// cached pod is removed from the node it is cached on; a stale tombstone
// may carry no spec.nodeName, but a different one is an error, as is a
// pod not in the cache.
func (c *Cache) RemovePod(obj any) error {
	pod, err := PodOf(obj)
	if err != nil {
		return err
	}
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.pods[key]
	if !ok {
		return fmt.Errorf("cache: pod %s is not in the cache, so it cannot be removed", nameOf(pod))
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != st.pod.Spec.NodeName {
		return fmt.Errorf("cache: pod %s is cached on node %q, not %q; the cache has missed events", nameOf(pod), st.pod.Spec.NodeName, pod.Spec.NodeName)
	}
	return c.removePod(st)
}

// AssumePod places pod on the node its spec.nodeName names before the API
// server confirms the binding, so that the next scheduling cycles see the
// node's resources taken. Call it with a copy of the pod whose
// spec.nodeName is the chosen node, and with the claims the placement
// allocated and reserved (filter.Claims), which replace the
// cached claims of the same name until the informer reports them, so that
// [Cache.ResourceClaims] lists their devices as taken. Then
// [Cache.FinishBinding] once the bind call returned, [Cache.ForgetPod] if
// it failed; the informer's AddPod confirms it. It returns an error,
// changing nothing, for a nil or unbound pod, one already in the cache, or
// a nil, unnamed or other-namespace claim.
func (c *Cache) AssumePod(pod *v1.Pod, claims ...*resourceapi.ResourceClaim) error {
	key, err := boundPodKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[key]; ok {
		return fmt.Errorf("cache: pod %s is in the cache, so it cannot be assumed", nameOf(pod))
	}
	st := &podState{key: key, pod: pod}
	if err := c.assumeClaims(st, claims); err != nil {
		return err
	}
	c.addPod(key, pod, true)
	c.pods[key].claims = st.claims
	return nil
}

// FinishBinding records that the bind call of an assumed pod returned;
// with [WithAssumedPodTTL] the pod expires that long after, unless AddPod
// confirms it first. A pod not assumed is left alone. It returns an error
// only for a pod without UID or name.
func (c *Cache) FinishBinding(pod *v1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.assumed[key]; ok && c.ttl > 0 {
		st.deadline = c.clock.Now().Add(c.ttl)
	}
	return nil
}

// ForgetPod removes an assumed pod, for example after its binding failed,
// and gives back its claims as they were before [Cache.AssumePod], unless
// the informer has reported them since.
// A pod no longer in the cache is not an error (it may have expired or
// been deleted); a pod that is added rather than assumed, or assumed on
// another node than pod's spec.nodeName, is.
func (c *Cache) ForgetPod(pod *v1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.pods[key]
	switch {
	case !ok:
		return nil
	case st.pod.Spec.NodeName != pod.Spec.NodeName:
		return fmt.Errorf("cache: pod %s was assumed on node %q, not %q", nameOf(pod), st.pod.Spec.NodeName, pod.Spec.NodeName)
	case !st.assumed:
		return fmt.Errorf("cache: pod %s was added, not assumed, so it cannot be forgotten", nameOf(pod))
	}
	c.restoreClaims(st)
	return c.removePod(st)
}

// IsAssumedPod reports whether pod is assumed and not yet confirmed. It
// returns an error only for a pod without UID or name.
func (c *Cache) IsAssumedPod(pod *v1.Pod) (bool, error) {
	key, err := podKey(pod)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.assumed[key]
	return ok, nil
}

// GetPod returns the cached state of pod (matched by UID, or by
// namespace/name without one): for an assumed pod, the copy given to
// AssumePod, with the chosen node. It returns an error when the pod is
// not in the cache.
func (c *Cache) GetPod(pod *v1.Pod) (*v1.Pod, error) {
	key, err := podKey(pod)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.pods[key]
	if !ok {
		return nil, fmt.Errorf("cache: pod %s is not in the cache", nameOf(pod))
	}
	return st.pod, nil
}

// ExpireAssumedPods forgets the assumed pods whose time is up (see
// [WithAssumedPodTTL]) and returns them. [Cache.Snapshot] calls it too,
// so callers that snapshot every cycle need not.
func (c *Cache) ExpireAssumedPods() []*v1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expire()
}

// NodeCount returns the number of nodes in the cache.
func (c *Cache) NodeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tree.n
}

// PodCount returns the number of pods in the cache, added and assumed,
// including those bound to nodes not (or no longer) in it.
func (c *Cache) PodCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

func (c *Cache) expire() []*v1.Pod {
	if len(c.assumed) == 0 || c.ttl == 0 {
		return nil
	}
	now := c.clock.Now()
	var expired []*v1.Pod
	for _, st := range c.assumed {
		if st.deadline.IsZero() || !now.After(st.deadline) {
			continue
		}
		if err := c.removePod(st); err == nil {
			expired = append(expired, st.pod)
		}
	}
	return expired
}

// item returns the element of the node called name, making an empty one
// if there is none.
func (c *Cache) item(name string) *list.Element {
	if e, ok := c.nodes[name]; ok {
		return e
	}
	e := c.recent.PushFront(&nodeItem{name: name, info: nodeinfo.New(nil)})
	c.nodes[name] = e
	return e
}

func (c *Cache) drop(e *list.Element) {
	c.recent.Remove(e)
	delete(c.nodes, e.Value.(*nodeItem).name)
}

func (c *Cache) addPod(key string, pod *v1.Pod, assumed bool) {
	e := c.item(pod.Spec.NodeName)
	e.Value.(*nodeItem).info.AddPod(pod)
	c.recent.MoveToFront(e)
	st := &podState{key: key, pod: pod, assumed: assumed}
	c.pods[key] = st
	if assumed {
		c.assumed[key] = st
	}
}

// removePod takes a cached pod off its node, and drops a node-less entry
// left without pods.
func (c *Cache) removePod(st *podState) error {
	if e, ok := c.nodes[st.pod.Spec.NodeName]; ok {
		item := e.Value.(*nodeItem)
		if err := item.info.RemovePod(st.pod); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		if len(item.info.Pods()) == 0 && item.info.Node() == nil {
			c.drop(e)
		} else {
			c.recent.MoveToFront(e)
		}
	}
	delete(c.pods, st.key)
	delete(c.assumed, st.key)
	return nil
}

// podKey identifies a pod: its UID, or namespace/name without one.
func podKey(pod *v1.Pod) (string, error) {
	switch {
	case pod == nil:
		return "", errors.New("cache: nil pod")
	case pod.UID != "":
		return string(pod.UID), nil
	case pod.Name == "":
		return "", errors.New("cache: pod has neither a UID nor a name")
	}
	return pod.Namespace + "/" + pod.Name, nil
}

func boundPodKey(pod *v1.Pod) (string, error) {
	key, err := podKey(pod)
	if err == nil && pod.Spec.NodeName == "" {
		err = fmt.Errorf("cache: pod %s is not bound to a node (spec.nodeName is empty)", nameOf(pod))
	}
	return key, err
}

func nameOf(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }
