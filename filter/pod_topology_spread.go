package filter

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/internal/topologyspread"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// PodTopologySpread's reasons.
const (
	// ErrReasonConstraintsNotMatch: placing the pod on the node would make
	// its domain exceed a hard constraint's maxSkew.
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	// ErrReasonNodeLabelNotMatch: the node lacks a hard constraint's
	// topology key.
	ErrReasonNodeLabelNotMatch = ErrReasonConstraintsNotMatch + " (missing required label)"
)

var (
	spreadMissingLabel = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch).WithPlugin(names.PodTopologySpread)
	spreadTooSkewed    = fwk.NewStatus(fwk.Unschedulable, ErrReasonConstraintsNotMatch).WithPlugin(names.PodTopologySpread)
)

var spreadDomainsKey = fwk.NewStateKey[*topologyspread.Domains]()

var (
	_ fwk.PreFilterPlugin     = (*PodTopologySpread)(nil)
	_ fwk.FilterPlugin        = (*PodTopologySpread)(nil)
	_ fwk.PreFilterExtensions = (*PodTopologySpread)(nil)
	_ fwk.StateCloner         = (*topologyspread.Domains)(nil)
)

// PodTopologySpread rejects nodes where the pod would break one of its
// DoNotSchedule topology spread constraints: in every constraint's
// topology, the node's domain may hold at most maxSkew more matching pods
// (the pod included, if it matches) than the emptiest domain, which counts
// as empty while there are fewer domains than minDomains. Domains are
// those of nodes that have every constraint's topology key and pass the
// constraint's nodeAffinityPolicy (default Honor) and nodeTaintsPolicy
// (default Ignore). Matching pods are those in the pod's namespace, not
// being deleted, that the constraint's selector (with matchLabelKeys
// merged in) selects.
//
// A node lacking a topology key is rejected as UnschedulableAndUnresolvable
// ([ErrReasonNodeLabelNotMatch]); a too skewed one as Unschedulable
// ([ErrReasonConstraintsNotMatch]), since moving pods could fix it.
//
// Pods without constraints get the default ones, whose selector comes from
// the Services and controllers selecting the pod, read through
// [fwk.CycleState.Listers].
//
// The zero value uses kube-scheduler's default arguments. It is safe for
// concurrent use.
type PodTopologySpread struct {
	defaults   topologyspread.Defaults
	aggregates topologyspread.Aggregates
}

// NewPodTopologySpread returns the filter configured by args,
// kube-scheduler's own type: unset fields (and nil args) take
// kube-scheduler's defaults, system default constraints; List defaulting
// takes DefaultConstraints, whose selectors are deduced for each pod. args
// are checked as kube-scheduler checks them, and an error lists every
// problem in its words.
func NewPodTopologySpread(args *configv1.PodTopologySpreadArgs) (*PodTopologySpread, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	return &PodTopologySpread{defaults: topologyspread.NewDefaults(a)}, nil
}

// Name returns "PodTopologySpread".
func (*PodTopologySpread) Name() string { return names.PodTopologySpread }

// PreFilter counts the matching pods of every domain once, over nodes. It
// returns Skip when the pod has no hard constraints (its own, or default
// ones), and Error when a constraint's selector does not parse or ctx is
// cancelled.
func (pl *PodTopologySpread) PreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	d, err := pl.domains(ctx, state, pod, nodes)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if d.Empty() {
		return nil, skip
	}
	spreadDomainsKey.Write(state, d)
	return nil, nil
}

func (pl *PodTopologySpread) domains(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*topologyspread.Domains, error) {
	cs, err := pl.defaults.Constraints(pod, v1.DoNotSchedule, state.Listers())
	if err != nil {
		return nil, fmt.Errorf("get constraints from pod: %w", err)
	}
	return topologyspread.NewDomains(ctx, pod, cs, nodes, topologyspread.Incremental{Aggregates: &pl.aggregates, Gens: cycle.Of(state).NodeGenerations(nodes), State: state})
}

// Filter checks node against the counts PreFilter made. Without them (a nil
// state, in tests) it counts on the spot over the state's nodes, or node
// alone. It returns UnschedulableAndUnresolvable for a node missing a
// topology key, Unschedulable for one too skewed, and Error for a NodeInfo
// without a node. With PreFilter's counts it does not allocate.
func (pl *PodTopologySpread) Filter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	d, ok := spreadDomainsKey.Read(state)
	if !ok {
		nodes := state.AllNodes()
		if len(nodes) == 0 {
			nodes = []*nodeinfo.NodeInfo{ni}
		}
		var err error
		if d, err = pl.domains(ctx, state, pod, nodes); err != nil {
			return fwk.AsStatus(err)
		}
	}
	switch d.Check(ni.Labels()) {
	case topologyspread.MissingLabel:
		return spreadMissingLabel
	case topologyspread.TooSkewed:
		return spreadTooSkewed
	}
	return nil
}

// AddPod updates PreFilter's counts as if podToAdd were on node. Without
// counts (PreFilter skipped the pod) there is nothing to update.
func (pl *PodTopologySpread) AddPod(_ context.Context, state *fwk.CycleState, podToSchedule *v1.Pod, podToAdd *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	return updateSpread(state, podToSchedule, podToAdd, node, 1)
}

// RemovePod updates PreFilter's counts as if podToRemove left node.
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *fwk.CycleState, podToSchedule *v1.Pod, podToRemove *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	return updateSpread(state, podToSchedule, podToRemove, node, -1)
}

func updateSpread(state *fwk.CycleState, podToSchedule *v1.Pod, p *nodeinfo.PodInfo, node *nodeinfo.NodeInfo, delta int) *fwk.Status {
	if d, ok := spreadDomainsKey.Read(state); ok {
		d.Update(p.Pod, podToSchedule, node.Node(), delta)
	}
	return nil
}
