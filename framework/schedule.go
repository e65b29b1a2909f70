package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

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
func (f *Framework) Schedule(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*Result, error) {
	res := &Result{}
	if err := f.ScheduleInto(ctx, pod, nodes, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ScheduleInto is [Framework.Schedule] writing its result into res, for
// callers that schedule pod after pod and are done with each result before
// asking for the next: the per-node result, most of what a cycle
// allocates, goes into res.NodeScores's backing array when it has room,
// so a loop that passes the same Result allocates it once. Everything res
// held is replaced (on an error, res is left with no scores, no host and
// an empty Diagnosis); the NodeScores of an earlier call through res must
// not be used afterwards. The Scores lists and the Diagnosis are new each
// time, so a [FitError] stays valid. res must not be used concurrently.
// A nil res is an error.
func (f *Framework) ScheduleInto(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, res *Result) error {
	if res == nil {
		return fmt.Errorf("schedule: nil Result")
	}
	reuse := res.NodeScores[:0]
	*res = Result{}
	result, err := f.schedule(ctx, pod, nodes, reuse)
	if err != nil {
		return err
	}
	*res = *result
	return nil
}

// schedule is the scheduling cycle. out's backing array, if large enough,
// receives the NodeScores.
func (f *Framework) schedule(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, out []NodePluginScores) (*Result, error) {
	if pod == nil {
		return nil, fmt.Errorf("schedule: nil pod")
	}
	if len(nodes) == 0 {
		return nil, ErrNoNodesAvailable
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx, err := f.indexNodes(nodes)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	state := NewCycleState(nodes)
	state.listers = f.listers
	state.parallelism = f.parallelism
	state.affinityNodes = idx.affinity
	state.skipFilter = make([]bool, len(f.filters))
	state.skipScore = make([]bool, len(f.scores))
	diagnosis := Diagnosis{NodeToStatus: map[string]*Status{}}

	preRes, status, narrowedBy := f.runPreFilter(ctx, state, pod, nodes)
	if narrowedBy.Len() > 0 {
		diagnosis.UnschedulablePlugins = narrowedBy
	}
	if status != nil {
		if !status.IsRejected() {
			return nil, status.AsError()
		}
		// A PreFilter rejection applies to every node.
		for _, ni := range nodes {
			diagnosis.NodeToStatus[ni.Name()] = status
		}
		diagnosis.PreFilterMsg = status.Message()
		diagnosis.addPluginStatus(status)
		return nil, &FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}
	}

	f.recordNominations(state, pod)
	sc := f.startScoring(ctx, state, pod)
	defer sc.release()

	var feasible []*nodeinfo.NodeInfo
	if name := pod.Status.NominatedNodeName; name != "" {
		if i, ok := idx.byName[name]; ok {
			feasible, err = f.filterNodes(ctx, state, pod, nodes[i:i+1], &diagnosis, false, sc)
			if err == nil {
				feasible, err = f.filterWithExtenders(ctx, pod, feasible, &diagnosis, sc, false)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	// Nodes a PreFilterResult excluded are in the diagnosis but were never
	// evaluated; kube-scheduler does not count them.
	excluded := 0
	if len(feasible) == 0 {
		candidates := nodes
		if !preRes.AllNodes() {
			candidates, excluded = f.narrow(nodes, idx, preRes, &diagnosis)
		}
		feasible, err = f.filterNodes(ctx, state, pod, candidates, &diagnosis, true, sc)
		if err == nil {
			feasible, err = f.filterWithExtenders(ctx, pod, feasible, &diagnosis, sc, true)
		}
		if err != nil {
			return nil, err
		}
	}

	if len(feasible) == 0 {
		return nil, &FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}
	}
	result := &Result{
		EvaluatedNodes: len(feasible) + len(diagnosis.NodeToStatus) - excluded,
		FeasibleNodes:  len(feasible),
		Diagnosis:      diagnosis,
	}
	if len(feasible) == 1 {
		result.SuggestedHost = feasible[0].Name()
		return result, nil
	}
	var totals []int64
	result.NodeScores, totals, err = f.scoreNodes(ctx, state, pod, feasible, sc, out)
	if err != nil {
		return nil, err
	}
	f.scoreWithExtenders(ctx, pod, feasible, result.NodeScores, totals)
	result.SuggestedHost = feasible[f.selectHost(totals)].Name()
	return result, nil
}

// runPreFilter runs the PreFilter plugins as kube-scheduler does: a
// Skip disables that plugin's Filter; UnschedulableAndUnresolvable stops at
// once; Unschedulable is remembered while the rest still run; results
// narrow the node set by intersection, and narrowing to nothing rejects.
// It also returns the plugins that narrowed the node set.
func (f *Framework) runPreFilter(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*PreFilterResult, *Status, sets.Set[string]) {
	var result *PreFilterResult
	var rejected *Status
	narrowedBy := sets.New[string]()
	for _, pl := range f.preFilters {
		r, s := pl.PreFilter(ctx, state, pod, nodes)
		switch {
		case s.IsSkip():
			if i := slices.IndexFunc(f.filters, func(fp FilterPlugin) bool { return fp.Name() == pl.Name() }); i >= 0 {
				state.skipFilter[i] = true
			}
			continue
		case s.Code() == UnschedulableAndUnresolvable:
			return nil, s.WithPlugin(pl.Name()), nil
		case s.Code() == Unschedulable:
			rejected = s.WithPlugin(pl.Name())
			continue
		case !s.IsSuccess():
			return nil, AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			narrowedBy.Insert(pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(narrowedBy))
			if narrowedBy.Len() == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(narrowedBy)[0])
			}
			return nil, NewStatus(UnschedulableAndUnresolvable, msg), narrowedBy
		}
	}
	return result, rejected, narrowedBy
}

// narrow keeps the nodes a PreFilterResult names; the others are recorded
// as rejected by the plugins that narrowed.
// A node that already has a status (a nominated node that failed its
// filters) keeps it. The message names the plugins in
// d.UnschedulablePlugins, which by then also holds that node's rejecting
// plugin, as in kube-scheduler. It returns the kept nodes and how many nodes
// it marked.
func (f *Framework) narrow(nodes []*nodeinfo.NodeInfo, idx *nodeIndex, r *PreFilterResult, d *Diagnosis) ([]*nodeinfo.NodeInfo, int) {
	kept := make([]*nodeinfo.NodeInfo, 0, r.NodeNames.Len())
	for _, name := range sets.List(r.NodeNames) {
		if i, ok := idx.byName[name]; ok {
			kept = append(kept, nodes[i])
		}
	}
	absent := NewStatus(UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(d.UnschedulablePlugins)))
	marked := 0
	for _, ni := range nodes {
		if _, has := d.NodeToStatus[ni.Name()]; !has && !r.NodeNames.Has(ni.Name()) {
			d.NodeToStatus[ni.Name()] = absent
			marked++
		}
	}
	return kept, marked
}

// filterNodes runs the filters over nodes in parallel, starting at the
// rotating start index when rotate is set, and stops once enough feasible
// nodes are found. Rejections go into d. Feasible nodes are returned in
// search order, so that a seeded tie-break is reproducible. When sc scores
// early, each node that passes is scored at once and sc keeps the scores of
// the returned nodes.
func (f *Framework) filterNodes(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, d *Diagnosis, rotate bool, sc *scoring) ([]*nodeinfo.NodeInfo, error) {
	n := len(nodes)
	if n == 0 {
		return nil, nil
	}
	want := f.numFeasibleNodesToFind(n)
	if len(f.scores) == 0 && !f.extendersRank() {
		want = 1
	}
	start := 0
	if rotate {
		start = int(f.nextStart.Load() % int64(n))
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	statuses := grow(&sc.buf.statuses, n)
	passed := grow(&sc.buf.passed, n)
	clear(statuses)
	clear(passed)
	// Counting feasible nodes as they are found costs a contended atomic per
	// node; it is only needed when the search may stop early.
	earlyStop := want < n
	var found, rejected atomic.Int64
	var firstErr atomic.Pointer[Status]
	var raw []int64
	if sc.early {
		raw = sc.earlyBuffer(n)
	}
	filters := sc.activeFilters(f.filters, state.skipFilter)
	// Nodes with nominated pods take two passes; a cycle without any needs
	// no per-node look-up.
	nominated, _ := nominatedPodsKey.Read(state)
	parallel.Until(ctx, f.parallelism, n, func(i int) {
		ni := nodes[(start+i)%n]
		var s *Status
		if pods := nominated[ni.Name()]; len(pods) > 0 {
			s = f.runFiltersWithNominatedPods(ctx, filters, state, pod, ni, pods)
		} else {
			s = runFilters(ctx, filters, state, pod, ni)
		}
		switch {
		case s.IsSuccess():
			if earlyStop && found.Add(1) > int64(want) {
				cancel()
				found.Add(-1)
				return
			}
			passed[i] = true
			if sc.early {
				sc.scoreNode(ctx, state, pod, ni, raw, n, i)
			}
		case s.IsRejected():
			statuses[i] = s
			rejected.Add(1)
		default:
			firstErr.CompareAndSwap(nil, s)
			cancel()
		}
	})
	if s := firstErr.Load(); s != nil {
		return nil, s.AsError()
	}
	feasible := grow(&sc.buf.feasible, n)[:0]
	processed := 0
	if rejected.Load() == 0 && !earlyStop && parent.Err() == nil {
		// Every node passed, in search order: two copies instead of a loop,
		// and the early scores are already where they belong.
		feasible = append(append(feasible, nodes[start:]...), nodes[:start]...)
		processed = n
	}
	for i := range n - processed {
		ni := nodes[(start+i)%n]
		switch {
		case passed[i]:
			if sc.early {
				sc.keep(raw, n, i, len(feasible))
			}
			feasible = append(feasible, ni)
			processed++
		case statuses[i] != nil:
			d.NodeToStatus[ni.Name()] = statuses[i]
			d.addPluginStatus(statuses[i])
			processed++
		}
	}
	if sc.early {
		sc.stride = n
	}
	if rotate {
		f.advanceStart(processed, n)
	}
	// Our own cancel only means enough nodes were found; the caller's means stop.
	if err := parent.Err(); err != nil {
		return nil, err
	}
	return feasible, nil
}

// advanceStart moves the next search's start past the nodes processed now.
func (f *Framework) advanceStart(processed, n int) {
	for {
		old := f.nextStart.Load()
		if f.nextStart.CompareAndSwap(old, (old+int64(processed))%int64(n)) {
			return
		}
	}
}

// runFilters runs each filter on one node and returns the first rejection.
func runFilters(ctx context.Context, filters []FilterPlugin, state *CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *Status {
	for _, pl := range filters {
		s := pl.Filter(ctx, state, pod, ni)
		if s.IsSuccess() {
			continue
		}
		if !s.IsRejected() {
			// Filters may only say yes or no; anything else is a fault.
			return AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
		return s.WithPlugin(pl.Name())
	}
	return nil
}

// scoreNodes runs PreScore, Score and NormalizeScore (unless sc already
// scored the nodes while filtering) and applies weights.
//
// It returns each node's total and, unless the framework was built
// WithoutNodeScores, each node's scores by plugin, in dst's backing array
// when it has room.
func (f *Framework) scoreNodes(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo, sc *scoring, dst []NodePluginScores) ([]NodePluginScores, []int64, error) {
	n := len(nodes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var firstErr atomic.Pointer[error]
	fail := func(err error) {
		firstErr.CompareAndSwap(nil, &err)
		cancel()
	}
	// Plugin p's score of nodes[i] is raw[p*stride+i].
	raw, stride, active := sc.buf.raw, sc.stride, sc.active
	if sc.early {
		if err := sc.err.Load(); err != nil {
			return nil, nil, *err
		}
	} else {
		var err error
		if active, err = f.runPreScore(ctx, state, pod, nodes); err != nil {
			return nil, nil, err
		}
		raw, stride = sc.buffer(len(active)*n), n
		parallel.Until(ctx, f.parallelism, n, func(i int) {
			for p, pl := range active {
				score, s := pl.Score(ctx, state, pod, nodes[i])
				if !s.IsSuccess() {
					fail(scoreError(pl, s))
					return
				}
				raw[p*n+i] = score
			}
		})
		if err := firstErr.Load(); err != nil {
			return nil, nil, *err
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	for p, pl := range active {
		if pl.normalize != nil {
			if s := pl.normalize.NormalizeScore(ctx, state, pod, nodes, raw[p*stride:p*stride+n]); !s.IsSuccess() {
				return nil, nil, fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", pl.name, s.AsError())
			}
		}
	}
	// Weighting writes the result. Neighbouring nodes often score the same
	// (identical empty nodes, say), and then share one Scores slice: the
	// result is most of a cycle's allocation, and its size drives the cost of
	// garbage collection.
	totals := grow(&sc.buf.totals, n)
	clear(totals)
	var out []NodePluginScores
	if f.nodeScores {
		out = grow(&dst, n)
	}
	k := len(active)
	var names []string // nil unless scored early
	if sc.early {
		names = sc.buf.names[:n]
	}
	parallel.Chunks(ctx, f.parallelism, n, func(start, end int) {
		// The chunk's last few distinct score lists, most recent first.
		var recent [4][]PluginScore
		var slab []PluginScore
		for i := start; i < end; i++ {
			for p, pl := range active {
				score := raw[p*stride+i]
				if score < MinNodeScore || score > MaxNodeScore {
					fail(fmt.Errorf("plugin %q returns an invalid score %d, it should in the range of [%d, %d] after normalizing", pl.name, score, MinNodeScore, MaxNodeScore))
					return
				}
				totals[i] += score * pl.weight
			}
			if out == nil {
				continue
			}
			found := -1
			for r := range recent {
				if sameScores(recent[r], active, raw, stride, i) {
					found = r
					break
				}
			}
			if found < 0 {
				if len(slab)+k > cap(slab) {
					// Small at first: most chunks need only a few lists.
					slab = make([]PluginScore, 0, k*min(end-i, max(2, 2*cap(slab)/k)))
				}
				scores := slab[len(slab) : len(slab)+k : len(slab)+k]
				slab = slab[:len(slab)+k]
				for p, pl := range active {
					scores[p] = PluginScore{Name: pl.name, Score: raw[p*stride+i] * pl.weight}
				}
				copy(recent[1:], recent[:len(recent)-1])
				recent[0], found = scores, 0
			}
			var name string
			if names != nil {
				name = names[i]
			} else {
				name = nodes[i].Name()
			}
			out[i] = NodePluginScores{Name: name, Scores: recent[found], TotalScore: totals[i]}
		}
	})
	if err := firstErr.Load(); err != nil {
		return nil, nil, fmt.Errorf("applying score weights: %w", *err)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return out, totals, nil
}

// sameScores reports whether scores holds node i's weighted scores.
func sameScores(scores []PluginScore, active []*scorePlugin, raw []int64, stride, i int) bool {
	if scores == nil {
		return false
	}
	for p, pl := range active {
		if scores[p].Score != raw[p*stride+i]*pl.weight {
			return false
		}
	}
	return true
}

// runPreScore runs the PreScore plugins and returns the score plugins that
// did not skip the pod.
func (f *Framework) runPreScore(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*scorePlugin, error) {
	clear(state.skipScore)
	for _, pl := range f.preScores {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			if i := slices.IndexFunc(f.scores, func(sp scorePlugin) bool { return sp.name == pl.Name() }); i >= 0 {
				state.skipScore[i] = true
			}
			continue
		}
		if !s.IsSuccess() {
			return nil, fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError())
		}
	}
	active := make([]*scorePlugin, 0, len(f.scores))
	for i := range f.scores {
		if !state.skipScore[i] {
			active = append(active, &f.scores[i])
		}
	}
	return active, nil
}

func scoreError(pl *scorePlugin, s *Status) error {
	return fmt.Errorf("running Score plugins: plugin %q failed with: %w", pl.name, s.AsError())
}

// selectHost returns the index of a node with the highest total, chosen
// uniformly among ties: one pass finds the top score and counts the ties,
// one random draw picks among them, so a large tie costs one draw rather
// than one per node.
func (f *Framework) selectHost(totals []int64) int {
	top, ties := totals[0], 0
	for _, t := range totals {
		switch {
		case t > top:
			top, ties = t, 1
		case t == top:
			ties++
		}
	}
	pick := f.intN(ties)
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
	if f.rand == nil {
		return rand.IntN(n)
	}
	f.randMu.Lock()
	defer f.randMu.Unlock()
	return f.rand.IntN(n)
}
