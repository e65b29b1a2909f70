package framework

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The adaptive percentageOfNodesToScore rule: small clusters are searched
// whole; larger ones stop once enough feasible nodes are found, never fewer
// than minFeasibleNodesToFind nodes or minFeasibleNodesPercentageToFind
// percent of the cluster.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// DefaultParallelism is kube-scheduler's default number of goroutines for
// filtering and scoring.
const DefaultParallelism = 16

// ErrNoNodesAvailable is returned when Schedule is given no nodes, with
// kube-scheduler's wording.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

type scorePlugin struct {
	fwk.ScorePlugin
	name      string // cached: asked for once per node otherwise
	weight    int64
	normalize fwk.NormalizeScorePlugin // nil if the plugin does not normalize
	// index is the plugin's position in Framework.scores, and local its
	// node-locality (see memo); nil for a plugin never node-local.
	index int
	local func(*v1.Pod) bool
	// batch is the plugin as a batchScorer, or nil.
	batch batchScorer
}

// Framework runs a profile of plugins over a pod and a set of nodes. Build
// one with [New] (or kubesched.DefaultFramework) and share it: Schedule is
// safe for concurrent use.
type Framework struct {
	preEnqueues []fwk.PreEnqueuePlugin
	preFilters  []fwk.PreFilterPlugin
	filters     []fwk.FilterPlugin
	preScores   []fwk.PreScorePlugin
	scores      []scorePlugin
	reserves    []fwk.ReservePlugin
	postFilters []fwk.PostFilterPlugin
	percentage  int32
	parallelism int

	// rng is the random source, shared with frameworks derived by
	// UsingListers; nil: the global, concurrency-safe source.
	rng *lockedRand

	nextStart atomic.Int64
	// index and snapIndex are the last node lists indexed, plain and
	// snapshot: successive cycles usually see the same list.
	index     atomic.Pointer[sliceIndex]
	snapIndex atomic.Pointer[snapshotIndex]
	// scratch recycles per-cycle working slices (*scratch).
	scratch   sync.Pool
	listers   fwk.Listers
	extenders []fwk.Extender
	nominator Nominator
	// active caches the plugins cycles run after PreFilter.
	active cyclePluginsCache
	// memos remember node-local plugins' verdicts per pod shape.
	memos *memos
	// plugins lists the profile, for Plugins.
	plugins []PluginInfo
}

// PluginInfo describes one plugin of a profile.
type PluginInfo struct {
	// Name is the plugin's Name(), as configurations, statuses and scores
	// call it.
	Name string
	// Points are the extension points the plugin takes part in, in the
	// order a cycle reaches them.
	Points []ExtensionPoint
	// Weight multiplies the plugin's scores; 0 for a plugin that does
	// not score.
	Weight int32
}

// Plugins lists the framework's plugins in the order they were added, a
// plugin added at several points (WithPluginAt) once. The list is the
// caller's.
func (f *Framework) Plugins() []PluginInfo {
	out := slices.Clone(f.plugins)
	for i := range out {
		out[i].Points = slices.Clone(out[i].Points)
	}
	return out
}

// cycleOrder is the order a cycle reaches the extension points.
var cycleOrder = []ExtensionPoint{PreEnqueue, PreFilter, Filter, PostFilter, PreScore, Score, Reserve}

// notePlugin records that the plugin called name takes part at point.
func (f *Framework) notePlugin(name string, point ExtensionPoint, weight int32) {
	i := slices.IndexFunc(f.plugins, func(p PluginInfo) bool { return p.Name == name })
	if i < 0 {
		f.plugins = append(f.plugins, PluginInfo{Name: name})
		i = len(f.plugins) - 1
	}
	p := &f.plugins[i]
	if point == Score {
		p.Weight = weight
	}
	if !slices.Contains(p.Points, point) {
		p.Points = append(p.Points, point)
		slices.SortFunc(p.Points, func(a, b ExtensionPoint) int {
			return slices.Index(cycleOrder, a) - slices.Index(cycleOrder, b)
		})
	}
}

// Option configures a Framework.
type Option func(*config) error

type config struct {
	listers     fwk.Listers
	extenders   []fwk.Extender
	nominator   Nominator
	plugins     []pluginWeight
	percentage  int32
	parallelism int
	rand        *rand.Rand
	// noPreemption leaves DefaultPreemption out of PostFilter.
	noPreemption bool
}

type pluginWeight struct {
	plugin fwk.Plugin
	weight int32
	// at is the one extension point the plugin was added at, or "" for
	// every one it implements.
	at ExtensionPoint
}

// ExtensionPoint is a phase of the scheduling cycle that plugins take part
// in, named as in kube-scheduler's configuration (without the Plugin
// suffix of its interfaces).
type ExtensionPoint string

// The extension points a kubesched framework runs.
const (
	PreEnqueue ExtensionPoint = "PreEnqueue"
	PreFilter  ExtensionPoint = "PreFilter"
	Filter     ExtensionPoint = "Filter"
	PostFilter ExtensionPoint = "PostFilter"
	PreScore   ExtensionPoint = "PreScore"
	Score      ExtensionPoint = "Score"
	Reserve    ExtensionPoint = "Reserve"
)

// WithPluginAt adds a plugin at one extension point only, after the
// plugins already there, for profiles whose points list their plugins in
// different orders, as a KubeSchedulerConfiguration's may. weight is as
// for [WithPlugin], and used only at [Score]. The plugin must implement
// the point's interface. A plugin added with [WithPlugin] as well takes
// part in both ways, which at one point is an error (two plugins of one
// name).
func WithPluginAt(point ExtensionPoint, p fwk.Plugin, weight int32) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("WithPluginAt %s: nil plugin", point)
		}
		switch point {
		case PreEnqueue, PreFilter, Filter, PostFilter, PreScore, Score, Reserve:
		default:
			return fmt.Errorf("WithPluginAt: unknown extension point %q", point)
		}
		c.plugins = append(c.plugins, pluginWeight{plugin: p, weight: weight, at: point})
		return nil
	}
}

// WithPlugin adds a plugin to the profile, after those already added. It
// takes part in every phase whose interface it implements (PreEnqueue, PreFilter,
// Filter, PreScore, Score, NormalizeScore); weight multiplies its scores and
// may not be 0 if it is a [fwk.ScorePlugin], and is ignored otherwise. A
// negative weight, which kube-scheduler's configuration accepts, makes
// the plugin's scores count against a node.
// Filters run in the order added. Two plugins of the same phase may not
// share a name.
func WithPlugin(p fwk.Plugin, weight int32) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("WithPlugin: nil plugin")
		}
		c.plugins = append(c.plugins, pluginWeight{plugin: p, weight: weight})
		return nil
	}
}

// WithPercentageOfNodesToScore sets the share of nodes, in percent, that
// once found feasible stops the search: 100 filters every node, 0 (the
// default) uses kube-scheduler's adaptive rule (50% at 0 nodes, falling by
// 1% per 125 nodes, at least 5%). Whatever the percentage, at least 100
// nodes are searched for.
func WithPercentageOfNodesToScore(p int32) Option {
	return func(c *config) error {
		if p < 0 || p > 100 {
			return fmt.Errorf("WithPercentageOfNodesToScore: %d is not in [0, 100]", p)
		}
		c.percentage = p
		return nil
	}
}

// WithParallelism sets how many goroutines at most filter and score
// nodes (default 16), as kube-scheduler's parallelism. A loop takes no
// more than GOMAXPROCS of them, and fewer for short loops: a cycle of a
// pod whose shape's last cycle judged few nodes afresh (a replica after
// a replica) takes one per 4096 nodes, since waking a worker costs more
// than the few loads each node then needs.
func WithParallelism(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("WithParallelism: %d goroutines; need at least 1", n)
		}
		c.parallelism = n
		return nil
	}
}

// WithRandSource sets the random source that breaks ties between
// top-scoring nodes. With a seeded source and percentageOfNodesToScore 100,
// the same inputs give the same choice. The framework serializes access
// to it.
func WithRandSource(src rand.Source) Option {
	return func(c *config) error {
		if src == nil {
			return errors.New("WithRandSource: nil source")
		}
		c.rand = rand.New(src)
		return nil
	}
}

// New builds a framework from options. It returns an error for a bad
// option or a plugin list that cannot work (a score plugin without weight,
// two plugins of one phase with the same name).
func New(opts ...Option) (*Framework, error) {
	c := config{parallelism: DefaultParallelism}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	f := &Framework{percentage: c.percentage, parallelism: c.parallelism, listers: c.listers, nominator: c.nominator, memos: &memos{}}
	if c.rand != nil {
		f.rng = &lockedRand{r: c.rand}
	}
	f.scratch.New = func() any { return new(scratch) }
	var err error
	if f.extenders, err = orderExtenders(c.extenders); err != nil {
		return nil, err
	}
	names := map[string]sets.Set[string]{}
	claim := func(phase, name string) error {
		if names[phase] == nil {
			names[phase] = sets.New[string]()
		}
		if names[phase].Has(name) {
			return fmt.Errorf("two %s plugins named %q", phase, name)
		}
		names[phase].Insert(name)
		return nil
	}
	for _, pw := range c.plugins {
		p, name := pw.plugin, pw.plugin.Name()
		if name == "" {
			return nil, fmt.Errorf("plugin %T has an empty name", p)
		}
		if pw.at != "" && !Implements(p, pw.at) {
			return nil, fmt.Errorf("plugin %q does not extend %s plugin", name, pw.at)
		}
		// joins reports whether p takes part at point, which it
		// implements: at every such point, or only at the one it was
		// added at.
		joins := func(point ExtensionPoint) bool { return pw.at == "" || pw.at == point }
		if pl, ok := p.(fwk.PreEnqueuePlugin); ok && joins(PreEnqueue) {
			if err := claim("PreEnqueue", name); err != nil {
				return nil, err
			}
			f.preEnqueues = append(f.preEnqueues, pl)
			f.notePlugin(name, PreEnqueue, 0)
		}
		if pl, ok := p.(fwk.PreFilterPlugin); ok && joins(PreFilter) {
			if err := claim("PreFilter", name); err != nil {
				return nil, err
			}
			f.preFilters = append(f.preFilters, pl)
			f.notePlugin(name, PreFilter, 0)
		}
		if pl, ok := p.(fwk.FilterPlugin); ok && joins(Filter) {
			if err := claim("Filter", name); err != nil {
				return nil, err
			}
			f.filters = append(f.filters, pl)
			f.notePlugin(name, Filter, 0)
		}
		if pl, ok := p.(fwk.PreScorePlugin); ok && joins(PreScore) {
			if err := claim("PreScore", name); err != nil {
				return nil, err
			}
			f.preScores = append(f.preScores, pl)
			f.notePlugin(name, PreScore, 0)
		}
		if pl, ok := p.(fwk.ScorePlugin); ok && joins(Score) {
			if err := claim("Score", name); err != nil {
				return nil, err
			}
			if pw.weight == 0 {
				return nil, fmt.Errorf("score plugin %q has weight 0; give it 1 or more (a configuration's 0 is 1)", name)
			}
			sp := scorePlugin{ScorePlugin: pl, name: name, weight: int64(pw.weight), index: len(f.scores), local: nodeLocality(pl)}
			sp.normalize, _ = p.(fwk.NormalizeScorePlugin)
			sp.batch, _ = p.(batchScorer)
			f.scores = append(f.scores, sp)
			f.notePlugin(name, Score, pw.weight)
		}
		if pl, ok := p.(fwk.ReservePlugin); ok && joins(Reserve) {
			if err := claim("Reserve", name); err != nil {
				return nil, err
			}
			f.reserves = append(f.reserves, pl)
			f.notePlugin(name, Reserve, 0)
		}
		if pl, ok := p.(fwk.PostFilterPlugin); ok && joins(PostFilter) && !(c.noPreemption && name == defaultPreemption) {
			if err := claim("PostFilter", name); err != nil {
				return nil, err
			}
			f.postFilters = append(f.postFilters, pl)
			f.notePlugin(name, PostFilter, 0)
		}
	}
	return f, nil
}

// Implements reports whether p implements point's interface.
func Implements(p fwk.Plugin, point ExtensionPoint) bool {
	var ok bool
	switch point {
	case PreEnqueue:
		_, ok = p.(fwk.PreEnqueuePlugin)
	case PreFilter:
		_, ok = p.(fwk.PreFilterPlugin)
	case Filter:
		_, ok = p.(fwk.FilterPlugin)
	case PostFilter:
		_, ok = p.(fwk.PostFilterPlugin)
	case PreScore:
		_, ok = p.(fwk.PreScorePlugin)
	case Score:
		_, ok = p.(fwk.ScorePlugin)
	case Reserve:
		_, ok = p.(fwk.ReservePlugin)
	}
	return ok
}

// numFeasibleNodesToFind returns how many feasible nodes end the search.
func (f *Framework) numFeasibleNodesToFind(numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	percentage := int(f.percentage)
	if percentage == 0 {
		percentage = max(50-numAllNodes/125, minFeasibleNodesPercentageToFind)
	}
	return max(numAllNodes*percentage/100, minFeasibleNodesToFind)
}
