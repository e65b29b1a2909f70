package framework

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Result is the outcome of scheduling one pod. It refers to the node list
// it was computed over (a copy of a plain slice's names, or the
// snapshot), which it keeps alive while it lives.
type Result struct {
	// SuggestedHost is the chosen node's name.
	SuggestedHost string
	// EvaluatedNodes counts the nodes filtered (feasible or not); with
	// percentageOfNodesToScore below 100 the search may stop early. Nodes a
	// PreFilter plugin excluded up front are not counted.
	EvaluatedNodes int
	// FeasibleNodes counts the nodes that passed every filter.
	FeasibleNodes int
	// Diagnosis explains the nodes that were rejected.
	Diagnosis Diagnosis
	// Outputs are what the Reserve plugins left for the caller: for
	// DynamicResources and VolumeBinding, what kube-scheduler would write
	// when it binds the pod to SuggestedHost (package filter's Claims,
	// ExtendedResourceClaimStatus, Volumes and ProvisionedClaims read
	// them).
	Outputs fwk.Outputs

	scores scoreTable
}

// PluginOutputs returns &r.Outputs, nil for a nil r: a Result is a
// [fwk.OutputHolder].
func (r *Result) PluginOutputs() *fwk.Outputs {
	if r == nil {
		return nil
	}
	return &r.Outputs
}

// NodeScores returns every feasible node's scores, in the order the nodes
// were searched (the order given, rotated to where the search started);
// empty when only one node was feasible, since then nothing is scored.
//
// The scores are kept in a compact table while the Result lives, and each
// call builds the list anew, in two allocations however many nodes: a
// caller that wants only the placement pays nothing for it.
func (r *Result) NodeScores() []NodePluginScores {
	return r.scores.list()
}

// NodePluginScores is one node's scores.
type NodePluginScores struct {
	// Name is the node's name.
	Name string
	// Scores holds each scoring plugin's weighted, normalized score, in
	// plugin order. Plugins that skipped this pod (PreScore returned Skip)
	// are absent, as in kube-scheduler. Extenders interested in the pod
	// follow the plugins, named by their URL prefix, with their weighted
	// score scaled to 0-100.
	Scores []PluginScore
	// TotalScore is the sum of Scores, by which the node is ranked.
	TotalScore int64
}

// PluginScore is one plugin's weighted score for a node.
type PluginScore struct {
	// Name is the plugin's name, or an extender's URL prefix.
	Name string
	// Score is the weighted score, the part of the node's TotalScore.
	Score int64
}

// scoreTable is a cycle's scores, kept without a pointer per node so that
// a Result over thousands of nodes costs the garbage collector almost
// nothing: plugin scores end normalized in [MinNodeScore, MaxNodeScore],
// which a byte holds, and nodes are positions in the cycle's node index.
type scoreTable struct {
	nodes nodeIndex
	// The scored nodes' positions, in search order. A search walks
	// positions in increasing order from where it starts, wrapping round,
	// so they are kept as a set, one bit per node of the cycle (in), with
	// the search's first position (start); pos holds them instead for an
	// order not of that kind. n is how many there are.
	in    []uint64
	start int32
	pos   []int32
	n     int
	// span is set instead of in when the nodes were consecutive: n
	// positions from start, wrapping round from total-1 to 0, as when
	// every node was scored or a search stopped early found every node it
	// took up.
	span  bool
	total int32
	// plugins are the plugins that scored the pod, in profile order.
	plugins []*scorePlugin
	// raw holds node i's normalized score by plugin p at raw[col[p]+i];
	// a plugin that scored every node alike has no column (col[p] < 0),
	// and that score in same[p].
	raw  []uint8
	col  []int32
	same []uint8
	// ext holds, when extenders scored the pod, node i's extender scores
	// as kube-scheduler lists them: an extender that failed, or left the
	// node out of its answer, has no entry.
	ext [][]PluginScore
}

// score returns node i's normalized score by plugin p.
func (t *scoreTable) score(p, i int) uint8 {
	if c := t.col[p]; c >= 0 {
		return t.raw[int(c)+i]
	}
	return t.same[p]
}

// column returns plugin p's scores of nodes [lo, hi), to be written; nil
// for a plugin that scored every node alike.
func (t *scoreTable) column(p, lo, hi int) []uint8 {
	c := int(t.col[p])
	if c < 0 {
		return nil
	}
	return t.raw[c+lo : c+hi]
}

// newScoreTable returns the table of the nodes at positions pos, in
// search order, of the total nodes of idx, scored by plugins. every says
// that pos is every node, from pos[0] round to the one before it; runs,
// when not nil, are pos's runs of consecutive positions (see
// searched.runs). uniform[p], when uniform is not nil and it is not
// negative, is the score plugin p gave every node.
func newScoreTable(idx nodeIndex, total int, pos []int32, runs [][2]int32, plugins []*scorePlugin, every bool, uniform []int64) scoreTable {
	t := scoreTable{nodes: idx, n: len(pos), plugins: plugins, col: make([]int32, len(plugins)), same: make([]uint8, len(plugins))}
	cols := 0
	for p := range plugins {
		if uniform != nil && uniform[p] >= 0 {
			t.col[p], t.same[p] = -1, uint8(uniform[p])
			continue
		}
		t.col[p] = int32(cols * len(pos))
		cols++
	}
	t.raw = make([]uint8, cols*len(pos))
	if len(pos) == 0 {
		return t
	}
	if every {
		t.start, t.span, t.total = pos[0], true, int32(len(pos))
		return t
	}
	if runs != nil && inOrder(pos, runs, total) {
		t.start = pos[0]
		if spans(pos, runs, total) {
			t.span, t.total = true, int32(total)
			return t
		}
		// Run by run, a word at a time.
		t.in = make([]uint64, (total+63)/64)
		for _, r := range runs {
			setBits(t.in, int(pos[r[0]]), int(pos[r[1]-1])+1)
		}
		return t
	}
	// Increasing but for one wrap, which must not pass the start again.
	wraps, gaps := 0, 0
	for i := 1; i < len(pos); i++ {
		if pos[i] <= pos[i-1] {
			wraps++
		}
		if pos[i] != pos[i-1]+1 && (pos[i] != 0 || int(pos[i-1]) != total-1) {
			gaps++
		}
	}
	if wraps > 1 || wraps == 1 && pos[len(pos)-1] >= pos[0] || int(slices.Max(pos)) >= total {
		t.pos = slices.Clone(pos)
		return t
	}
	t.start = pos[0]
	if gaps == 0 {
		t.span, t.total = true, int32(total)
		return t
	}
	t.in = make([]uint64, (total+63)/64)
	for _, p := range pos {
		t.in[p/64] |= 1 << (p % 64)
	}
	return t
}

// spans reports whether pos, made of runs and in order (see inOrder), are
// consecutive positions, from total-1 round to 0.
func spans(pos []int32, runs [][2]int32, total int) bool {
	for k := 1; k < len(runs); k++ {
		if prev, next := pos[runs[k-1][1]-1], pos[runs[k][0]]; next != prev+1 && (next != 0 || int(prev) != total-1) {
			return false
		}
	}
	return true
}

// inOrder reports whether pos, made of runs (see searched.runs), are
// positions below total increasing but for one wrap, which does not pass
// the start again, as a search's are.
func inOrder(pos []int32, runs [][2]int32, total int) bool {
	wraps := 0
	for k, r := range runs {
		if int(pos[r[1]-1]) >= total {
			return false
		}
		if k > 0 && pos[r[0]] <= pos[runs[k-1][1]-1] {
			wraps++
		}
	}
	return wraps == 0 || wraps == 1 && pos[len(pos)-1] < pos[0]
}

// setBits sets bits [lo, hi) of in.
func setBits(in []uint64, lo, hi int) {
	for lo < hi && lo%64 != 0 {
		in[lo/64] |= 1 << (lo % 64)
		lo++
	}
	for ; lo+64 <= hi; lo += 64 {
		in[lo/64] = ^uint64(0)
	}
	for ; lo < hi; lo++ {
		in[lo/64] |= 1 << (lo % 64)
	}
}

// positions returns the scored nodes' positions, in search order.
func (t *scoreTable) positions() []int32 {
	if t.span {
		out := make([]int32, t.n)
		for i := range out {
			out[i] = (t.start + int32(i)) % t.total
		}
		return out
	}
	if t.in == nil {
		return t.pos
	}
	out := make([]int32, 0, t.n)
	total := int32(len(t.in) * 64)
	for _, r := range [2][2]int32{{t.start, total}, {0, t.start}} {
		for p := r[0]; p < r[1]; p++ {
			if t.in[p/64]&(1<<(p%64)) != 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// list builds the NodePluginScores of every scored node.
func (t *scoreTable) list() []NodePluginScores {
	n, k := t.n, len(t.plugins)
	if n == 0 {
		return nil
	}
	pos := t.positions()
	size := n * k
	for _, e := range t.ext {
		size += len(e)
	}
	out := make([]NodePluginScores, n)
	all := make([]PluginScore, 0, size)
	for i := range out {
		start := len(all)
		var total int64
		for p, pl := range t.plugins {
			s := int64(t.score(p, i)) * pl.weight
			all = append(all, PluginScore{Name: pl.name, Score: s})
			total += s
		}
		if t.ext != nil {
			for _, s := range t.ext[i] {
				all = append(all, s)
				total += s.Score
			}
		}
		scores := all[start:len(all):len(all)]
		out[i] = NodePluginScores{Name: t.nodes.name(int(pos[i])), Scores: scores, TotalScore: total}
	}
	return out
}

// Diagnosis records why nodes were rejected. Read a node's verdict with
// [Diagnosis.NodeStatus], and every rejected node with
// [Diagnosis.Rejected].
//
// Like kube-scheduler's, it keeps a status for each node a filter or an
// extender rejected, and one status shared by every node a PreFilter
// plugin ruled out (all of them when PreFilter rejected the pod), so that
// building it costs nothing for the nodes a cycle never looked at.
type Diagnosis struct {
	// UnschedulablePlugins are the plugins that rejected at least one node.
	UnschedulablePlugins sets.Set[string]
	// PreFilterMsg is the message of a PreFilter rejection, which applies to
	// every node.
	PreFilterMsg string
	// PostFilterMsg is what the PostFilter plugins said when none of them
	// made the pod schedulable, joined as kube-scheduler joins it, for
	// example "preemption: 0/3 nodes are available: 3 Preemption is not
	// helpful for scheduling."; when one did, what it said (from v1.37,
	// "preemption: found a potential placement for pod on node n1,
	// preempting 1 victims"); empty when none ran.
	PostFilterMsg string

	// statuses holds the verdict on each node rejected on its own.
	statuses map[string]*fwk.Status
	// absent is the verdict on every node of nodes outside kept and
	// statuses: the nodes PreFilter ruled out. Nil when there are none.
	absent *fwk.Status
	// kept are the nodes a PreFilterResult named; nil with absent set
	// means PreFilter rejected the pod on every node.
	kept sets.Set[string]
	// nodes are the cycle's nodes; nil in a Diagnosis built by hand.
	nodes nodeIndex
}

// NodeStatus returns the verdict on the node called name: the rejection
// of a node that a filter or an extender rejected, or the status shared by
// the nodes a PreFilter plugin ruled out. It returns nil for a node that
// passed every filter, one the search never reached (it stops once it has
// found enough feasible nodes, and after a nominated node that fits), and
// a name that is not one of the cycle's nodes.
func (d *Diagnosis) NodeStatus(name string) *fwk.Status {
	if s, ok := d.statuses[name]; ok {
		return s
	}
	if d.absent == nil || d.kept.Has(name) {
		return nil
	}
	if d.nodes != nil {
		if _, ok := d.nodes.position(name); !ok {
			return nil
		}
	}
	return d.absent
}

// SetNodeStatus records s as the verdict on the node called name, for a
// Diagnosis built by hand, such as an extender's (package extender/server).
// A nil s removes the node's own verdict.
func (d *Diagnosis) SetNodeStatus(name string, s *fwk.Status) {
	if s == nil {
		delete(d.statuses, name)
		return
	}
	if d.statuses == nil {
		d.statuses = map[string]*fwk.Status{}
	}
	d.statuses[name] = s
}

// reserve makes room for n more verdicts.
func (d *Diagnosis) reserve(n int) {
	if d.statuses == nil && n > 0 {
		d.statuses = make(map[string]*fwk.Status, n)
	}
}

// Rejected iterates over the rejected nodes and their verdicts: in the
// order the nodes were given when the framework made the Diagnosis, by
// name when it was built with [Diagnosis.SetNodeStatus]. The nodes a
// PreFilter plugin ruled out are among them, so that it then visits every
// node of the cycle.
func (d *Diagnosis) Rejected() iter.Seq2[string, *fwk.Status] {
	return func(yield func(string, *fwk.Status) bool) {
		if d.nodes != nil && d.absent != nil {
			for i := range d.nodes.len() {
				name := d.nodes.name(i)
				if s := d.NodeStatus(name); s != nil && !yield(name, s) {
					return
				}
			}
			return
		}
		names := slices.Collect(maps.Keys(d.statuses))
		if d.nodes != nil {
			slices.SortFunc(names, func(a, b string) int {
				i, _ := d.nodes.position(a)
				j, _ := d.nodes.position(b)
				return cmp.Compare(i, j)
			})
		} else {
			slices.Sort(names)
		}
		for _, name := range names {
			if !yield(name, d.statuses[name]) {
				return
			}
		}
	}
}

// rejectAll records a PreFilter rejection, which is every node's verdict.
func (d *Diagnosis) rejectAll(s *fwk.Status) {
	d.absent = s
	d.PreFilterMsg = s.Message()
	d.addPluginStatus(s)
}

// addPluginStatus records the plugin of a rejection among the
// UnschedulablePlugins.
func (d *Diagnosis) addPluginStatus(s *fwk.Status) {
	if s.Plugin() == "" || !s.IsRejected() {
		return
	}
	if d.UnschedulablePlugins == nil {
		d.UnschedulablePlugins = sets.New[string]()
	}
	d.UnschedulablePlugins.Insert(s.Plugin())
}

// FitError is returned by Schedule when no node fits the pod. Use
// errors.As to reach the Diagnosis, and what the PostFilter plugins
// decided: kube-scheduler would act on it, kubesched leaves that to the
// caller.
type FitError struct {
	// Pod is the pod that fits no node, as Schedule was given it.
	Pod *v1.Pod
	// NumAllNodes is the number of nodes the cycle was given: the N of
	// "0/N nodes are available".
	NumAllNodes int
	// Diagnosis holds the verdict on each node and the plugins that
	// rejected some.
	Diagnosis Diagnosis

	// Preemption is DefaultPreemption's decision: nominate the pod to a
	// node and evict pods there. Nil when preemption was not tried or
	// found no node.
	Preemption *fwk.Preemption
	// ClearNomination is set when kube-scheduler would clear the pod's
	// status.nominatedNodeName: preemption found no node, or the profile
	// has no PostFilter plugin. Otherwise, without a Preemption, the
	// nomination stays as it is.
	ClearNomination bool
	// Outputs are what the PostFilter plugins left for the caller besides
	// the preemption: for DynamicResources, a claim to deallocate or to
	// delete (package filter's ClaimToDeallocate and ClaimToDelete read
	// them).
	Outputs fwk.Outputs
}

// PluginOutputs returns &f.Outputs, nil for a nil f: a FitError is a
// [fwk.OutputHolder].
func (f *FitError) PluginOutputs() *fwk.Outputs {
	if f == nil {
		return nil
	}
	return &f.Outputs
}

// Error returns kube-scheduler's message, for example
// "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint(s).":
// the PreFilter message if PreFilter rejected the pod, otherwise each reason
// with the number of nodes that gave it, sorted as strings, then what the
// PostFilter plugins said (Diagnosis.PostFilterMsg). As in kube-scheduler,
// the nodes without a verdict of their own count NumAllNodes less those
// with one.
func (f *FitError) Error() string {
	d := &f.Diagnosis
	if d.PreFilterMsg != "" {
		return withPostFilter(fmt.Sprintf("0/%d nodes are available: %s.", f.NumAllNodes, d.PreFilterMsg), d)
	}
	return withPostFilter(fwk.FitMessage(f.NumAllNodes, d.statuses, d.absent), d)
}

func withPostFilter(msg string, d *Diagnosis) string {
	if d.PostFilterMsg == "" {
		return msg
	}
	return msg + " " + d.PostFilterMsg
}

// A normalized score must fit the byte the score table keeps it in.
const _ = uint8(fwk.MaxNodeScore - fwk.MinNodeScore)
