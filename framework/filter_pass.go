package framework

import (
	"context"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// filterPass is one run of the filters over a search, as
// kube-scheduler's findNodesThatPassFilters is: what its workers share,
// and what they leave for collect.
type filterPass struct {
	f     *Framework
	state *fwk.CycleState
	cycle *cycleData // the framework's, in state
	pod   *v1.Pod
	s     search
	d     *Diagnosis
	sc    *scoring

	// ctx is cancelled once enough nodes passed or a filter failed;
	// parent is the caller's, whose cancelling means stop.
	ctx, parent context.Context
	cancel      context.CancelFunc

	// n nodes are searched from index start, until want passed.
	n, want, start int
	// earlyStop is set when the pass may stop before the last node:
	// only then are feasible nodes counted as they are found, which
	// costs a contended atomic per node.
	earlyStop bool

	// statuses and passed are by search index: the verdicts of the
	// nodes rejected, and which nodes passed. Both come clean: a
	// cycle's release clears what its searches used.
	statuses []*fwk.Status
	passed   []bool
	// raw holds the early scores, when sc scores early.
	raw []int64
	// nominated are the pods nominated to each node; nodes with some
	// take two passes.
	nominated map[string][]*nodeinfo.PodInfo
	// kept is set when a node whose verdict the memo keeps for its
	// generation is judged without being read: with a memo, every
	// filter node-local for the pod, the nodes' generations at hand and
	// no nominated pods. Such cycles never score early (see
	// scoreEarly), which would read the node.
	kept bool
	// settle is set when the pass, over every node, may leave the memo
	// settled at version.
	settle  bool
	version cycle.Version

	found, rejected atomic.Int64
	// reached is one past the furthest search index a worker took up:
	// a pass that stops early leaves the rest untouched, and neither
	// collecting the verdicts nor clearing them visits it.
	reached  atomic.Int64
	firstErr atomic.Pointer[fwk.Status]
	// lost is set when some node's verdict could not be kept.
	lost atomic.Bool
}

// filterNodes runs the filters over the nodes of s in parallel and stops
// once enough feasible nodes are found. Rejections go into d. Feasible
// nodes are returned in search order, so that a seeded tie-break is
// reproducible; their slices are sc's (or, with a memo, the memo's),
// valid until sc is released. When sc scores early, each node that
// passes is scored at once and sc keeps the scores of the returned
// nodes.
func (f *Framework) filterNodes(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, s search, d *Diagnosis, sc *scoring) (searched, error) {
	n := s.len()
	if n == 0 {
		return searched{}, nil
	}
	p := &filterPass{f: f, state: state, cycle: cycleOf(state), pod: pod, s: s, d: d, sc: sc, n: n, parent: ctx, ctx: ctx, cancel: func() {}}
	p.want = f.numFeasibleNodesToFind(n)
	if len(f.scores) == 0 && !f.extendersRank() {
		p.want = 1
	}
	if s.rotate {
		p.start = int(f.nextStart.Load() % int64(n))
	}
	// A pass over several nodes stops at the first error, or once enough
	// nodes passed; one over a single node needs no cancelling.
	if n > 1 {
		p.ctx, p.cancel = context.WithCancel(ctx)
		defer p.cancel()
	}
	p.statuses, p.passed = grow(&sc.buf.statuses, n), grow(&sc.buf.passed, n)
	p.earlyStop = p.want < n
	if sc.early {
		p.raw = sc.earlyBuffer(n)
	}
	p.nominated, _ = nominatedPodsKey.Read(state)
	p.kept = sc.memo != nil && len(sc.others) == 0 && p.cycle.gens != nil && len(p.nominated) == 0
	p.settle = p.kept && s.pos == nil
	defer func() { sc.buf.dirty = max(sc.buf.dirty, int(p.reached.Load())) }()

	if sc.memo != nil {
		if out, done, err := p.fromMemo(); done {
			return out, err
		}
	}
	p.judge()
	if st := p.firstErr.Load(); st != nil {
		return searched{}, st.AsError()
	}
	out := p.collect()
	if sc.early {
		sc.stride = n
	}
	// Our own cancel only means enough nodes were found; the caller's means stop.
	if err := ctx.Err(); err != nil {
		return searched{}, err
	}
	return out, nil
}

// fromMemo answers the pass from the memo when it can. A pass over
// every node with a memo settled at a version of the list judges the
// nodes changed since, and is done unless one gives an error (or cannot
// be kept); it goes on as any other then. One that may stop early then
// walks the kept verdicts from its start (see window), and settles the
// memo itself once passes like it have taken up about every node. It
// reports whether the pass is done, with its answer.
func (p *filterPass) fromMemo() (searched, bool, error) {
	sc, memo, n, want := p.sc, p.sc.memo, p.n, p.want
	// What the memo knew, forgotten unless this pass settles it again
	// (see memo.found: a pass that does not take this way leaves its
	// nodes stale).
	since, were, last := memo.settled, memo.rejected, memo.found
	memo.settled, memo.found.runs = cycle.Version{}, nil
	sc.settled, sc.fast = cycle.Version{}, false
	if !p.settle {
		return searched{}, false, nil
	}
	version, changed, ok := p.cycle.ChangedNodes(p.s.nodes, since)
	p.version = version
	every := false
	if p.earlyStop {
		switch {
		case !ok && version != (cycle.Version{}) && memo.partial >= (n+want-1)/want:
			// Passes that stop early have taken up about every node
			// since the memo last settled, whose verdicts it mostly
			// keeps: judging every node once settles it for the passes
			// to come.
			changed, were, ok, every = sc.positions(n), nil, true, true
			memo.partial = 0
		case ok && len(changed) > want:
			// More to judge than the pass would take up.
			ok = false
		}
		if !ok {
			memo.partial++
		}
	}
	if !ok {
		return searched{}, false, nil
	}
	now, ok := memo.settle(p.ctx, p.cycle.plugins.filters, p.cycle.plugins.at, sc.local, sc.others, p.cycle.gens, p.state, p.pod, p.s.nodes, changed, were, sc.buf.rejected)
	if !ok {
		if every {
			// Most likely too many nodes rejected, which is how it
			// stays: try again far later.
			memo.partial = -4 * n / want
		}
		return searched{}, false, nil
	}
	if err := p.parent.Err(); err != nil {
		return searched{}, true, err
	}
	memo.settled, memo.rejected, sc.buf.rejected = version, now, were[:0]
	if p.earlyStop {
		// The found nodes are a share of those the memo knows, which
		// scoring must look up (sc.settled unset).
		out, walked := sc.window(p.s, p.start, want, now)
		for _, part := range walked {
			record(p.d, p.s.nodes, part, memo.status)
		}
		return out, true, nil
	}
	sc.settled, sc.since, sc.changed, sc.fast = version, since, changed, true
	record(p.d, p.s.nodes, now, memo.status)
	switch {
	case len(now) == 0:
		return sc.everyNode(p.s, p.start), true, nil
	case len(p.f.extenders) > 0:
		// Extenders, which may be anyone's code, get slices of the
		// cycle's own.
		sc.buf.dirty = n // released clean
		return allBut(p.s, p.start, now, searched{nodes: sc.buf.feasible, pos: sc.buf.pos}), true, nil
	}
	if last.runs != nil && memo.foundFrom == p.start && slices.Equal(now, were) {
		last.update(p.s.nodes, changed)
		memo.found = last
	} else {
		memo.found, memo.foundFrom = allBut(p.s, p.start, now, last), p.start
	}
	return memo.found, true, nil
}

// judge gives the nodes of the search their verdicts on the workers,
// from the pass's start, until enough passed or a filter failed.
func (p *filterPass) judge() {
	perWorker := 16
	if p.kept && p.sc.memo.cheap() {
		perWorker = cheapPerWorker
	}
	parallel.Chunks(p.ctx, p.f.workers(p.n, perWorker), p.n, func(lo, hi int) {
		i := lo
		defer func() {
			for r := p.reached.Load(); int64(i) > r && !p.reached.CompareAndSwap(r, int64(i)); r = p.reached.Load() {
			}
		}()
		j := p.start + lo
		for ; i < hi; i, j = i+1, j+1 {
			// Once the pass was stopped, no node is taken up:
			// kube-scheduler's workers check before each node, so that
			// the nodes given a verdict, and the next pass's start, are
			// the same.
			if p.earlyStop && p.ctx.Err() != nil {
				return
			}
			if j >= p.n {
				j -= p.n
			}
			st, ni := p.verdict(p.s.position(j))
			switch {
			case st.IsSuccess():
				if p.earlyStop && p.found.Add(1) > int64(p.want) {
					p.cancel()
					p.found.Add(-1)
					return
				}
				p.passed[i] = true
				if p.sc.early {
					p.sc.scoreNode(p.ctx, p.state, p.pod, ni, p.raw, p.n, i)
				}
			case st.IsRejected():
				p.statuses[i] = st
				p.rejected.Add(1)
			default:
				p.firstErr.CompareAndSwap(nil, st)
				p.cancel()
				return
			}
		}
	})
}

// verdict judges the node at position q of the search's nodes: the
// memo's kept verdict for its generation when the pass may take it
// (the node is then not read, and ni is nil), otherwise its filters'.
func (p *filterPass) verdict(q int32) (st *fwk.Status, ni *nodeinfo.NodeInfo) {
	memo, gens := p.sc.memo, p.cycle.gens
	if p.kept && gens[q] != 0 && memo.gen[q] == gens[q] {
		if memo.first[q] >= 0 {
			st = memo.status[q]
		}
		return st, nil
	}
	ni = p.s.nodes[q]
	if p.kept && gens[q] == 0 {
		p.lost.Store(true)
	}
	var pods []*nodeinfo.PodInfo
	if len(p.nominated) > 0 {
		pods = p.nominated[ni.Name()]
	}
	filters := p.cycle.plugins.filters
	switch {
	case len(pods) > 0:
		if memo != nil {
			memo.gen[q] = 0 // nothing kept, nor scored from the memo
		}
		return p.f.runFiltersWithNominatedPods(p.ctx, filters, p.state, p.pod, ni, pods), ni
	case memo != nil:
		return memo.filter(p.ctx, filters, p.cycle.plugins.at, p.sc.local, p.sc.others, gens, p.state, p.pod, ni, q), ni
	}
	return runFilters(p.ctx, filters, p.state, p.pod, ni), ni
}

// collect returns the nodes that passed, in search order, records the
// verdicts of those rejected in the diagnosis, and settles the memo
// when the pass allows it.
func (p *filterPass) collect() searched {
	sc, s, n, memo := p.sc, p.s, p.n, p.sc.memo
	out := searched{nodes: grow(&sc.buf.feasible, n)[:0], pos: grow(&sc.buf.pos, n)[:0]}
	stopped := p.parent.Err() != nil
	if p.rejected.Load() == 0 && !p.earlyStop && !stopped {
		// Every node passed, in search order, and the early scores are
		// already where they belong.
		if p.settle && !p.lost.Load() {
			memo.settled, memo.rejected = p.version, memo.rejected[:0]
			sc.settled = p.version
		}
		if s.pos == nil {
			return sc.everyNode(s, p.start)
		}
		out.pos = append(append(out.pos, s.pos[p.start:]...), s.pos[:p.start]...)
		for _, q := range out.pos {
			out.nodes = append(out.nodes, s.nodes[q])
		}
		return out
	}
	p.d.reserve(int(p.rejected.Load()))
	// A memo settles when the nodes rejected are few enough.
	settled := p.settle && !p.earlyStop && !p.lost.Load() && !stopped && int(p.rejected.Load()) <= maxSettledRejected(n)
	if settled {
		memo.rejected = memo.rejected[:0]
	}
	for i := range int(p.reached.Load()) {
		q := s.position((p.start + i) % n)
		switch {
		case p.passed[i]:
			if sc.early {
				sc.keep(p.raw, n, i, len(out.nodes))
			}
			out.nodes = append(out.nodes, s.nodes[q])
			out.pos = append(out.pos, q)
		case p.statuses[i] != nil:
			p.d.SetNodeStatus(s.nodes[q].Name(), p.statuses[i])
			p.d.addPluginStatus(p.statuses[i])
			if settled {
				memo.rejected = append(memo.rejected, q)
			}
		}
	}
	if settled {
		slices.Sort(memo.rejected)
		memo.settled, sc.settled = p.version, p.version
	}
	return out
}
