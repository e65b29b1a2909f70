package framework

import (
	"context"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/nodeinfo"
)

// podOnlyPreScorer is implemented by PreScore plugins whose PreScore, for
// some or all pods, does not depend on which nodes passed filtering.
//
// When every PreScore plugin of a profile says so for a pod, the framework
// runs PreScore before filtering and scores each node the moment it passes
// its filters, while the node's data is still in the CPU cache, instead of
// in a second pass over the feasible nodes. The scores are the same either
// way; only PreScore's nodes argument differs (all nodes instead of the
// feasible ones), which such a plugin ignores for such a pod.
type podOnlyPreScorer interface {
	fwk.PreScorePlugin
	// PodOnlyPreScore reports whether PreScore for pod ignores its nodes
	// argument. It is called after PreFilter, with the cycle's state.
	PodOnlyPreScore(state *fwk.CycleState, pod *v1.Pod) bool
}

// batchScorer is implemented by Score plugins that work out every
// scored node's score at once in PreScore. The framework then asks
// ScoreBatch for many nodes at a time instead of Score for each, sparing
// the plugin a call and a look-up per node. The two must agree.
type batchScorer interface {
	fwk.ScorePlugin
	// ScoreBatch sets scores[i] to the score of nodes[start+i], nodes
	// being the list the cycle's PreScore was given, and reports true;
	// or reports false, for the framework to ask Score node by node.
	ScoreBatch(state *fwk.CycleState, start int, scores []int64) bool
}

// scoring holds one cycle's raw scores and whether they are computed while
// filtering ("early") or after it.
type scoring struct {
	f      *Framework
	early  bool
	active []*scorePlugin // the plugins scoring this pod, when early
	buf    *scratch       // pooled
	// stride is the distance between two plugins' scores in the buffer
	// after early scoring: the number of nodes filtered.
	stride int
	// err is the first Score error while filtering early; it matters only
	// if scoring turns out to be needed (more than one feasible node).
	err atomic.Pointer[error]
	// before, when set, receives the scores before normalization, plugin
	// by plugin (Framework.Explain).
	before *[]int64

	// memo, when not nil, keeps node-local plugins' verdicts and scores
	// for the pod's shape; local[i] is whether the cycle's filter i is
	// node-local for the pod, and slots[k] the memo's slot for active
	// plugin k (-1: none; nil: no scores kept).
	memo  *memo
	local []bool
	// others are the positions in the cycle's filters of those that are
	// not node-local for the pod.
	others []int
	slots  []int
	// direct[k] is whether active plugin k's scores are read from the
	// memo where the weights are applied, rather than copied first: a
	// node-local plugin that does not normalize. unkept is set when a
	// node's scores were worked out but could not be kept in the memo
	// (see directScores). summed is set when some plugin is direct:
	// their weighted sum per node is then in the memo (memo.dsum).
	direct []bool
	unkept atomic.Bool
	summed bool
	// settled, when the cycle's search settled its memo, is the version
	// it settled at, and since the one it judged the nodes changed since,
	// those being changed (fast); fast is unset when it judged every
	// node. checked is set when every node found without kept scores
	// was scored before the chunks (see prescore).
	settled, since cycle.Version
	changed        []int32
	fast, checked  bool
	// maybeUniform[k] is whether active plugin k, node-local and
	// normalizing, scored 0 on every node the memo knew before the cycle
	// (memo.nonzero): its scores are not copied out of the memo, and
	// after scoring, if still so, the column is uniform (see uniform).
	maybeUniform []bool
	// rank is the highest total scoreNodes worked out, and how many
	// nodes have it.
	rank ranking
}

// useMemo takes the framework's memo for pod's shape over n nodes, if
// any plugin is node-local for pod and the memo is free.
func (sc *scoring) useMemo(state *fwk.CycleState, pod *v1.Pod, n int) {
	f := sc.f
	d := cycleOf(state)
	if f.memos == nil || len(f.filters) > maxMemoFilters || d == nil || d.plugins == nil {
		return
	}
	cp := d.plugins
	local := make([]bool, len(cp.filters))
	var set filterSet
	some := false
	var others []int
	for i, isLocal := range cp.local {
		if isLocal != nil && isLocal(pod) {
			local[i] = true
			set |= 1 << cp.at[i]
			some = true
		} else {
			others = append(others, i)
		}
	}
	for i := range f.scores {
		some = some || f.scores[i].local != nil
	}
	if !some {
		return
	}
	// Per node: two generations, a status, the first filter, a sum, and
	// a score and its byte per score plugin.
	perNode := 8 + 8 + 8 + 2 + 8 + 5*len(f.scores)
	if m := f.memos.take(pod, n, set, perNode); m != nil {
		sc.memo, sc.local, sc.others = m, local, others
	}
}

// cheapScores reports whether scoring the nodes will cost a few loads
// each: a cheap memo (see memo.cheap) keeps the scores of every active
// plugin but those that score in batches.
func (sc *scoring) cheapScores() bool {
	if !sc.memo.cheap() || sc.slots == nil {
		return false
	}
	for k, pl := range sc.active {
		if sc.slots[k] < 0 && pl.batch == nil {
			return false
		}
	}
	return true
}

// bind makes active the cycle's score plugins, with their memo slots.
func (sc *scoring) bind(active []*scorePlugin, pod *v1.Pod) {
	sc.active = active
	if sc.memo != nil {
		sc.slots = sc.memo.bindScores(active, pod)
	}
	sc.direct, sc.maybeUniform, sc.summed = nil, nil, false
	if sc.slots == nil || sc.before != nil {
		return
	}
	sc.direct = make([]bool, len(active))
	sc.maybeUniform = make([]bool, len(active))
	for k, pl := range active {
		slot := sc.slots[k]
		switch {
		case slot < 0:
		case pl.normalize != nil:
			sc.maybeUniform[k] = sc.memo.nonzero[slot].Load() == 0
		default:
			sc.direct[k], sc.summed = true, true
		}
	}
}

// directScores returns where active plugin k's scores are to be read
// when the weights are applied: the memo's, by position, for a direct
// plugin, which are in [MinNodeScore, MaxNodeScore] (scoreLocal keeps no
// others); nil for the others, whose scores are in the raw buffer. A
// cycle some node's scores of which could not be kept copies the direct
// plugins' scores into the raw buffer first (raw, stride and pos as
// scoreNodes has them) and reads them all from there.
func (sc *scoring) directScores(k int, raw []int64, stride int, pos []int32) []int32 {
	if sc.direct == nil || !sc.direct[k] {
		return nil
	}
	m := sc.memo
	kept := m.score[sc.slots[k]*m.nodes : (sc.slots[k]+1)*m.nodes]
	if !sc.unkept.Load() {
		return kept
	}
	sc.direct[k] = false
	sc.copyKept(k, raw, stride, pos)
	return nil
}

// copyKept copies active plugin k's scores kept in the memo into the raw
// buffer (raw, stride and pos as scoreNodes has them), for the nodes
// whose scores are kept; the others' are there already.
func (sc *scoring) copyKept(k int, raw []int64, stride int, pos []int32) {
	m := sc.memo
	kept := m.score[sc.slots[k]*m.nodes : (sc.slots[k]+1)*m.nodes]
	out := raw[k*stride : k*stride+len(pos)]
	for i, p := range pos {
		if m.scoresKept(p) {
			out[i] = int64(kept[p])
		}
	}
}

// uniform settles, after the nodes were scored, the plugins that
// might score every node alike (maybeUniform): for each that still
// scores 0 on every node the memo knows, and so on every scored node,
// it returns at k the normalized score all nodes get, which is what the
// plugin makes of a single node's 0 (NodeLocalPlugin requires
// it of node-local plugins that normalize); for the others, -1, after
// copying their scores out of the memo into the raw buffer as
// scoreChunk would have. nodes, raw, stride and pos are as scoreNodes
// has them.
func (sc *scoring) uniform(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, raw []int64, stride int, pos []int32) ([]int64, error) {
	var out []int64
	m := sc.memo
	for k, pl := range sc.active {
		if sc.maybeUniform == nil || !sc.maybeUniform[k] {
			continue
		}
		if out == nil {
			out = make([]int64, len(sc.active))
			for i := range out {
				out[i] = -1
			}
		}
		if sc.unkept.Load() || m.nonzero[sc.slots[k]].Load() != 0 {
			sc.copyKept(k, raw, stride, pos)
			continue
		}
		one := []int64{0}
		if s := pl.normalize.NormalizeScore(ctx, state, pod, nodes[:1], one); !s.IsSuccess() {
			return nil, normalizeError(pl, s)
		}
		if one[0] < fwk.MinNodeScore || one[0] > fwk.MaxNodeScore {
			return nil, fmt.Errorf("applying score weights: %w", invalidScore(pl, one[0]))
		}
		out[k] = one[0]
	}
	return out, nil
}

// newScoring returns a cycle's scoring, scoring after filtering until
// [scoring.scoreEarly] says otherwise.
func (f *Framework) newScoring() *scoring {
	return &scoring{f: f, buf: f.scratch.Get().(*scratch)}
}

// scoreEarly runs PreScore up front, before a search over more than one
// node, when the profile allows early scoring. A PreScore failure disables
// early scoring for the cycle: the failure must surface only if scoring
// happens, so PreScore runs again then.
func (sc *scoring) scoreEarly(ctx context.Context, state *fwk.CycleState, pod *v1.Pod) {
	f := sc.f
	// With a memo, the node-local scores are copied from it plugin by
	// plugin after filtering, without reading the nodes at all, which
	// beats scoring each node while its data is at hand.
	if sc.memo != nil {
		return
	}
	if len(f.scores) > 0 && f.podOnlyPreScore(state, pod) {
		if active, err := f.runPreScore(ctx, state, pod, state.AllNodes()); err == nil {
			sc.early = true
			sc.bind(active, pod)
		}
	}
}

// release returns the buffer to the pool and the memo to the framework;
// the scores are gone afterwards.
func (sc *scoring) release() {
	if m := sc.memo; m != nil {
		m.lastFresh = m.fresh.Swap(0)
		m.busy.Unlock()
	}
	// Hold no NodeInfo or Status beyond the cycle, and leave the
	// verdicts clean for the next: only as far as the searches went,
	// which for a search that stops early is a share of the nodes.
	b := sc.buf
	clear(b.feasible[:min(b.dirty, cap(b.feasible))])
	clear(b.statuses[:min(b.dirty, cap(b.statuses))])
	clear(b.passed[:min(b.dirty, cap(b.passed))])
	b.dirty = 0
	sc.f.scratch.Put(b)
}

func (sc *scoring) buffer(size int) []int64 {
	return grow(&sc.buf.raw, size)
}

// scratch holds one cycle's per-node working slices. They are recycled
// across cycles because, sized by the node count, they would otherwise be
// a large share of the garbage each cycle makes.
type scratch struct {
	raw      []int64
	totals   []int64
	statuses []*fwk.Status
	passed   []bool
	feasible []*nodeinfo.NodeInfo
	pos      []int32
	// iota[p] is p, for positions in order (see everyNode); rejected
	// is room for a settled memo's rejected positions (memo.settle).
	iota     []int32
	rejected []int32
	// runs are the runs of a search that stopped early (see window);
	// ranks the weights loop's workers' rankings.
	runs  [][2]int32
	ranks []ranking
	// dirty is how many leading entries of statuses, passed and
	// feasible a cycle may have set; release clears them.
	dirty int
}

// grow returns (*s)[:n], reallocating if the capacity is short. The
// contents are whatever the last cycle left.
func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	return (*s)[:n]
}

// earlyBuffer prepares to score n nodes while filtering, plugin p's score of
// search position i going to raw[p*n+i].
func (sc *scoring) earlyBuffer(n int) []int64 {
	sc.err.Store(nil)
	return sc.buffer(len(sc.active) * n)
}

// scoreNode scores one node that passed the filters, the i-th of n
// scored, while its data is at hand. Cycles with a memo do not score
// early (see scoreEarly), so nothing here is remembered.
func (sc *scoring) scoreNode(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, raw []int64, n, i int) {
	for k, pl := range sc.active {
		score, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			err := scoreError(pl, s)
			sc.err.CompareAndSwap(nil, &err)
			return
		}
		raw[k*n+i] = score
	}
}

// scoreChunk scores nodes[start:end], at positions pos[start:end] of the
// cycle's nodes, into raw as scoreNode does, but plugin by plugin: the
// node-local plugins' scores copied from the memo, the batch scorers
// asked once for the chunk, and only the nodes whose scores the memo
// lacks scored one by one. nodes are those PreScore was given.
func (sc *scoring) scoreChunk(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, pos []int32, raw []int64, n, start, end int) {
	m, slots := sc.memo, sc.slots
	at := pos[start:end]
	var missed []int
	for k, pl := range sc.active {
		out := raw[k*n+start : k*n+end]
		if slots != nil && slots[k] >= 0 {
			if sc.direct != nil && (sc.direct[k] || sc.maybeUniform[k]) {
				continue // read from the memo when weighed, or uniform
			}
			// Every node's, and again below for those the memo lacks.
			kept := m.score[slots[k]*m.nodes : (slots[k]+1)*m.nodes]
			for i, p := range at {
				out[i] = int64(kept[p])
			}
			continue
		}
		if pl.batch != nil && pl.batch.ScoreBatch(state, start, out) {
			continue
		}
		for i := range out {
			score, s := pl.Score(ctx, state, pod, nodes[start+i])
			if !s.IsSuccess() {
				err := scoreError(pl, s)
				sc.err.CompareAndSwap(nil, &err)
				return
			}
			out[i] = score
		}
	}
	if slots == nil || sc.checked {
		return
	}
	for i, p := range at {
		if !m.scoresKept(p) {
			missed = append(missed, start+i)
		}
	}
	for _, i := range missed {
		sc.scoreLocal(ctx, state, pod, nodes[i], raw, n, i, pos[i])
	}
}

// prescore scores, before the chunks, the nodes of found that lack kept
// scores, when the memo knows they are among the changed nodes: its
// last cycle kept every found node's scores at the version this cycle's
// search counted the changes from. It sets sc.checked when it did, so
// that scoreChunk looks no further. nodes, raw and n are as scoreChunk
// has them.
func (sc *scoring) prescore(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, found searched, raw []int64, n int) {
	m := sc.memo
	if m == nil {
		return
	}
	// Extenders may leave out nodes the search found, whose scores are
	// then not kept; cycles with them keep no such record.
	complete := sc.slots != nil && sc.fast && sc.since != (cycle.Version{}) && m.scoredAt == sc.since && len(sc.f.extenders) == 0
	m.scoredAt = cycle.Version{}
	if !complete {
		return
	}
	for _, p := range sc.changed {
		i, ok := found.index(p)
		if !ok {
			continue // rejected
		}
		if !m.scoresKept(p) {
			sc.scoreLocal(ctx, state, pod, found.nodes[i], raw, n, i, p)
		}
	}
	// A score that could not be kept is copied over from the memo by
	// scoreChunk, which must then find the node again.
	sc.checked = !sc.unkept.Load() && sc.err.Load() == nil
}

// scored records, after a cycle scored every node its search found and
// kept every score, that the memo has them at the version the search
// settled at.
func (sc *scoring) scored() {
	if m := sc.memo; m != nil && sc.slots != nil && sc.settled != (cycle.Version{}) && !sc.unkept.Load() && len(sc.f.extenders) == 0 {
		m.scoredAt = sc.settled
	}
}

// scoreLocal scores one node by the node-local plugins alone, keeping
// the scores in the memo, for scoreChunk.
func (sc *scoring) scoreLocal(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, raw []int64, n, i int, p int32) {
	m, slots := sc.memo, sc.slots
	m.fresh.Add(1)
	gen := m.gen[p]
	keep := gen != 0
	var sum int64
	for k, pl := range sc.active {
		slot := slots[k]
		if slot < 0 {
			continue
		}
		score, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			err := scoreError(pl, s)
			sc.err.CompareAndSwap(nil, &err)
			return
		}
		raw[k*n+i] = score
		// A plugin that does not normalize keeps only scores in range,
		// which the weights are then applied to unchecked (see
		// directScores); its others are checked as they come.
		if score != int64(int32(score)) || pl.normalize == nil && (score < fwk.MinNodeScore || score > fwk.MaxNodeScore) {
			keep = false
			continue
		}
		if !keep {
			continue
		}
		at := slot*m.nodes + int(p)
		if old := m.score[at]; (old == 0) != (score == 0) {
			if score == 0 {
				m.nonzero[slot].Add(-1)
			} else {
				m.nonzero[slot].Add(1)
			}
		}
		m.score[at], m.bytes[at] = int32(score), uint8(score)
		if pl.normalize == nil {
			sum += score * pl.weight
		}
	}
	if keep {
		m.dsum[p] = sum
		m.sgen[p] = gen
	} else {
		sc.unkept.Store(true)
	}
}

// keep moves search position i's scores to feasible index j. Called with
// increasing i (and so j <= i), it compacts in place without overwriting
// scores not yet moved.
func (sc *scoring) keep(raw []int64, n, i, j int) {
	if i == j {
		return // no node rejected so far: already in place
	}
	for p := range sc.active {
		raw[p*n+j] = raw[p*n+i]
	}
}

// podOnlyPreScore reports whether every PreScore plugin is pod-only for pod.
func (f *Framework) podOnlyPreScore(state *fwk.CycleState, pod *v1.Pod) bool {
	for _, pl := range f.preScores {
		if p, ok := pl.(podOnlyPreScorer); !ok || !p.PodOnlyPreScore(state, pod) {
			return false
		}
	}
	return true
}
