package incremental

import (
	"sync/atomic"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Positions remembers, for a node list, the generation each position held
// when last counted and the list's version then. The zero value has no
// positions.
type Positions struct {
	gens    []int64
	version cycle.Version
}

// Len returns how many positions p follows.
func (p *Positions) Len() int { return len(p.gens) }

// Reset forgets every position and follows n new ones, none counted.
func (p *Positions) Reset(n int) {
	*p = Positions{gens: make([]int64, n)}
}

// Sync brings p up to nodes, a list of p.Len() nodes: for each position
// whose NodeInfo changed since it was counted, it records the new
// generation and calls recount with the position, its NodeInfo and the
// generation counted before (0: never counted, so no shift is possible).
// gens, when not nil, are the nodes' generations
// (fwk.cycle.Hooks.NodeGenerations), compared instead of reading
// each NodeInfo; state, when not nil, is the cycle's, which may tell
// which positions changed since the last Sync
// (fwk.cycle.Hooks.ChangedNodes), and then only those are compared.
func (p *Positions) Sync(state *fwk.CycleState, nodes []*nodeinfo.NodeInfo, gens []int64, recount func(pos int, ni *nodeinfo.NodeInfo, since int64)) {
	now, changed, ok := cycle.Of(state).ChangedNodes(nodes, p.version)
	p.version = now
	if ok {
		for _, pos := range changed {
			p.visit(int(pos), nodes[pos], gens, recount)
		}
		return
	}
	for pos, ni := range nodes {
		p.visit(pos, ni, gens, recount)
	}
}

func (p *Positions) visit(pos int, ni *nodeinfo.NodeInfo, gens []int64, recount func(int, *nodeinfo.NodeInfo, int64)) {
	since := p.gens[pos]
	if gens != nil && since == gens[pos] && since != 0 {
		return
	}
	gen := ni.Generation()
	if since == gen && gen != 0 {
		return
	}
	p.gens[pos] = gen
	recount(pos, ni, since)
}

// Share is what one position added to the total for Key.
type Share[K comparable] struct {
	Key K
	N   int64
}

// Shares are each position's shares of totals kept by key, which the
// caller holds and changes through the add function it passes.
type Shares[K comparable] struct {
	byPos [][]Share[K]
}

// Reset forgets every share and follows n positions.
func (s *Shares[K]) Reset(n int) { s.byPos = make([][]Share[K], n) }

// Drop takes position pos's shares off the totals, calling add with each
// negated, and forgets them.
func (s *Shares[K]) Drop(pos int, add func(K, int64)) {
	for _, sh := range s.byPos[pos] {
		add(sh.Key, -sh.N)
	}
	s.byPos[pos] = s.byPos[pos][:0]
}

// Add adds n for key to position pos's share and, calling add, to the
// totals; a share that comes to 0 is forgotten.
func (s *Shares[K]) Add(pos int, key K, n int64, add func(K, int64)) {
	add(key, n)
	shares := s.byPos[pos]
	for i := range shares {
		if shares[i].Key != key {
			continue
		}
		if shares[i].N += n; shares[i].N == 0 {
			last := len(shares) - 1
			shares[i] = shares[last]
			s.byPos[pos] = shares[:last]
		}
		return
	}
	s.byPos[pos] = append(shares, Share[K]{Key: key, N: n})
}

// Loan tells whether a value an aggregate handed to cycles without
// copying may still be read by one of them. The zero value is a value
// not lent.
type Loan struct {
	// readers counts the cycles still reading, each counted down as it
	// ends; a value copied gets a new counter, so the old cycles count
	// down the old one.
	readers *atomic.Int32
	// forever: lent to a state whose end the framework does not tell
	// (one made outside a framework's cycle).
	forever bool
}

// Lend records that state's cycle reads the value until it ends.
func (l *Loan) Lend(state *fwk.CycleState) {
	if l.readers == nil {
		l.readers = new(atomic.Int32)
	}
	readers := l.readers
	if cycle.Of(state).OnCycleEnd(func() { readers.Add(-1) }) {
		// Counted up before the cycle can end: it ends once every
		// plugin, the lender included, has returned.
		readers.Add(1)
		return
	}
	l.forever = true
}

// Out reports whether a cycle may still read the value: the aggregate
// must then copy it before changing it, and [Loan.Renew].
func (l *Loan) Out() bool {
	return l.forever || l.readers != nil && l.readers.Load() > 0
}

// Renew makes l the loan of a fresh copy of the value, lent to no one.
func (l *Loan) Renew() { *l = Loan{} }
