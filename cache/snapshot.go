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
	// gens[i] is nodes[i].Generation, kept beside them (see Generations).
	gens []int64
	// index maps node names to positions in nodes. Snapshots with the
	// same node list share it.
	index map[string]int
	// generation is the highest NodeInfo generation the snapshot has seen.
	generation int64
	// withAffinity and withRequiredAnti are the nodes holding pods with
	// pod affinity terms, and with required anti-affinity terms;
	// affinityAt and antiAt their positions in nodes.
	withAffinity, withRequiredAnti []*nodeinfo.NodeInfo
	affinityAt, antiAt             []int32
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

// listAffinity sets the affinity lists: prev's where no node that
// changed since prev holds or held such pods (the lists then hold only
// NodeInfos both snapshots share); otherwise prev's with the changed
// positions taken out and put back where their nodes now belong, a merge
// in position order. olds[k] is the NodeInfo that was at position
// changed[k] in prev. A nil prev, or changed nodes without prev positions
// (the node list was rebuilt), means a pass over every node. The lists
// are always new slices, since prev's may still be read.
func (s *Snapshot) listAffinity(prev *Snapshot, changed []int, olds []*nodeinfo.NodeInfo) {
	withAffinity := func(ni *nodeinfo.NodeInfo) bool { return len(ni.PodsWithAffinity) > 0 }
	withAnti := func(ni *nodeinfo.NodeInfo) bool { return len(ni.PodsWithRequiredAntiAffinity) > 0 }
	if prev == nil || changed == nil {
		for i, ni := range s.nodes {
			if withAffinity(ni) {
				s.withAffinity, s.affinityAt = append(s.withAffinity, ni), append(s.affinityAt, int32(i))
			}
			if withAnti(ni) {
				s.withRequiredAnti, s.antiAt = append(s.withRequiredAnti, ni), append(s.antiAt, int32(i))
			}
		}
		return
	}
	anyChanged, antiChanged := false, false
	for k, i := range changed {
		old, now := olds[k], s.nodes[i]
		anyChanged = anyChanged || withAffinity(old) || withAffinity(now)
		antiChanged = antiChanged || withAnti(old) || withAnti(now)
	}
	s.withAffinity, s.affinityAt = prev.withAffinity, prev.affinityAt
	s.withRequiredAnti, s.antiAt = prev.withRequiredAnti, prev.antiAt
	if !anyChanged && !antiChanged {
		return
	}
	sorted := slices.Clone(changed)
	slices.Sort(sorted)
	if anyChanged {
		s.withAffinity, s.affinityAt = s.merge(prev.withAffinity, prev.affinityAt, sorted, withAffinity)
	}
	if antiChanged {
		s.withRequiredAnti, s.antiAt = s.merge(prev.withRequiredAnti, prev.antiAt, sorted, withAnti)
	}
}

// merge returns the list (and positions) of list without the positions
// in changed (sorted), with those of changed whose nodes has now holds,
// in position order.
func (s *Snapshot) merge(list []*nodeinfo.NodeInfo, at []int32, changed []int, has func(*nodeinfo.NodeInfo) bool) ([]*nodeinfo.NodeInfo, []int32) {
	out := make([]*nodeinfo.NodeInfo, 0, len(list)+len(changed))
	outAt := make([]int32, 0, len(list)+len(changed))
	k := 0
	addChanged := func(upTo int32) {
		for ; k < len(changed) && int32(changed[k]) <= upTo; k++ {
			if ni := s.nodes[changed[k]]; has(ni) {
				out, outAt = append(out, ni), append(outAt, int32(changed[k]))
			}
		}
	}
	for j, p := range at {
		addChanged(p)
		if _, found := slices.BinarySearch(changed, int(p)); found {
			continue
		}
		out, outAt = append(out, list[j]), append(outAt, p)
	}
	addChanged(int32(len(s.nodes)))
	return out, outAt
}

// Generation returns the highest NodeInfo generation s has seen. It
// changes only when [Cache.UpdateSnapshot] updates s in place; a
// framework compares it to tell an updated snapshot from the one it
// indexed.
func (s *Snapshot) Generation() int64 {
	if s == nil {
		return 0
	}
	return s.generation
}

// Generations returns the Generation of each node of Nodes, in order, so
// that a framework and its plugins can tell which nodes changed since
// they last looked without reading every NodeInfo: on a large cluster
// that read is a memory access per node. The slice is the snapshot's
// own, updated with Nodes by [Cache.UpdateSnapshot]: do not modify it.
func (s *Snapshot) Generations() []int64 {
	if s == nil {
		return nil
	}
	return s.gens
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
	return c.snapshot(nil)
}

// UpdateSnapshot brings s, the snapshot this cache returned last, up to
// date in place, as kube-scheduler's cache updates its scheduler's
// snapshot, and returns it: only the positions of the nodes that changed
// are written, where [Cache.Snapshot] copies the whole node list, which
// is most of the cost of a simulation placing pod after pod on a large
// cluster. Its [Snapshot.Generation] grows with each change, so that a
// framework sees it changed. When s is not the cache's latest snapshot,
// or nodes joined or left since, it returns a new snapshot instead, as
// Snapshot does.
//
// This breaks the promise that a Snapshot never changes: call it only
// when nothing else reads s, and s's NodeInfos read before may no longer
// be its own. Results computed over s still name their nodes right,
// since nodes keep their positions.
func (c *Cache) UpdateSnapshot(s *Snapshot) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == nil || s != c.last {
		return c.snapshot(nil)
	}
	return c.snapshot(s)
}

// snapshot is Snapshot's work, updating reuse in place rather than
// copying it when reuse is the latest snapshot and no node joined or
// left. The caller holds c.mu.
func (c *Cache) snapshot(reuse *Snapshot) *Snapshot {
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
		s.gens = make([]int64, len(names))
		s.index = make(map[string]int, len(names))
		for i, name := range names {
			s.index[name] = i
			info := c.nodes[name].Value.(*nodeItem).info
			if old, ok := prev.Get(name); ok && old.Generation == info.Generation {
				s.nodes[i] = old
			} else {
				s.nodes[i] = c.images.snapshotOf(info)
			}
			s.gens[i] = s.nodes[i].Generation
		}
		s.listAffinity(prev, nil, nil)
	} else {
		inPlace := reuse == prev
		if inPlace {
			s.nodes, s.gens = prev.nodes, prev.gens
		} else {
			s.nodes, s.gens = slices.Clone(prev.nodes), slices.Clone(prev.gens)
		}
		s.index = prev.index
		changed := []int{} // not nil: only these nodes changed
		var olds []*nodeinfo.NodeInfo
		// Changes move their node to the front, so the changed nodes come
		// first, newest first.
		for e := c.recent.Front(); e != nil; e = e.Next() {
			item := e.Value.(*nodeItem)
			if item.info.Generation <= prev.generation {
				break
			}
			if i, ok := s.index[item.name]; ok {
				olds = append(olds, s.nodes[i])
				s.nodes[i] = c.images.snapshotOf(item.info)
				s.gens[i] = s.nodes[i].Generation
				changed = append(changed, i)
			}
		}
		s.listAffinity(prev, changed, olds)
		if inPlace {
			*prev = *s
			s = prev
		}
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
