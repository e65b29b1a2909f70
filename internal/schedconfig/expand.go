package schedconfig

import (
	"fmt"
	"math"
	"slices"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Point is an extension point of a profile, named as kube-scheduler's
// plugin interface for it is (its messages use those names).
type Point string

// The extension points, in the order kube-scheduler's framework builds
// them.
const (
	PreFilter         Point = "PreFilterPlugin"
	Filter            Point = "FilterPlugin"
	PostFilter        Point = "PostFilterPlugin"
	Reserve           Point = "ReservePlugin"
	PreScore          Point = "PreScorePlugin"
	Score             Point = "ScorePlugin"
	PreBind           Point = "PreBindPlugin"
	Bind              Point = "BindPlugin"
	PostBind          Point = "PostBindPlugin"
	Permit            Point = "PermitPlugin"
	PreEnqueue        Point = "PreEnqueuePlugin"
	QueueSort         Point = "QueueSortPlugin"
	PlacementGenerate Point = "PlacementGeneratePlugin"
	PlacementScore    Point = "PlacementScorePlugin"
)

// Points are the extension points in kube-scheduler's order.
var Points = []Point{PreFilter, Filter, PostFilter, Reserve, PreScore, Score, PreBind, Bind, PostBind, Permit, PreEnqueue, QueueSort, PlacementGenerate, PlacementScore}

// pluginSet returns p's set for point.
func pluginSet(p *configv1.Plugins, point Point) configv1.PluginSet {
	switch point {
	case PreFilter:
		return p.PreFilter
	case Filter:
		return p.Filter
	case PostFilter:
		return p.PostFilter
	case Reserve:
		return p.Reserve
	case PreScore:
		return p.PreScore
	case Score:
		return p.Score
	case PreBind:
		return p.PreBind
	case Bind:
		return p.Bind
	case PostBind:
		return p.PostBind
	case Permit:
		return p.Permit
	case PreEnqueue:
		return p.PreEnqueue
	case QueueSort:
		return p.QueueSort
	case PlacementGenerate:
		return p.PlacementGenerate
	case PlacementScore:
		return p.PlacementScore
	}
	return configv1.PluginSet{}
}

// Implements tells which extension points a plugin implements; known is
// false for a plugin no factory builds.
type Implements func(plugin string) (points map[Point]bool, known bool)

// Expanded is what a profile's plugins become, as kube-scheduler's
// framework builds them: at each extension point, the plugins in the
// order they run, and the score and placement score weights.
type Expanded struct {
	At                    map[Point][]string
	ScoreWeights          map[string]int64
	PlacementScoreWeights map[string]int64
}

// Score weights may not add up to more than this, kube-scheduler's
// MaxTotalScore, once multiplied by MaxNodeScore (100).
const maxTotalScore = math.MaxInt64

// Expand lays out a defaulted profile's plugins as kube-scheduler
// NewFramework does, with its error messages:
//   - each extension point's own enabled plugins, in order (each must
//     exist, implement the point, and appear once);
//   - then, unless the point disables "*", the multiPoint plugins that
//     implement it and that it does not disable: those it enables itself
//     come first, in its order, then the other multiPoint plugins, then
//     its remaining own plugins;
//   - exactly one queue sort plugin and at least one bind plugin;
//   - score weights from the score point where a plugin is enabled there,
//     else from multiPoint, 0 meaning 1, that may not overflow.
//
// schedulerName is the profile's, for the messages.
func Expand(schedulerName string, p *configv1.Plugins, implements Implements) (*Expanded, error) {
	out := &Expanded{At: map[Point][]string{}}
	if p == nil {
		return out, nil
	}
	has := func(name string, point Point) (bool, error) {
		points, known := implements(name)
		if !known {
			return false, fmt.Errorf("%s %q does not exist", point, name)
		}
		return points[point], nil
	}
	for _, point := range Points {
		seen := map[string]bool{}
		for _, pl := range pluginSet(p, point).Enabled {
			ok, err := has(pl.Name, point)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("plugin %q does not extend %s plugin", pl.Name, point)
			}
			if seen[pl.Name] {
				return nil, fmt.Errorf("plugin %q already registered as %q", pl.Name, point)
			}
			seen[pl.Name] = true
			out.At[point] = append(out.At[point], pl.Name)
		}
	}
	if len(p.MultiPoint.Enabled) > 0 {
		for _, point := range Points {
			if err := expandMultiPoint(p, point, has, out); err != nil {
				return nil, err
			}
		}
	}
	if n := len(out.At[QueueSort]); n != 1 {
		return nil, fmt.Errorf("only one queue sort plugin required for profile with scheduler name %q, but got %d", schedulerName, n)
	}
	if len(out.At[Bind]) == 0 {
		return nil, fmt.Errorf("at least one bind plugin is needed for profile with scheduler name %q", schedulerName)
	}
	if len(out.At[PlacementGenerate]) > 1 {
		return nil, fmt.Errorf("at most one placement generate plugin is allowed for profile with scheduler name %q", schedulerName)
	}
	var err error
	if out.ScoreWeights, err = weights(Score, append(slices.Clone(p.Score.Enabled), p.MultiPoint.Enabled...), has); err != nil {
		return nil, fmt.Errorf("score plugins: %w", err)
	}
	if out.PlacementScoreWeights, err = weights(PlacementScore, append(slices.Clone(p.PlacementScore.Enabled), p.MultiPoint.Enabled...), has); err != nil {
		return nil, fmt.Errorf("placement score plugins: %w", err)
	}
	return out, nil
}

// expandMultiPoint adds the multiPoint plugins that implement point to
// out.At[point], reordered as kube-scheduler reorders them.
func expandMultiPoint(p *configv1.Plugins, point Point, has func(string, Point) (bool, error), out *Expanded) error {
	set := pluginSet(p, point)
	disabled := map[string]bool{}
	for _, pl := range set.Disabled {
		disabled[pl.Name] = true
	}
	if disabled["*"] {
		return nil
	}
	own := out.At[point]
	isOwn := map[string]bool{}
	for _, name := range own {
		isOwn[name] = true
	}
	var multi []string
	overridden := map[string]bool{}
	inMulti := map[string]bool{}
	for _, pl := range p.MultiPoint.Enabled {
		ok, err := has(pl.Name, point)
		if err != nil {
			return err
		}
		switch {
		case !ok, disabled[pl.Name]:
		case isOwn[pl.Name]:
			// Configured at the point itself: that wins.
			overridden[pl.Name] = true
		case inMulti[pl.Name]:
			return fmt.Errorf("plugin %q already registered as %q", pl.Name, point)
		default:
			inMulti[pl.Name] = true
			multi = append(multi, pl.Name)
		}
	}
	var list []string
	for _, name := range own {
		if overridden[name] {
			list = append(list, name)
		}
	}
	list = append(list, multi...)
	for _, name := range own {
		if !overridden[name] {
			list = append(list, name)
		}
	}
	out.At[point] = list
	return nil
}

// weights returns the weights of the plugins among plugins that implement
// point: the first mention wins, 0 means 1, and the total may not
// overflow.
func weights(point Point, plugins []configv1.Plugin, has func(string, Point) (bool, error)) (map[string]int64, error) {
	const maxNodeScore = 100
	out := map[string]int64{}
	var total int64
	for _, pl := range plugins {
		ok, err := has(pl.Name, point)
		if err != nil || !ok {
			continue
		}
		if _, done := out[pl.Name]; done {
			continue
		}
		w := int64(deref(pl.Weight))
		if w == 0 {
			w = 1
		}
		out[pl.Name] = w
		if w*maxNodeScore > maxTotalScore-total {
			return nil, fmt.Errorf("total score of Score plugins could overflow")
		}
		total += w * maxNodeScore
	}
	return out, nil
}
