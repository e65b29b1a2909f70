package framework

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/parallel"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Schedule picks a node for pod among nodes, as kube-scheduler's scheduling
// cycle would: PreFilter, Filter on every node (in parallel, stopping early
// per percentageOfNodesToScore), PreScore, Score, NormalizeScore, weights,
// and a random choice among the top-scoring nodes.
//
// It returns a *[FitError] when no node fits, and another error for bad
// input (nil pod, no nodes, a nil node, duplicate node names), a cancelled
// context, or a plugin Error. It does not modify pod or nodes and is safe to
// call concurrently. Like kube-scheduler, successive calls start the search
// at different nodes so that partial searches spread over the cluster. A
// pod with status.nominatedNodeName has that node tried first, alone.
//
// Since the caller may change its slice between calls, each call makes
// sure its view of nodes is current: when the slice holds the same
// NodeInfos as the last call and no NodeInfo in the process has changed
// since (see nodeinfo.LatestGeneration), by comparing the pointers;
// otherwise by a pass over every NodeInfo, shared by the workers. The rest
// of the cycle costs what the pod needs. [Framework.ScheduleSnapshot]
// skips even the comparison for a node list that never changes: use it
// for clusters of tens of thousands of nodes, where the comparison alone
// costs more than kube-scheduler's cycle for a pod pinned to a node.
func (f *Framework) Schedule(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*Result, error) {
	if err := f.checkCall(ctx, pod, len(nodes)); err != nil {
		return nil, err
	}
	idx, err := f.indexSlice(nodes)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return f.schedule(ctx, pod, nodes, idx)
}

// ScheduleSnapshot is [Framework.Schedule] over the nodes of snap, which
// it trusts never to change: no per-call pass over its nodes, so a pod
// narrowed by PreFilter to a few nodes costs the same whatever the
// cluster's size. Pass a cache.Snapshot, or any [NodeSnapshot].
func (f *Framework) ScheduleSnapshot(ctx context.Context, pod *v1.Pod, snap NodeSnapshot) (*Result, error) {
	if snap == nil {
		return nil, fmt.Errorf("schedule: nil snapshot")
	}
	idx, nodes := f.indexSnapshot(snap)
	if err := f.checkCall(ctx, pod, len(nodes)); err != nil {
		return nil, err
	}
	return f.schedule(ctx, pod, nodes, idx)
}

// checkCall rejects what no cycle can start with, and the pods
// kube-scheduler never tries, in the order it would.
func (f *Framework) checkCall(ctx context.Context, pod *v1.Pod, numNodes int) error {
	if pod == nil {
		return fmt.Errorf("schedule: nil pod")
	}
	if pod.DeletionTimestamp != nil {
		return &NotTriedError{Pod: pod, Status: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("skip schedule deleting pod: %s/%s", pod.Namespace, pod.Name))}
	}
	for _, pl := range f.preEnqueues {
		if s := pl.PreEnqueue(ctx, f.listers, pod); s != nil {
			return &NotTriedError{Pod: pod, Plugin: pl.Name(), Status: s.WithPlugin(pl.Name())}
		}
	}
	if numNodes == 0 {
		return ErrNoNodesAvailable
	}
	return ctx.Err()
}

// NotTriedError is returned by [Framework.Schedule] and
// [Framework.ScheduleSnapshot] for a pod kube-scheduler never tries to
// schedule: one being deleted, or one a [fwk.PreEnqueuePlugin] turns down,
// such as a pod with scheduling gates. Its message is kube-scheduler's:
// "waiting for scheduling gates: [example.com/quota]" or "skip schedule
// deleting pod: default/web-0". Use errors.As to reach it.
type NotTriedError struct {
	// Pod is the pod not tried, as Schedule was given it.
	Pod *v1.Pod
	// Plugin is the PreEnqueue plugin that turned the pod down; empty for a
	// pod being deleted.
	Plugin string
	// Status is the verdict, with Plugin as its plugin.
	Status *fwk.Status
}

// Error returns the status's message.
func (e *NotTriedError) Error() string { return e.Status.Message() }

// schedule is the scheduling cycle over nodes, which idx indexes.
func (f *Framework) schedule(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, idx nodeIndex) (*Result, error) {
	state := endable(f.newCycleState(nodes, idx))
	defer endCycle(state)
	d := Diagnosis{nodes: idx}

	preRes, status, narrowedBy := f.runPreFilter(ctx, state, pod, nodes)
	if narrowedBy.Len() > 0 {
		d.UnschedulablePlugins = narrowedBy
	}
	if status != nil {
		if !status.IsRejected() {
			return nil, status.AsError()
		}
		d.rejectAll(status)
		fe := &FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: d}
		// Nominations count in the dry runs of preemption.
		f.recordNominations(state, pod)
		f.runPostFilter(ctx, state, pod, fe)
		return nil, fe
	}

	f.recordNominations(state, pod)
	sc := f.newScoring()
	defer sc.release()
	// A memo repays comparing the pod with the shapes kept only over
	// enough nodes: not for a pod PreFilter pinned to a few.
	if size := len(nodes); size >= minMemoNodes && (preRes.AllNodes() || preRes.NodeNames.Len() >= minMemoNodes) {
		sc.useMemo(state, pod, size)
	}

	var found searched
	var err error
	if name := pod.Status.NominatedNodeName; name != "" {
		if i, ok := idx.position(name); ok {
			found, err = f.filterNodes(ctx, state, pod, search{nodes: nodes, pos: []int32{int32(i)}}, &d, sc)
			if err == nil {
				found, err = f.filterWithExtenders(ctx, pod, found, idx, &d, sc, false)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if len(found.nodes) == 0 {
		s := search{nodes: nodes, rotate: true}
		if !preRes.AllNodes() {
			s.pos = f.narrow(idx, preRes, &d)
		}
		// A lone node is placed without scores.
		if s.len() > 1 {
			sc.scoreEarly(ctx, state, pod)
		}
		found, err = f.filterNodes(ctx, state, pod, s, &d, sc)
		if err != nil {
			return nil, err
		}
		// As kube-scheduler, the next search starts past the nodes this one
		// gave a verdict, counted among all the nodes.
		f.advanceStart(len(found.nodes)+len(d.statuses), len(nodes))
		if found, err = f.filterWithExtenders(ctx, pod, found, idx, &d, sc, true); err != nil {
			return nil, err
		}
	}

	feasible := found.nodes
	if len(feasible) == 0 {
		fe := &FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: d}
		f.runPostFilter(ctx, state, pod, fe)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fe
	}
	result := &Result{
		EvaluatedNodes: len(feasible) + len(d.statuses),
		FeasibleNodes:  len(feasible),
		Diagnosis:      d,
	}
	if len(feasible) == 1 {
		result.SuggestedHost = feasible[0].Name()
	} else {
		totals, err := f.scoreNodes(ctx, state, pod, found, sc, idx, &result.scores)
		if err != nil {
			return nil, err
		}
		if len(f.extenders) == 0 {
			// Ranked as the totals were worked out.
			result.SuggestedHost = feasible[f.pick(totals, sc.rank)].Name()
		} else {
			f.scoreWithExtenders(ctx, pod, feasible, &result.scores, totals)
			result.SuggestedHost = feasible[f.selectHost(totals)].Name()
		}
	}
	for _, pl := range f.reserves {
		if s := pl.Reserve(ctx, state, pod, result.SuggestedHost, &result.Outputs); s != nil && !s.IsSuccess() {
			return nil, fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), s.AsError())
		}
	}
	return result, nil
}

// newCycleState returns the state of a scheduling cycle over nodes.
func (f *Framework) newCycleState(nodes []*nodeinfo.NodeInfo, idx nodeIndex) *fwk.CycleState {
	state := fwk.NewCycleState(nodes).ShareListers(&f.listers)
	d := &cycleData{
		fw:          f,
		allNodes:    nodes,
		index:       idx,
		parallelism: f.parallelism,
		plugins:     f.cyclePlugins(skipSet{}),
		skipScore:   make([]bool, len(f.scores)),
	}
	if x, ok := idx.(*snapshotIndex); ok && x != nil {
		d.gens = x.gens
	}
	cycle.Key.Write(state, cycle.Hooks(d))
	fwk.SetHandle(state, f)
	return state
}

// runPreFilter runs the PreFilter plugins as kube-scheduler does: a
// Skip disables that plugin's Filter; UnschedulableAndUnresolvable stops at
// once; Unschedulable is remembered while the rest still run; results
// narrow the node set by intersection, and narrowing to nothing rejects.
// It also returns the plugins that narrowed the node set.
func (f *Framework) runPreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	var result *fwk.PreFilterResult
	var rejected *fwk.Status
	narrowedBy := sets.New[string]()
	var skip skipSet
	defer func() {
		if skip.bits != 0 || skip.rest != nil {
			cycleOf(state).plugins = f.cyclePlugins(skip)
		}
	}()
	for i, pl := range f.preFilters {
		r, s := pl.PreFilter(ctx, state, pod, nodes)
		switch {
		case s.IsSkip():
			skip.add(i)
			continue
		case s.Code() == fwk.UnschedulableAndUnresolvable:
			return nil, s.WithPlugin(pl.Name()), nil
		case s.Code() == fwk.Unschedulable:
			rejected = s.WithPlugin(pl.Name())
			continue
		case !s.IsSuccess():
			return nil, fwk.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			narrowedBy.Insert(pl.Name())
		}
		if result == nil {
			result = r // the plugin's own: no copy needed
		} else {
			result = result.Merge(r)
		}
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(narrowedBy))
			if narrowedBy.Len() == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(narrowedBy)[0])
			}
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg), narrowedBy
		}
	}
	return result, rejected, narrowedBy
}

// narrow returns the positions of the nodes a PreFilterResult names, in
// order; the other nodes get one shared verdict in d, naming the plugins
// in d.UnschedulablePlugins, which by then also holds the rejecting
// plugin of a nominated node that failed, as in kube-scheduler. That
// node keeps its own verdict.
func (f *Framework) narrow(idx nodeIndex, r *fwk.PreFilterResult, d *Diagnosis) []int32 {
	pos := make([]int32, 0, r.NodeNames.Len())
	for name := range r.NodeNames {
		if i, ok := idx.position(name); ok {
			pos = append(pos, int32(i))
		}
	}
	slices.Sort(pos)
	d.absent = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(d.UnschedulablePlugins)))
	d.kept = r.NodeNames
	return pos
}

// search is what a filter pass walks: the nodes at positions pos of
// nodes, or all of nodes when pos is nil; from the framework's rotating
// start when rotate is set.
type search struct {
	nodes  []*nodeinfo.NodeInfo
	pos    []int32
	rotate bool
}

func (s search) len() int {
	if s.pos != nil {
		return len(s.pos)
	}
	return len(s.nodes)
}

// position returns the position in s.nodes of the j-th node searched.
func (s search) position(j int) int32 {
	if s.pos != nil {
		return s.pos[j]
	}
	return int32(j)
}

// searched is what a filter pass found: the feasible nodes in search
// order, and their positions in the cycle's nodes.
type searched struct {
	nodes []*nodeinfo.NodeInfo
	pos   []int32
	// every is set when they are all the cycle's nodes, in the order
	// of a search from pos[0].
	every bool
	// runs, when not nil, are the runs of consecutive positions in pos,
	// as [from, to) indices of pos (see runsOf).
	runs [][2]int32
}

// record records in d the verdicts of the nodes at positions rejected
// of nodes: status[p] for position p.
func record(d *Diagnosis, nodes []*nodeinfo.NodeInfo, rejected []int32, status []*fwk.Status) {
	d.reserve(len(rejected))
	for _, p := range rejected {
		d.SetNodeStatus(nodes[p].Name(), status[p])
		d.addPluginStatus(status[p])
	}
}

// allBut returns what a search over every node of s from start found
// when every node passed but those at positions rejected (in order, at
// least one), in out's slices if they are large enough, with its runs.
func allBut(s search, start int, rejected []int32, out searched) searched {
	n := len(s.nodes)
	out = searched{nodes: out.nodes[:0], pos: out.pos[:0], runs: out.runs[:0]}
	// The runs between rejected nodes, from start round to it.
	appendRuns := func(lo, hi int) {
		k, _ := slices.BinarySearch(rejected, int32(lo))
		for ; lo < hi; k++ {
			to := hi
			if k < len(rejected) && int(rejected[k]) < hi {
				to = int(rejected[k])
			}
			if lo < to {
				out.runs = append(out.runs, [2]int32{int32(len(out.pos)), int32(len(out.pos) + to - lo)})
			}
			out.nodes = append(out.nodes, s.nodes[lo:to]...)
			for p := lo; p < to; p++ {
				out.pos = append(out.pos, int32(p))
			}
			lo = to + 1
		}
	}
	appendRuns(start, n)
	appendRuns(0, start)
	if out.runs == nil {
		out.runs = [][2]int32{} // none, but known
	}
	return out
}

// window returns what a search over every node of s from start, which
// stops once want nodes passed, finds when every node passes but those
// at positions rejected (in order): the nodes that passed, with their
// runs, and the rejected positions it took up, as a part of rejected
// before the search wrapped round and one after. As filterNodes's
// search, it goes on past the want-th node that passes over the
// rejected nodes that follow it, up to the next that passes.
func (sc *scoring) window(s search, start, want int, rejected []int32) (out searched, walked [2][]int32) {
	n := len(s.nodes)
	iota := sc.positions(n)
	pos, runs := grow(&sc.buf.pos, want)[:0], sc.buf.runs[:0]
	k, _ := slices.BinarySearch(rejected, int32(start))
	from, part := k, 0
	p, left := start, want
	for seen := 0; seen < n; {
		if p == n {
			walked[0], part = rejected[from:k], 1
			p, k, from = 0, 0, 0
		}
		if k < len(rejected) && int(rejected[k]) == p {
			k, p, seen = k+1, p+1, seen+1
			continue
		}
		if left == 0 {
			break // the next node passes: the search stopped before it
		}
		to := n
		if k < len(rejected) {
			to = int(rejected[k])
		}
		to = min(to, p+left, p+n-seen)
		runs = append(runs, [2]int32{int32(len(pos)), int32(len(pos) + to - p)})
		pos = append(pos, iota[p:to]...)
		left, seen, p = left-(to-p), seen+to-p, to
	}
	walked[part] = rejected[from:k]
	sc.buf.runs = runs
	out = searched{pos: pos, runs: runs}
	if len(runs) == 1 && len(sc.f.extenders) == 0 {
		// The snapshot's own nodes, as everyNode gives them.
		out.nodes = s.nodes[pos[0] : int(pos[0])+len(pos) : int(pos[0])+len(pos)]
		return out, walked
	}
	out.nodes = grow(&sc.buf.feasible, len(pos))[:0]
	for _, r := range runs {
		lo := pos[r[0]]
		out.nodes = append(out.nodes, s.nodes[lo:int(lo)+int(r[1]-r[0])]...)
	}
	sc.buf.dirty = max(sc.buf.dirty, len(out.nodes)) // released clean
	return out, walked
}

// update brings what a settled search found up to date with nodes, of
// which those at positions changed changed, where the search found the
// same nodes rejected from the same start: only the changed nodes that
// passed are new.
func (f *searched) update(nodes []*nodeinfo.NodeInfo, changed []int32) {
	for _, p := range changed {
		if j, ok := f.index(p); ok {
			f.nodes[j] = nodes[p]
		}
	}
}

// index returns where position p is in f.pos, which a search over every
// node found: increasing from where it started, and again from 0 past
// where it wrapped round.
func (f *searched) index(p int32) (int, bool) {
	n := len(f.pos)
	if n == 0 {
		return 0, false
	}
	start := f.pos[0]
	if f.every {
		return int((p - start + int32(n)) % int32(n)), p >= 0 && int(p) < n
	}
	wrap, _ := slices.BinarySearchFunc(f.pos, true, func(q int32, _ bool) int {
		if q >= start {
			return -1
		}
		return 1
	})
	part, base := f.pos[:wrap], 0
	if p < start {
		part, base = f.pos[wrap:], wrap
	}
	j, ok := slices.BinarySearch(part, p)
	return base + j, ok
}

// positions returns the positions 0 to n-1, kept for it.
func (sc *scoring) positions(n int) []int32 {
	if len(sc.buf.iota) < n {
		sc.buf.iota = make([]int32, n)
		for p := range sc.buf.iota {
			sc.buf.iota[p] = int32(p)
		}
	}
	return sc.buf.iota[:n]
}

// everyNode returns what a search over every node of s from start
// found when every node passed.
func (sc *scoring) everyNode(s search, start int) searched {
	n := len(s.nodes)
	out := searched{nodes: grow(&sc.buf.feasible, n)[:0], pos: grow(&sc.buf.pos, n)[:0], every: true}
	if start == 0 && len(sc.f.extenders) == 0 {
		// The nodes themselves, which the plugins read as they read the
		// cycle's nodes (extenders, which may be anyone's code, get a
		// copy). Copying thousands of pointers while the garbage
		// collector marks costs a write barrier each.
		out.nodes = s.nodes[:n:n]
	} else {
		out.nodes = append(append(out.nodes, s.nodes[start:]...), s.nodes[:start]...)
		sc.buf.dirty = max(sc.buf.dirty, n) // released clean
	}
	iota := sc.positions(n)
	out.pos = append(append(out.pos, iota[start:]...), iota[:start]...)
	return out
}

// workers returns how many workers a CPU-bound loop over pieces takes:
// at most the framework's parallelism and GOMAXPROCS (goroutines beyond
// the CPUs add only hand-offs), and no more than one per perWorker
// pieces, below which a worker costs more than it saves.
func (f *Framework) workers(pieces, perWorker int) int {
	return max(1, min(f.parallelism, runtime.GOMAXPROCS(0), pieces/perWorker))
}

// advanceStart moves the next search's start past processed nodes, modulo n.
func (f *Framework) advanceStart(processed, n int) {
	for {
		old := f.nextStart.Load()
		if f.nextStart.CompareAndSwap(old, (old+int64(processed))%int64(n)) {
			return
		}
	}
}

// runFilters runs each filter on one node and returns the first rejection.
func runFilters(ctx context.Context, filters []fwk.FilterPlugin, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	for _, pl := range filters {
		if s := pl.Filter(ctx, state, pod, ni); !s.IsSuccess() {
			return filterStatus(pl, s)
		}
	}
	return nil
}

// filterStatus is the cycle's verdict when filter pl does not pass a
// node with s: s, attributed to pl, or an error.
func filterStatus(pl fwk.FilterPlugin, s *fwk.Status) *fwk.Status {
	if !s.IsRejected() {
		// Filters may only say yes or no; anything else is a fault.
		return fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
	}
	return s.WithPlugin(pl.Name())
}

// scoreNodes runs PreScore, Score and NormalizeScore over the nodes found
// (unless sc already scored them while filtering), applies weights, and
// writes the scores into t, as kube-scheduler's prioritizeNodes does. It
// returns each node's total, in sc's buffer.
func (f *Framework) scoreNodes(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, found searched, sc *scoring, idx nodeIndex, t *scoreTable) ([]int64, error) {
	nodes := found.nodes
	n := len(nodes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Plugin p's score of nodes[i] is raw[p*stride+i].
	raw, stride, active := sc.buf.raw, sc.stride, sc.active
	if sc.early {
		if err := sc.err.Load(); err != nil {
			return nil, *err
		}
	} else {
		var err error
		if raw, stride, active, err = f.score(ctx, state, pod, found, sc); err != nil {
			return nil, err
		}
	}
	// Plugins scoring every node alike are weighed once.
	pos := found.pos[:n]
	uniform, err := sc.uniform(ctx, state, pod, nodes, raw, stride, pos)
	if err != nil {
		return nil, err
	}
	if sc.before != nil {
		// Explain shows the scores as the plugins gave them.
		before := make([]int64, len(active)*n)
		for p := range active {
			copy(before[p*n:(p+1)*n], raw[p*stride:p*stride+n])
		}
		*sc.before = before
	}
	for p, pl := range active {
		if pl.normalize != nil && (uniform == nil || uniform[p] < 0) {
			if s := pl.normalize.NormalizeScore(ctx, state, pod, nodes, raw[p*stride:p*stride+n]); !s.IsSuccess() {
				return nil, normalizeError(pl, s)
			}
		}
	}
	// The result keeps each score in a byte, node by node: after the range
	// check, a score is at most MaxNodeScore.
	*t = newScoreTable(idx, idx.len(), found.pos[:n], found.runs, active, found.every, uniform)
	w := &weighing{sc: sc, active: active, raw: raw, stride: stride, found: found, pos: pos, uniform: uniform,
		memo: sc.memo, summed: sc.summed && !sc.unkept.Load(), table: t, totals: grow(&sc.buf.totals, n), cancel: cancel}
	w.prepare()
	// Each worker ranks the totals it finished, for selectHost.
	workers := f.workers(n*w.weighed, 4096)
	w.ranks = grow(&sc.buf.ranks, workers)
	for i := range w.ranks {
		w.ranks[i] = ranking{top: math.MinInt64}
	}
	parallel.ByWorker(ctx, workers, n, w.chunk)
	if err := w.err.Load(); err != nil {
		return nil, fmt.Errorf("applying score weights: %w", *err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sc.scored()
	sc.rank = ranking{top: math.MinInt64}
	for _, r := range w.ranks {
		sc.rank.merge(r)
	}
	return w.totals, nil
}

// score runs PreScore and Score over the nodes found, on the workers,
// into sc's buffer: plugin p's score of the i-th node is
// raw[p*stride+i]. active are the plugins that score the pod.
func (f *Framework) score(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, found searched, sc *scoring) (raw []int64, stride int, active []*scorePlugin, err error) {
	nodes := found.nodes
	n := len(nodes)
	d := cycleOf(state)
	d.scoredNodes, d.scored = nodes, found.pos[:n]
	if active, err = f.runPreScore(ctx, state, pod, nodes); err != nil {
		return nil, 0, nil, err
	}
	sc.bind(active, pod)
	raw, stride = sc.earlyBuffer(n), n
	sc.prescore(ctx, state, pod, found, raw, n)
	perWorker := 64
	if sc.cheapScores() {
		perWorker = cheapPerWorker
	}
	parallel.Chunks(ctx, f.workers(n, perWorker), n, func(start, end int) {
		sc.scoreChunk(ctx, state, pod, nodes, found.pos, raw, n, start, end)
	})
	if err := sc.err.Load(); err != nil {
		return nil, 0, nil, *err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, nil, err
	}
	return raw, stride, active, nil
}

// weighing applies the weights to one cycle's scores, plugin by plugin
// as kube-scheduler does, into each node's total and the result's table,
// on the workers.
type weighing struct {
	sc     *scoring
	active []*scorePlugin
	// raw holds the scores: plugin p's of the i-th node found is
	// raw[p*stride+i].
	raw    []int64
	stride int
	found  searched
	pos    []int32
	// uniform[p] is plugin p's score of every node, or -1 when its
	// scores differ (nil: they all may).
	uniform []int64
	// direct[p] are plugin p's scores by position, when the memo keeps
	// them (see scoring.directScores).
	direct [][]int32
	// base is what the uniform plugins add to every total.
	base int64
	// summed is set when the memo keeps the direct plugins' weighed sum
	// per node, and their bytes, which are then copied.
	summed bool
	memo   *memo
	table  *scoreTable
	totals []int64
	// weighed counts the plugins weighed node by node, plus one: the
	// others cost a copy.
	weighed int
	ranks   []ranking
	cancel  context.CancelFunc
	err     atomic.Pointer[error]
}

// prepare works out what the workers share: the direct scores, the base
// and how many plugins are weighed node by node.
func (w *weighing) prepare() {
	w.direct = make([][]int32, len(w.active))
	w.weighed = 1
	for p, pl := range w.active {
		w.direct[p] = w.sc.directScores(p, w.raw, w.stride, w.pos)
		switch {
		case w.uniform != nil && w.uniform[p] >= 0:
			w.base += w.uniform[p] * pl.weight
		case w.direct[p] == nil || !w.summed:
			w.weighed++
		}
	}
}

// fail records the first error and stops the other workers.
func (w *weighing) fail(err error) {
	w.err.CompareAndSwap(nil, &err)
	w.cancel()
}

// chunk weighs the scores of the nodes found from start to end, and
// ranks their totals in the worker's ranking.
func (w *weighing) chunk(worker, start, end int) {
	tot := w.totals[start:end]
	at := w.pos[start:end]
	at = at[:len(tot)]
	// The runs of consecutive positions, over which the memo's sums and
	// bytes are copied; nil when there are too many.
	var buf [maxRuns][2]int32
	var runs [][2]int32
	switch {
	case w.summed && w.found.runs != nil:
		runs = clipRuns(w.found.runs, start, end, buf[:0])
	case w.summed:
		runs = runsOf(at, w.found.every, buf[:0])
	}
	w.start(tot, at, runs)
	for p, pl := range w.active {
		if w.uniform != nil && w.uniform[p] >= 0 {
			continue // one score for every node
		}
		table := w.table.column(p, start, end)
		table = table[:len(tot)]
		switch kept := w.direct[p]; {
		case kept != nil && w.summed:
			bytes := w.memo.bytes[w.sc.slots[p]*w.memo.nodes : (w.sc.slots[p]+1)*w.memo.nodes]
			if runs != nil {
				for _, r := range runs {
					copy(table[r[0]:r[1]], bytes[at[r[0]]:])
				}
				continue
			}
			for i, q := range at {
				table[i] = bytes[q]
			}
		case kept != nil:
			// In range (see directScores).
			for i, q := range at {
				score := kept[q]
				tot[i] += int64(score) * pl.weight
				table[i] = uint8(score)
			}
		default:
			if !w.add(pl, tot, table, w.raw[p*w.stride+start:p*w.stride+end]) {
				return
			}
		}
	}
	w.ranks[worker].add(tot)
}

// start sets the totals of the nodes at positions at to what the memo's
// sums and the uniform plugins give them.
func (w *weighing) start(tot []int64, at []int32, runs [][2]int32) {
	switch {
	case runs != nil:
		for _, r := range runs {
			copy(tot[r[0]:r[1]], w.memo.dsum[at[r[0]]:])
		}
		if w.base != 0 {
			for i := range tot {
				tot[i] += w.base
			}
		}
	case w.summed:
		for i, q := range at {
			tot[i] = w.memo.dsum[q] + w.base
		}
	case w.base == 0:
		clear(tot)
	default:
		for i := range tot {
			tot[i] = w.base
		}
	}
}

// add adds pl's scores, weighed, to the totals and writes them into its
// column of the table. It reports false, having failed the weighing,
// when a score is out of range.
func (w *weighing) add(pl *scorePlugin, tot []int64, table []uint8, scores []int64) bool {
	scores = scores[:len(tot)]
	// One test per chunk, on the highest score as unsigned: a negative
	// one is higher than any other, and MinNodeScore is 0.
	var highest uint64
	for i, score := range scores {
		highest = max(highest, uint64(score))
		tot[i] += score * pl.weight
		table[i] = uint8(score)
	}
	if highest > uint64(fwk.MaxNodeScore) {
		for _, score := range scores {
			if score < fwk.MinNodeScore || score > fwk.MaxNodeScore {
				w.fail(invalidScore(pl, score))
				return false
			}
		}
	}
	return true
}

// ranking is the highest of some totals, and how many have it.
type ranking struct {
	top  int64
	ties int
}

// add ranks totals too.
func (r *ranking) add(totals []int64) {
	for _, t := range totals {
		switch {
		case t > r.top:
			r.top, r.ties = t, 1
		case t == r.top:
			r.ties++
		}
	}
}

// merge ranks the totals o ranked too.
func (r *ranking) merge(o ranking) {
	switch {
	case o.ties == 0:
	case o.top > r.top:
		*r = o
	case o.top == r.top:
		r.ties += o.ties
	}
}

// maxRuns bounds the runs runsOf finds: past it, positions are read
// one by one.
const maxRuns = 32

// runsOf returns the runs of consecutive positions in at, as [from, to)
// indices of at, appended to buf; nil when there are more than
// cap(buf). every says that at is a stretch of a search over every node,
// which is one run but where it wraps round.
func runsOf(at []int32, every bool, buf [][2]int32) [][2]int32 {
	if len(at) == 0 {
		return buf
	}
	if every && at[len(at)-1] >= at[0] {
		return append(buf, [2]int32{0, int32(len(at))})
	}
	from := 0
	for i := 1; i <= len(at); i++ {
		if i < len(at) && at[i] == at[i-1]+1 {
			continue
		}
		if len(buf) == cap(buf) {
			return nil
		}
		buf = append(buf, [2]int32{int32(from), int32(i)})
		from = i
	}
	return buf
}

// clipRuns returns the parts of runs (see searched.runs) within
// [start, end), as indices from start, appended to buf.
func clipRuns(runs [][2]int32, start, end int, buf [][2]int32) [][2]int32 {
	for _, r := range runs {
		lo, hi := max(int(r[0]), start), min(int(r[1]), end)
		if lo < hi {
			buf = append(buf, [2]int32{int32(lo - start), int32(hi - start)})
		}
	}
	if buf == nil {
		buf = [][2]int32{}
	}
	return buf
}

// runPreScore runs the PreScore plugins and returns the score plugins that
// did not skip the pod.
func (f *Framework) runPreScore(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*scorePlugin, error) {
	skipScore := cycleOf(state).skipScore
	clear(skipScore)
	for _, pl := range f.preScores {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			if i := slices.IndexFunc(f.scores, func(sp scorePlugin) bool { return sp.name == pl.Name() }); i >= 0 {
				skipScore[i] = true
			}
			continue
		}
		if !s.IsSuccess() {
			return nil, fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError())
		}
	}
	active := make([]*scorePlugin, 0, len(f.scores))
	for i := range f.scores {
		if !skipScore[i] {
			active = append(active, &f.scores[i])
		}
	}
	return active, nil
}

// normalizeError is kube-scheduler's error for plugin pl's
// NormalizeScore failing with s.
func normalizeError(pl *scorePlugin, s *fwk.Status) error {
	return fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", pl.name, s.AsError())
}

// invalidScore is kube-scheduler's error for plugin pl's normalized
// score out of range.
func invalidScore(pl *scorePlugin, score int64) error {
	return fmt.Errorf("plugin %q returns an invalid score %d, it should in the range of [%d, %d] after normalizing", pl.name, score, fwk.MinNodeScore, fwk.MaxNodeScore)
}

func scoreError(pl *scorePlugin, s *fwk.Status) error {
	return fmt.Errorf("running Score plugins: plugin %q failed with: %w", pl.name, s.AsError())
}

// selectHost returns the index of a node with the highest total, chosen
// uniformly among ties: one pass finds the top score and counts the ties,
// one random draw picks among them, so a large tie costs one draw rather
// than one per node.
func (f *Framework) selectHost(totals []int64) int {
	r := ranking{top: math.MinInt64}
	r.add(totals)
	return f.pick(totals, r)
}

// pick returns the index of one of the totals ranked r, chosen uniformly.
func (f *Framework) pick(totals []int64, r ranking) int {
	top := r.top
	pick := f.intN(r.ties)
	for i, t := range totals {
		if t == top {
			if pick == 0 {
				return i
			}
			pick--
		}
	}
	panic("unreachable: the top score has at least one node")
}

func (f *Framework) intN(n int) int {
	if f.rng == nil {
		return rand.IntN(n)
	}
	f.rng.mu.Lock()
	defer f.rng.mu.Unlock()
	return f.rng.r.IntN(n)
}

// lockedRand is a seeded random source that frameworks share.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}
