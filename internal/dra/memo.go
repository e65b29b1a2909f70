package dra

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/dynamic-resource-allocation/structured"
)

// The allocator is deterministic: what it makes of a list of claims on a
// node depends only on
//   - the node object (its name and labels, for node selectors);
//   - every ResourceSlice of every pool the node can reach: the pools of
//     the slices published for the node by name, and of the slices for
//     several nodes (node selectors, all nodes, per-device selection,
//     shared counters), which every node reaches; a pool it reaches
//     partly is judged complete or not over all its slices;
//   - the DeviceClasses;
//   - the devices, shares and capacity already allocated in those pools;
//   - the claims' specs, in order (nothing else of a claim is read);
//   - the plugin's features and CEL settings, fixed per Plugin.
//
// DeviceTaintRules change the slices the allocator is given: those with
// taints applied are copies, which the memo keys by identity as any slice
// (see applyTaintRules).
//
// memo remembers, per node, the allocator's answer for such a key, so that
// a pod like an earlier one, on a node nothing relevant has changed on,
// skips the allocator: in a loop that places pod after pod, only the node
// that took the last pod is allocated again. Objects are keyed by identity
// through weak pointers, so the memo keeps no object alive, and an object
// collected and replaced at the same address never matches; the rest is
// keyed by value. Answers that mention a claim by name (errors) or hold a
// random share ID are not remembered.
type memo struct {
	shards [memoShards]memoShard

	mu sync.Mutex
	// index is the last cycle's slice index, reused while the listed
	// slices are the same objects in the same order.
	index *sliceIndex
	// commons are the last cycles' commons, the most recent first.
	commons []*common
	// allocation is the last cycle's allocated state, reused while the
	// listed claims are the same objects in the same order.
	allocation *allocation
	// held is the last cycle's world.held, for its allocation and index.
	held *heldIndex
	// tainted are the last cycle's slices with DeviceTaintRules' taints,
	// by the slice they copy (see applyTaintRules).
	tainted map[weak.Pointer[resourceapi.ResourceSlice]]*taintedSlice
}

// allocation is what the allocated claims hold, whole for the allocator
// and spelled out per pool for the memo's keys.
type allocation struct {
	listed     []weak.Pointer[resourceapi.ResourceClaim]
	consumable bool
	state      *structured.AllocatedState
	byPool     map[poolID]string
}

// heldIndex is an allocation's byPool keyed by an index's pools.
type heldIndex struct {
	allocation *allocation
	index      *sliceIndex
	byPool     map[*pool]string
}

// allocatedState lists the claims and returns what they hold, the last
// cycle's when the list is the same objects in the same order.
func (m *memo) allocatedState(lister fwk.Lister[*resourceapi.ResourceClaim], consumable bool) (*allocation, error) {
	var claims []*resourceapi.ResourceClaim
	if lister != nil {
		var err error
		if claims, err = lister.List(labels.Everything()); err != nil {
			return nil, err
		}
	}
	listed := weakAll(claims)
	m.mu.Lock()
	last := m.allocation
	m.mu.Unlock()
	if last != nil && last.consumable == consumable && slices.Equal(last.listed, listed) {
		return last, nil
	}
	a := &allocation{listed: listed, consumable: consumable, state: allocatedState(claims, consumable)}
	a.byPool = allocatedByPool(a.state)
	m.mu.Lock()
	m.allocation = a
	m.mu.Unlock()
	return a, nil
}

// heldIndex returns a's byPool over idx's pools, the last cycle's when
// both are the same. Pools without slices (their devices were allocated
// before the slices went away) are left out: no node reaches them.
func (m *memo) heldIndex(a *allocation, idx *sliceIndex) map[*pool]string {
	m.mu.Lock()
	last := m.held
	m.mu.Unlock()
	if last != nil && last.allocation == a && last.index == idx {
		return last.byPool
	}
	h := &heldIndex{allocation: a, index: idx, byPool: make(map[*pool]string, len(a.byPool))}
	for id, held := range a.byPool {
		if p := idx.byID[id]; p != nil {
			h.byPool[p] = held
		}
	}
	m.mu.Lock()
	m.held = h
	m.mu.Unlock()
	return h.byPool
}

const (
	memoShards = 64
	// memoPerNode answers are kept per node, the most recent first, so a
	// loop alternating between a few kinds of pods keeps its hits.
	memoPerNode = 4
	// memoShardNodes bounds the nodes a shard remembers; a shard that
	// outgrows it starts over, so that node names that come and go (an
	// autoscaled cluster) cannot grow the memo without end.
	memoShardNodes = 4096
	// memoCommons commons are kept, as many as the answers per node.
	memoCommons = memoPerNode
)

type memoShard struct {
	mu     sync.Mutex
	byNode map[string][]*memoEntry
	// hits and misses count lookups, for tests.
	hits, misses int
}

// memoEntry is one remembered answer: results nil means the claims cannot
// all be allocated on the node. It holds the parts of its cycle's world
// the answer depends on, not the world, whose indexes span the cluster.
type memoEntry struct {
	node    weak.Pointer[v1.Node]
	common  *common
	local   []*pool
	held    []string
	results []resourceapi.AllocationResult
}

// common is what every node's allocation in a cycle depends on: the
// claims' specs, in order, all classes, by name, and the pools every node
// reaches with what is allocated from them. The memo keeps the last few,
// so that a cycle like an earlier one reuses its common and entries
// compare it by pointer.
type common struct {
	claims  string
	classes []weak.Pointer[resourceapi.DeviceClass]
	shared  []*pool
	held    []string
}

func (c *common) equal(d *common) bool {
	return c == d || c.claims == d.claims && slices.Equal(c.classes, d.classes) &&
		slices.EqualFunc(c.shared, d.shared, (*pool).equal) && slices.Equal(c.held, d.held)
}

// world is what one cycle's allocations share, whatever the node.
type world struct {
	common *common
	index  *sliceIndex
	// held spells out what is allocated from each pool, "" for none.
	held map[*pool]string
}

// poolID names a pool: its driver and its name.
type poolID struct{ driver, pool string }

// pool is one pool's slices, all of them, by identity, sorted by name.
type pool struct {
	id     poolID
	slices []weak.Pointer[resourceapi.ResourceSlice]
}

func (p *pool) equal(q *pool) bool {
	return p == q || p.id == q.id && slices.Equal(p.slices, q.slices)
}

// sliceIndex groups the listed slices by pool the way the allocator
// splits them: a slice named after a node is that node's alone unless it
// carries shared counters; every other slice reaches every node.
type sliceIndex struct {
	// listed are the slices as listed, to recognise the list next cycle.
	listed []weak.Pointer[resourceapi.ResourceSlice]
	byID   map[poolID]*pool
	shared []*pool
	onNode map[string][]*pool
}

func newSliceIndex(all []*resourceapi.ResourceSlice, listed []weak.Pointer[resourceapi.ResourceSlice]) *sliceIndex {
	byPool := make(map[poolID][]int)
	for i, s := range all {
		id := poolID{s.Spec.Driver, s.Spec.Pool.Name}
		byPool[id] = append(byPool[id], i)
	}
	pools := make(map[poolID]*pool, len(byPool))
	for id, members := range byPool {
		slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(all[a].Name, all[b].Name) })
		p := &pool{id: id, slices: make([]weak.Pointer[resourceapi.ResourceSlice], len(members))}
		for j, i := range members {
			p.slices[j] = listed[i]
		}
		pools[id] = p
	}
	idx := &sliceIndex{listed: listed, byID: pools, onNode: make(map[string][]*pool, len(all))}
	for _, s := range all {
		p := pools[poolID{s.Spec.Driver, s.Spec.Pool.Name}]
		name := ""
		if s.Spec.NodeName != nil {
			name = *s.Spec.NodeName
		}
		if name == "" || len(s.Spec.SharedCounters) > 0 {
			if !slices.Contains(idx.shared, p) {
				idx.shared = append(idx.shared, p)
			}
		} else if local := idx.onNode[name]; !slices.Contains(local, p) {
			idx.onNode[name] = append(local, p)
		}
	}
	sortPools(idx.shared)
	for _, local := range idx.onNode {
		sortPools(local)
	}
	return idx
}

func sortPools(p []*pool) {
	slices.SortFunc(p, func(a, b *pool) int {
		return cmp.Or(cmp.Compare(a.id.driver, b.id.driver), cmp.Compare(a.id.pool, b.id.pool))
	})
}

// weakAll returns weak pointers to objs, in order.
func weakAll[T any](objs []*T) []weak.Pointer[T] {
	w := make([]weak.Pointer[T], len(objs))
	for i, o := range objs {
		w[i] = weak.Make(o)
	}
	return w
}

// sliceIndex returns the index of all, the last one when all lists the
// same objects in the same order.
func (m *memo) sliceIndex(all []*resourceapi.ResourceSlice) *sliceIndex {
	listed := weakAll(all)
	m.mu.Lock()
	last := m.index
	m.mu.Unlock()
	if last != nil && slices.Equal(last.listed, listed) {
		return last
	}
	idx := newSliceIndex(all, listed)
	m.mu.Lock()
	m.index = idx
	m.mu.Unlock()
	return idx
}

// world describes the allocation inputs of one cycle: the claims to
// allocate, all classes and slices, and what is allocated already. It
// returns nil when some claim cannot be keyed.
func (m *memo) world(claims []*resourceapi.ResourceClaim, classes []*resourceapi.DeviceClass, all []*resourceapi.ResourceSlice, allocated *allocation) *world {
	var key strings.Builder
	for _, c := range claims {
		spec, err := c.Spec.Marshal()
		if err != nil {
			return nil
		}
		fmt.Fprintf(&key, "%d:", len(spec))
		key.Write(spec)
	}
	w := &world{index: m.sliceIndex(all)}
	w.held = m.heldIndex(allocated, w.index)
	c := &common{claims: key.String(), shared: w.index.shared}
	// Listers list in any order; the key takes the classes by name.
	byName := slices.SortedStableFunc(slices.Values(classes), func(a, b *resourceapi.DeviceClass) int { return cmp.Compare(a.Name, b.Name) })
	c.classes = weakAll(byName)
	c.held = make([]string, len(c.shared))
	for i, p := range c.shared {
		c.held[i] = w.held[p]
	}
	w.common = m.intern(c)
	return w
}

// intern returns the kept common equal to c, or keeps c.
func (m *memo) intern(c *common) *common {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.commons, c.equal)
	if i < 0 {
		if len(m.commons) < memoCommons {
			m.commons = append(m.commons, nil)
		}
		i = len(m.commons) - 1
	} else {
		c = m.commons[i]
	}
	copy(m.commons[1:i+1], m.commons[:i])
	m.commons[0] = c
	return c
}

// allocatedByPool spells out, per pool, its allocated devices, shares and
// consumed capacity, each sorted, so that equal states give equal strings.
func allocatedByPool(st *structured.AllocatedState) map[poolID]string {
	lines := make(map[poolID][]string)
	for id := range st.AllocatedDevices {
		p := poolID{id.Driver.String(), id.Pool.String()}
		lines[p] = append(lines[p], "d "+id.Device.String())
	}
	for id := range st.AllocatedSharedDeviceIDs {
		p := poolID{id.Driver.String(), id.Pool.String()}
		lines[p] = append(lines[p], fmt.Sprintf("s %s %s", id.Device, id.ShareID))
	}
	for id, capacity := range st.AggregatedCapacity {
		p := poolID{id.Driver.String(), id.Pool.String()}
		var b strings.Builder
		fmt.Fprintf(&b, "c %s", id.Device)
		for _, name := range slices.Sorted(maps.Keys(capacity)) {
			fmt.Fprintf(&b, " %s=%s", name, capacity[name].String())
		}
		lines[p] = append(lines[p], b.String())
	}
	out := make(map[poolID]string, len(lines))
	for id, l := range lines {
		slices.Sort(l)
		out[id] = strings.Join(l, "\n")
	}
	return out
}

// matches reports whether e answers for the claims of w on the node wp
// points to, whose own pools are local.
func (e *memoEntry) matches(w *world, wp weak.Pointer[v1.Node], local []*pool) bool {
	if e.node != wp || e.common != w.common || len(e.local) != len(local) {
		return false
	}
	for i, p := range e.local {
		if !p.equal(local[i]) || e.held[i] != w.held[local[i]] {
			return false
		}
	}
	return true
}

func (m *memo) shard(node string) *memoShard {
	var h uint32 = 2166136261
	for i := 0; i < len(node); i++ {
		h = (h ^ uint32(node[i])) * 16777619
	}
	return &m.shards[h%memoShards]
}

// lookup returns the remembered answer for the claims of w on node.
func (m *memo) lookup(w *world, node *v1.Node) (results []resourceapi.AllocationResult, ok bool) {
	if w == nil {
		return nil, false
	}
	wp := weak.Make(node)
	local := w.index.onNode[node.Name]
	sh := m.shard(node.Name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	entries := sh.byNode[node.Name]
	for i, e := range entries {
		if e.matches(w, wp, local) {
			if i > 0 {
				// Most recent first.
				copy(entries[1:i+1], entries[:i])
				entries[0] = e
			}
			sh.hits++
			return e.results, true
		}
	}
	sh.misses++
	return nil, false
}

// remember keeps the allocator's answer for the claims of w on node; an
// answer with a share ID is drawn at random and is not kept.
func (m *memo) remember(w *world, node *v1.Node, results []resourceapi.AllocationResult) {
	if w == nil {
		return
	}
	for i := range results {
		for _, r := range results[i].Devices.Results {
			if r.ShareID != nil {
				return
			}
		}
	}
	e := &memoEntry{node: weak.Make(node), common: w.common, local: w.index.onNode[node.Name], results: results}
	e.held = make([]string, len(e.local))
	for i, p := range e.local {
		e.held[i] = w.held[p]
	}
	sh := m.shard(node.Name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.byNode == nil || len(sh.byNode) >= memoShardNodes {
		sh.byNode = make(map[string][]*memoEntry)
	}
	entries := sh.byNode[node.Name]
	if len(entries) < memoPerNode {
		entries = append(entries, nil)
	}
	copy(entries[1:], entries)
	entries[0] = e
	sh.byNode[node.Name] = entries
}

// counts returns the lookups that hit and missed so far.
func (m *memo) counts() (hits, misses int) {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		hits, misses = hits+sh.hits, misses+sh.misses
		sh.mu.Unlock()
	}
	return hits, misses
}
