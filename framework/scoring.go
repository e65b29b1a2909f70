package framework

import (
	"context"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// PodOnlyPreScorer is implemented by PreScore plugins whose PreScore, for
// some or all pods, does not depend on which nodes passed filtering.
//
// When every PreScore plugin of a profile says so for a pod, the framework
// runs PreScore before filtering and scores each node the moment it passes
// its filters, while the node's data is still in the CPU cache, instead of
// in a second pass over the feasible nodes. The scores are the same either
// way; only PreScore's nodes argument differs (all nodes instead of the
// feasible ones), which such a plugin ignores for such a pod.
type PodOnlyPreScorer interface {
	PreScorePlugin
	// PodOnlyPreScore reports whether PreScore for pod ignores its nodes
	// argument. It is called after PreFilter, with the cycle's state.
	PodOnlyPreScore(state *CycleState, pod *v1.Pod) bool
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
func (sc *scoring) scoreEarly(ctx context.Context, state *CycleState, pod *v1.Pod) {
	f := sc.f
	if len(f.scores) > 0 && f.podOnlyPreScore(state, pod) {
		if active, err := f.runPreScore(ctx, state, pod, state.AllNodes()); err == nil {
			sc.early, sc.active = true, active
		}
	}
}

// release returns the buffer to the pool; the scores are gone afterwards.
func (sc *scoring) release() {
	// Hold no NodeInfo or Status beyond the cycle.
	clear(sc.buf.feasible[:cap(sc.buf.feasible)])
	clear(sc.buf.statuses)
	sc.f.scratch.Put(sc.buf)
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
	statuses []*Status
	passed   []bool
	feasible []*nodeinfo.NodeInfo
	pos      []int32
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

// scoreNode scores one node that passed the filters.
func (sc *scoring) scoreNode(ctx context.Context, state *CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo, raw []int64, n, i int) {
	for p, pl := range sc.active {
		score, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			err := scoreError(pl, s)
			sc.err.CompareAndSwap(nil, &err)
			return
		}
		raw[p*n+i] = score
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
func (f *Framework) podOnlyPreScore(state *CycleState, pod *v1.Pod) bool {
	for _, pl := range f.preScores {
		if p, ok := pl.(PodOnlyPreScorer); !ok || !p.PodOnlyPreScore(state, pod) {
			return false
		}
	}
	return true
}
