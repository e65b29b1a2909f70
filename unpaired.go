package kubesched

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// A configuration may run a plugin's Filter without its PreFilter, or its
// Score without its PreScore (by disabling the one and not the other).
// kube-scheduler's plugins then each do what their code does when the
// state their first phase writes is missing: most fail the scheduling
// attempt with an internal error naming the state, and some compute what
// they need themselves. kubesched's plugins compute it themselves, as the
// second kind do; for the first kind a stand-in fails as kube-scheduler's
// plugin does, with its words. Both supported releases word these errors
// alike.

// unpaired is what an in-tree plugin does at a phase run without the
// phase before it.
type unpaired struct {
	// err, when set, is the internal error kube-scheduler's plugin
	// returns there on every node (or, for Score, every scored node);
	// otherwise kubesched's own plugin runs, computing what the missing
	// phase would have.
	err string
	// keep, for a Filter, is a rejection reason the plugin gives before
	// it looks for its state: kubesched's plugin runs, and a rejection
	// with exactly this reason stands.
	keep string
}

// withoutPreFilter is what each in-tree plugin with a PreFilter does at
// Filter without it. A plugin absent here has no PreFilter, or a Filter
// that reads nothing PreFilter writes.
var withoutPreFilter = map[string]unpaired{
	names.NodeResourcesFit:     {err: `error reading "PreFilterNodeResourcesFit" from cycleState: not found`},
	names.NodePorts:            {err: `reading "PreFilterNodePorts" from cycleState: not found`},
	names.InterPodAffinity:     {err: `error reading "PreFilterInterPodAffinity" from cycleState: not found`},
	names.PodTopologySpread:    {err: `reading "PreFilterPodTopologySpread" from cycleState: not found`},
	names.VolumeRestrictions:   {err: `cannot read "PreFilterVolumeRestrictions" from cycleState`, keep: filter.ErrReasonDiskConflict},
	names.VolumeBinding:        {err: "not found"},
	names.DynamicResources:     {err: "not found"},
	names.NodeDeclaredFeatures: {err: `error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found`},
	names.NodeAffinity:         {},
	names.VolumeZone:           {},
	names.NodeVolumeLimits:     {},
	names.NodeName:             {},
	names.NodeUnschedulable:    {},
	names.TaintToleration:      {},
}

// withoutPreScore is withoutPreFilter for Score without PreScore.
// VolumeBinding and DynamicResources score from their PreFilter's state.
var withoutPreScore = map[string]unpaired{
	names.TaintToleration:                 {err: `failed to read "PreScoreTaintToleration" from cycleState: not found`},
	names.InterPodAffinity:                {err: `failed to read "PreScoreInterPodAffinity" from cycleState: not found`},
	names.PodTopologySpread:               {err: `error reading "PreScorePodTopologySpread" from cycleState: not found`},
	names.NodeAffinity:                    {},
	names.NodeResourcesFit:                {},
	names.NodeResourcesBalancedAllocation: {},
	names.VolumeBinding:                   {},
	names.DynamicResources:                {},
}

// ErrUnpairedPhase is returned, wrapped, for a profile that runs a
// plugin of a Registry at Filter without its PreFilter, or at Score
// without its PreScore: what such a plugin then does is its own, and
// kubesched refuses the profile rather than guess. In-tree plugins run
// unpaired as kube-scheduler's do.
var ErrUnpairedPhase = errors.New("kubesched cannot judge this exactly: what a plugin does without its first phase is its own")

// unpairedParts returns, by plugin and extension point, the stand-ins
// for in-tree plugins the layout runs at Filter or Score without the
// phase before it, or an error for a Registry's plugin laid out so.
func unpairedParts(exp *schedconfig.Expanded, implements schedconfig.Implements, built map[string][]fwk.Plugin) (map[string]map[framework.ExtensionPoint]fwk.Plugin, error) {
	out := map[string]map[framework.ExtensionPoint]fwk.Plugin{}
	for _, pair := range []struct {
		pre, main schedconfig.Point
		point     framework.ExtensionPoint
		table     map[string]unpaired
	}{
		{schedconfig.PreFilter, schedconfig.Filter, framework.Filter, withoutPreFilter},
		{schedconfig.PreScore, schedconfig.Score, framework.Score, withoutPreScore},
	} {
		for _, name := range exp.At[pair.main] {
			if points, _ := implements(name); !points[pair.pre] || slices.Contains(exp.At[pair.pre], name) {
				continue
			}
			u, ok := pair.table[name]
			if _, inTree := inTree[name]; !ok || !inTree {
				return nil, fmt.Errorf("plugin %q runs at %s without its %s: %w", name, pair.main, pair.pre, ErrUnpairedPhase)
			}
			if u.err == "" {
				continue
			}
			if out[name] == nil {
				out[name] = map[framework.ExtensionPoint]fwk.Plugin{}
			}
			if pair.point == framework.Filter {
				inner, _ := partAt(built[name], framework.Filter).(fwk.FilterPlugin)
				out[name][framework.Filter] = &failingFilter{name: name, inner: inner, keep: u.keep, err: errors.New(u.err)}
			} else {
				out[name][framework.Score] = &failingScore{name: name, err: errors.New(u.err)}
			}
		}
	}
	return out, nil
}

// failingFilter stands in for a plugin's Filter run without its
// PreFilter: it fails with err, but for a rejection with reason keep
// that inner gives first.
type failingFilter struct {
	name  string
	inner fwk.FilterPlugin
	keep  string
	err   error
}

func (f *failingFilter) Name() string { return f.name }

func (f *failingFilter) Filter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if f.keep != "" && f.inner != nil {
		if s := f.inner.Filter(ctx, state, pod, ni); s.IsRejected() && slices.Equal(s.Reasons(), []string{f.keep}) {
			return s
		}
	}
	return fwk.AsStatus(f.err)
}

// failingScore stands in for a plugin's Score run without its PreScore:
// it fails with err.
type failingScore struct {
	name string
	err  error
}

func (f *failingScore) Name() string { return f.name }

func (f *failingScore) Score(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return 0, fwk.AsStatus(f.err)
}
