package cache

import (
	"slices"

	"github.com/kubesched/kubesched/internal/changelog"
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
	// changeLog gives the framework the nodes' generations and the
	// positions changed by in-place updates (ChangedSince,
	// Generations), reading d.
	changeLog
	// d holds the snapshot's generation, its nodes' generations beside
	// them, and the log of its in-place updates (Cache.UpdateSnapshot)
	// since the node list was made, bounded by maxLogged positions.
	d     *changelog.Data
	nodes []*nodeinfo.NodeInfo
	// index maps node names to positions in nodes. Snapshots with the
	// same node list share it.
	index map[string]int
	// withAffinity and withRequiredAnti are the nodes holding pods with
	// pod affinity terms, and with required anti-affinity terms;
	// affinityAt and antiAt their positions in nodes.
	withAffinity, withRequiredAnti []*nodeinfo.NodeInfo
	affinityAt, antiAt             []int32
	// ownAffinity and ownAnti say whether the snapshot made its lists
	// itself, rather than sharing them with the snapshot before it: only
	// then may an in-place update write to them.
	ownAffinity, ownAnti bool
}

// changeLog is the embedded log, unexported so that its methods serve
// the framework without being part of Snapshot's documented API.
type changeLog = changelog.Log

// newSnapshot returns an empty snapshot of generation generation.
func newSnapshot(generation int64) *Snapshot {
	d := &changelog.Data{Generation: generation}
	return &Snapshot{changeLog: changelog.Of(d), d: d}
}

// maxLogged bounds a snapshot's log: past about this many positions a
// pass over every node costs no more than reading the log.
func maxLogged(nodes int) int { return max(64, nodes/16) }

// NodesWithPodAffinity returns the nodes holding a pod with pod affinity
// or anti-affinity terms, in Nodes order. With
// [Snapshot.NodesWithRequiredPodAntiAffinity] it spares the framework
// a pass over the nodes of each new snapshot to find them.
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
//
// When inPlace, s is prev being updated in place: a list prev made
// itself is edited in place (see edit) instead of made anew, unless
// many nodes join or leave it.
func (s *Snapshot) listAffinity(prev *Snapshot, changed []int, olds []*nodeinfo.NodeInfo, inPlace bool) {
	withAffinity := func(ni *nodeinfo.NodeInfo) bool { return len(ni.PodsWithAffinity()) > 0 }
	withAnti := func(ni *nodeinfo.NodeInfo) bool { return len(ni.PodsWithRequiredAntiAffinity()) > 0 }
	if prev == nil || changed == nil {
		for i, ni := range s.nodes {
			if withAffinity(ni) {
				s.withAffinity, s.affinityAt = append(s.withAffinity, ni), append(s.affinityAt, int32(i))
			}
			if withAnti(ni) {
				s.withRequiredAnti, s.antiAt = append(s.withRequiredAnti, ni), append(s.antiAt, int32(i))
			}
		}
		s.ownAffinity, s.ownAnti = true, true
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
	s.ownAffinity, s.ownAnti = inPlace && prev.ownAffinity, inPlace && prev.ownAnti
	if !anyChanged && !antiChanged {
		return
	}
	if anyChanged && s.ownAffinity {
		var ok bool
		if s.withAffinity, s.affinityAt, ok = s.edit(s.withAffinity, s.affinityAt, changed, withAffinity); ok {
			anyChanged = false
		}
	}
	if antiChanged && s.ownAnti {
		var ok bool
		if s.withRequiredAnti, s.antiAt, ok = s.edit(s.withRequiredAnti, s.antiAt, changed, withAnti); ok {
			antiChanged = false
		}
	}
	if !anyChanged && !antiChanged {
		return
	}
	sorted := slices.Clone(changed)
	slices.Sort(sorted)
	if anyChanged {
		s.withAffinity, s.affinityAt = s.merge(prev.withAffinity, prev.affinityAt, sorted, withAffinity)
		s.ownAffinity = true
	}
	if antiChanged {
		s.withRequiredAnti, s.antiAt = s.merge(prev.withRequiredAnti, prev.antiAt, sorted, withAnti)
		s.ownAnti = true
	}
}

// maxEdits is how many nodes may join or leave an affinity list in one
// in-place update before edit leaves it to a merge: each costs a move of
// the list's tail.
const maxEdits = 8

// edit brings list, which s made and whose nodes are at positions at, up
// to date with the changed positions in place, and returns it: a changed
// node still in it gets its new NodeInfo written where the old one was,
// one that left is taken out, one that joined is put in at its place in
// position order. It reports false, having changed nothing, when more
// than maxEdits nodes join or leave.
func (s *Snapshot) edit(list []*nodeinfo.NodeInfo, at []int32, changed []int, has func(*nodeinfo.NodeInfo) bool) ([]*nodeinfo.NodeInfo, []int32, bool) {
	moves := 0
	for _, i := range changed {
		if _, member := slices.BinarySearch(at, int32(i)); member != has(s.nodes[i]) {
			if moves++; moves > maxEdits {
				return list, at, false
			}
		}
	}
	for _, i := range changed {
		j, member := slices.BinarySearch(at, int32(i))
		switch now := has(s.nodes[i]); {
		case member && now:
			list[j] = s.nodes[i]
		case member:
			list, at = slices.Delete(list, j, j+1), slices.Delete(at, j, j+1)
		case now:
			list, at = slices.Insert(list, j, s.nodes[i]), slices.Insert(at, j, int32(i))
		}
	}
	return list, at, true
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
	if s == nil || s.d == nil {
		return 0
	}
	return s.d.Generation
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
	s := c.snapshot(nil)
	c.lastShared = true
	return s
}

// UpdateSnapshot brings s, the snapshot this cache returned last, up to
// date in place, as kube-scheduler's cache updates its scheduler's
// snapshot, and returns it: only the positions of the nodes that changed
// are written, where [Cache.Snapshot] copies the whole node list, which
// is most of the cost of a simulation placing pod after pod on a large
// cluster. Its [Snapshot.Generation] grows with each change, so that a
// framework sees it changed. When s is not the cache's latest snapshot,
// or nodes joined or left since, it returns a new snapshot instead, as
// Snapshot does. So does it when s was also returned by Snapshot (when
// nothing changed between the two calls), whose snapshots never change.
//
// This breaks the promise that a Snapshot never changes: call it only
// when nothing else reads s, and s's NodeInfos read before may no longer
// be its own. Results computed over s still name their nodes right,
// since nodes keep their positions.
func (c *Cache) UpdateSnapshot(s *Snapshot) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == nil || s != c.last || c.lastShared {
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
		newest = front.Value.(*nodeItem).info.Generation()
	}
	if prev != nil && !c.membershipChanged && newest <= prev.Generation() {
		return prev
	}
	s := newSnapshot(newest)
	if prev != nil {
		// A removed node may have been the newest.
		s.d.Generation = max(newest, prev.Generation())
	}
	if prev == nil || c.membershipChanged {
		names := c.tree.list()
		s.nodes = make([]*nodeinfo.NodeInfo, len(names))
		s.d.Gens = make([]int64, len(names))
		s.index = make(map[string]int, len(names))
		for i, name := range names {
			s.index[name] = i
			info := c.nodes[name].Value.(*nodeItem).info
			if old, ok := prev.Get(name); ok && old.Generation() == info.Generation() {
				s.nodes[i] = old
			} else {
				s.nodes[i] = c.images.snapshotOf(info)
			}
			s.d.Gens[i] = s.nodes[i].Generation()
		}
		s.listAffinity(prev, nil, nil, false)
	} else {
		inPlace := reuse == prev
		if inPlace {
			s.nodes, s.d.Gens = prev.nodes, prev.d.Gens
		} else {
			s.nodes, s.d.Gens = slices.Clone(prev.nodes), slices.Clone(prev.d.Gens)
		}
		s.index = prev.index
		changed := []int{} // not nil: only these nodes changed
		var olds []*nodeinfo.NodeInfo
		// Changes move their node to the front, so the changed nodes come
		// first, newest first.
		for e := c.recent.Front(); e != nil; e = e.Next() {
			item := e.Value.(*nodeItem)
			if item.info.Generation() <= prev.Generation() {
				break
			}
			if i, ok := s.index[item.name]; ok {
				olds = append(olds, s.nodes[i])
				s.nodes[i] = c.images.snapshotOf(item.info)
				s.d.Gens[i] = s.nodes[i].Generation()
				changed = append(changed, i)
			}
		}
		s.listAffinity(prev, changed, olds, inPlace)
		if inPlace {
			s.d.Updates, s.d.At = prev.d.Updates, prev.d.At
			s.d.Record(prev.Generation(), changed, maxLogged(len(s.nodes)))
			*prev = *s
			s = prev
		}
	}
	c.membershipChanged = false
	if s != c.last {
		c.last, c.lastShared = s, false
	}
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
