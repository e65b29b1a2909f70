package cache

import (
	"slices"

	"github.com/kubesched/kubesched/nodeinfo"
)

// Snapshot is the cluster as the cache held it at one moment: a NodeInfo
// per node, in kube-scheduler's order (zones in turn, see [Cache.Snapshot]),
// with the pods bound or assumed on it. It is a framework.NodeSnapshot:
// schedule on it with framework.ScheduleSnapshot(ctx, pod, snap), which
// trusts it never to change and so does no work for the nodes the pod
// does not need.
//
// A Snapshot never changes once made, so any number of goroutines may
// read it while the cache moves on. Its NodeInfos are shared with later
// snapshots for as long as their nodes do not change: never modify one;
// clone it (NodeInfo.Clone) to try changes out.
type Snapshot struct {
	nodes []*nodeinfo.NodeInfo
	// index maps node names to positions in nodes. Snapshots with the
	// same node list share it.
	index map[string]int
	// generation is the highest NodeInfo generation the snapshot has seen.
	generation int64
	// withAffinity and withRequiredAnti are the nodes holding pods with
	// pod affinity terms, and with required anti-affinity terms.
	withAffinity, withRequiredAnti []*nodeinfo.NodeInfo
}

// NodesWithPodAffinity returns the nodes holding a pod with pod affinity
// or anti-affinity terms, in Nodes order. With
// [Snapshot.NodesWithRequiredPodAntiAffinity] it makes a Snapshot a
// framework.PodAffinitySnapshot.
func (s *Snapshot) NodesWithPodAffinity() []*nodeinfo.NodeInfo {
	if s == nil {
		return nil
	}
	return s.withAffinity
}

// NodesWithRequiredPodAntiAffinity returns the nodes holding a pod with
// required pod anti-affinity terms, in Nodes order.
func (s *Snapshot) NodesWithRequiredPodAntiAffinity() []*nodeinfo.NodeInfo {
	if s == nil {
		return nil
	}
	return s.withRequiredAnti
}

// listAffinity sets the affinity lists from the nodes, or keeps prev's
// when no node that changed since prev holds or held such pods: the
// lists then hold only NodeInfos both snapshots share. A nil prev, or
// changed nodes without prev positions (the node list was rebuilt),
// means a full pass.
func (s *Snapshot) listAffinity(prev *Snapshot, changed []int) {
	anyChanged, antiChanged := prev == nil || changed == nil, prev == nil || changed == nil
	for _, i := range changed {
		old, now := prev.nodes[i], s.nodes[i]
		anyChanged = anyChanged || len(old.PodsWithAffinity) > 0 || len(now.PodsWithAffinity) > 0
		antiChanged = antiChanged || len(old.PodsWithRequiredAntiAffinity) > 0 || len(now.PodsWithRequiredAntiAffinity) > 0
	}
	if !anyChanged {
		s.withAffinity = prev.withAffinity
	}
	if !antiChanged {
		s.withRequiredAnti = prev.withRequiredAnti
	}
	if !anyChanged && !antiChanged {
		return
	}
	for _, ni := range s.nodes {
		if anyChanged && len(ni.PodsWithAffinity) > 0 {
			s.withAffinity = append(s.withAffinity, ni)
		}
		if antiChanged && len(ni.PodsWithRequiredAntiAffinity) > 0 {
			s.withRequiredAnti = append(s.withRequiredAnti, ni)
		}
	}
}

// Nodes returns the nodes, in scheduling order. The slice is the
// snapshot's own: do not modify it. A nil Snapshot has no nodes.
func (s *Snapshot) Nodes() []*nodeinfo.NodeInfo {
	if s == nil {
		return nil
	}
	return s.nodes
}

// Get returns the NodeInfo of the node called name.
func (s *Snapshot) Get(name string) (*nodeinfo.NodeInfo, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.index[name]
	if !ok {
		return nil, false
	}
	return s.nodes[i], true
}

// Index returns the position in Nodes of the node called name.
func (s *Snapshot) Index(name string) (int, bool) {
	if s == nil {
		return 0, false
	}
	i, ok := s.index[name]
	return i, ok
}

// Len returns the number of nodes.
func (s *Snapshot) Len() int { return len(s.Nodes()) }

// Snapshot returns the cache's current state as a [Snapshot]. It starts
// from the previous snapshot and copies only the NodeInfos whose
// generation changed since, as kube-scheduler's cache does; when nothing
// changed it returns the previous snapshot itself, so a framework's
// per-node-list caches stay warm. It first expires assumed pods whose
// time is up ([WithAssumedPodTTL]).
//
// Nodes are ordered as kube-scheduler lists them: the first node of each
// zone (zones in the order they appeared), then the second of each, and
// so on. As in kube-scheduler, the order is recomputed only when a node
// joins or leaves; a node whose zone label changes keeps its place until
// then. Nodes not yet seen (only their pods were) and removed nodes
// whose pods are still cached are left out.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	c.respreadImages()

	prev := c.last
	var newest int64
	if front := c.recent.Front(); front != nil {
		newest = front.Value.(*nodeItem).info.Generation
	}
	if prev != nil && !c.membershipChanged && newest <= prev.generation {
		return prev
	}
	s := &Snapshot{generation: newest}
	if prev != nil {
		// A removed node may have been the newest.
		s.generation = max(newest, prev.generation)
	}
	if prev == nil || c.membershipChanged {
		names := c.tree.list()
		s.nodes = make([]*nodeinfo.NodeInfo, len(names))
		s.index = make(map[string]int, len(names))
		for i, name := range names {
			s.index[name] = i
			info := c.nodes[name].Value.(*nodeItem).info
			if old, ok := prev.Get(name); ok && old.Generation == info.Generation {
				s.nodes[i] = old
			} else {
				s.nodes[i] = info.Clone()
			}
		}
		s.listAffinity(prev, nil)
	} else {
		s.nodes, s.index = slices.Clone(prev.nodes), prev.index
		changed := []int{} // not nil: only these nodes changed
		// Changes move their node to the front, so the changed nodes come
		// first, newest first.
		for e := c.recent.Front(); e != nil; e = e.Next() {
			item := e.Value.(*nodeItem)
			if item.info.Generation <= prev.generation {
				break
			}
			if i, ok := s.index[item.name]; ok {
				s.nodes[i] = item.info.Clone()
				changed = append(changed, i)
			}
		}
		s.listAffinity(prev, changed)
	}
	c.membershipChanged = false
	c.last = s
	return s
}

// respreadImages gives the nodes holding an image whose node count
// changed their new counts.
func (c *Cache) respreadImages() {
	for name := range c.images.takeDirty() {
		e, ok := c.nodes[name]
		if !ok {
			continue
		}
		if info := e.Value.(*nodeItem).info; info.Node() != nil {
			info.SetImageStates(c.images.summaries(info.Node()))
			c.recent.MoveToFront(e)
		}
	}
}
