package score

import (
	"context"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var (
	_ framework.PodOnlyPreScorer = (*VolumeBinding)(nil)
	_ framework.PreScorePlugin   = (*VolumeBinding)(nil)
	_ framework.ScorePlugin      = (*VolumeBinding)(nil)
)

// VolumeBinding scores nothing by default: with kube-scheduler v1.36.3's
// default feature gates (StorageCapacityScoring off) its PreScore always
// skips, and so does this plugin's zero value.
//
// Built by [NewStorageCapacityScoring], as kube-scheduler with the alpha
// StorageCapacityScoring feature gate on, it ranks the nodes that pass
// filter.VolumeBinding by how full the pod's claims would make the storage
// they get there, per storage class, through the shape: the volumes they
// would bind (requested against the volumes' sizes), or if none, the
// volumes to provision that a CSIStorageCapacity has room for (requested
// against that capacity). Nodes without either score 0.
//
// It reuses what filter.VolumeBinding's PreFilter found in the cycle state,
// and otherwise finds it from [framework.CycleState.Listers]. It is safe
// for concurrent use.
type VolumeBinding struct {
	scorer *volumebinding.Scorer // nil: scoring off
}

// NewVolumeBinding returns the score plugin configured by args,
// kube-scheduler's own type, with kube-scheduler v1.36.3's default feature
// gates: it scores nothing, and a shape is an error, in kube-scheduler's
// words, as in kube-scheduler. nil args are the defaults.
func NewVolumeBinding(args *configv1.VolumeBindingArgs) (*VolumeBinding, error) {
	if _, err := schedconfig.PluginArgs(args); err != nil {
		return nil, err
	}
	return &VolumeBinding{}, nil
}

// NewStorageCapacityScoring returns the score plugin as kube-scheduler
// v1.36.3 builds it from args with the alpha StorageCapacityScoring
// feature gate on: an empty shape is the default (score 10 at 0%
// utilization falling to 0 at 100%, which favours nodes with more room),
// and a shape must be sorted and in range. This is not the default
// profile, and the conformance module does not compare it with
// kube-scheduler.
func NewStorageCapacityScoring(args *configv1.VolumeBindingArgs) (*VolumeBinding, error) {
	a, err := schedconfig.CapacityScoringArgs(args)
	if err != nil {
		return nil, err
	}
	return &VolumeBinding{scorer: volumebinding.NewScorer(a.Shape)}, nil
}

// Name returns "VolumeBinding".
func (*VolumeBinding) Name() string { return names.VolumeBinding }

// PodOnlyPreScore reports true: PreScore never reads its nodes.
func (*VolumeBinding) PodOnlyPreScore(*framework.CycleState, *v1.Pod) bool { return true }

// PreScore returns Skip when scoring is off. Otherwise it makes sure the
// pod's claims are in state and returns nil, even for a pod without
// claims (every node then scores 0), as kube-scheduler does; for a pod
// whose claims PreFilter would reject, it returns that rejection, which
// the framework treats as an error (the default profile never gets
// there).
func (pl *VolumeBinding) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *framework.Status {
	if pl == nil || pl.scorer == nil {
		return skip
	}
	if _, ok := volumebinding.ClaimsKey.Read(state); ok {
		return nil
	}
	claims, status := volumebinding.NewClaims(state.Listers(), pod)
	if status != nil {
		return status
	}
	if claims != nil {
		volumebinding.ClaimsKey.Write(state, claims)
	}
	return nil
}

// Score returns the node's score in [0, 100]: 0 when scoring is off, the
// pod has no claim, or its claims cannot be had on the node. It returns
// Error if ni has no node, or the status filter.VolumeBinding would give
// for the pod's claims when that is not a plain rejection of the node.
func (pl *VolumeBinding) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *framework.Status) {
	if pl == nil || pl.scorer == nil {
		return 0, nil
	}
	if ni.Node() == nil {
		return 0, errNilNode
	}
	claims, status := volumebinding.ClaimsOf(state, pod)
	if status != nil {
		return 0, status
	}
	var placement volumebinding.Placement
	conflicts, status := claims.Check(ni.Name(), ni.Labels(), &placement)
	if status != nil || conflicts != 0 {
		// kube-scheduler keeps no placement for a node it rejected.
		return 0, status
	}
	return pl.scorer.Score(&placement), nil
}
