package score

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

var (
	_ fwk.PreScorePlugin = (*VolumeBinding)(nil)
	_ fwk.ScorePlugin    = (*VolumeBinding)(nil)
)

// VolumeBinding ranks the nodes that pass filter.VolumeBinding by how full
// the pod's claims would make the storage they get there, per storage
// class, through the shape: the volumes they would bind (requested
// against the volumes' sizes), or if none, the volumes to provision that
// a CSIStorageCapacity has room for (requested against that capacity).
// Nodes without either, and every node for a pod without claims, score 0.
// This is kube-scheduler's StorageCapacityScoring feature gate, on from
// v1.37; with it off (Features), as in v1.36, PreScore skips and nothing
// is scored. The zero value has the default shape.
//
// It reuses what filter.VolumeBinding's PreFilter found in the cycle state,
// and otherwise finds it from [fwk.CycleState.Listers]. It is safe
// for concurrent use.
type VolumeBinding struct {
	// Features: StorageCapacityScoring is read. nil is [feature.Default].
	Features *feature.Features
	scorer   *volumebinding.Scorer // nil: the default shape's
}

// defaultVolumeScorer scores with kube-scheduler's default shape: 10 at
// 0% utilization falling to 0 at 100%, which favours nodes with more
// room.
var defaultVolumeScorer = sync.OnceValue(func() *volumebinding.Scorer {
	a, err := schedconfig.CapacityScoringArgs(nil)
	if err != nil {
		panic("the default VolumeBinding args are invalid: " + err.Error())
	}
	return volumebinding.NewScorer(a.Shape)
})

// NewVolumeBinding returns the score plugin configured by args,
// kube-scheduler's own type, as kube-scheduler builds it with
// StorageCapacityScoring on: an empty shape is the default, and a shape
// must be sorted and in range (kube-scheduler's messages). nil args are
// the defaults. Whether it scores is its Features' StorageCapacityScoring;
// a configuration for a release with that gate off refuses a shape.
func NewVolumeBinding(args *configv1.VolumeBindingArgs) (*VolumeBinding, error) {
	a, err := schedconfig.CapacityScoringArgs(args)
	if err != nil {
		return nil, err
	}
	return &VolumeBinding{scorer: volumebinding.NewScorer(a.Shape)}, nil
}

// scoring returns the plugin's scorer, or nil when it does not score.
func (pl *VolumeBinding) scoring() *volumebinding.Scorer {
	if pl == nil || !feature.Of(pl.Features).StorageCapacityScoring {
		return nil
	}
	if pl.scorer == nil {
		return defaultVolumeScorer()
	}
	return pl.scorer
}

// Name returns "VolumeBinding".
func (*VolumeBinding) Name() string { return names.VolumeBinding }

// PodOnlyPreScore reports true: PreScore never reads its nodes.
func (*VolumeBinding) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// PreScore returns Skip when scoring is off. Otherwise it makes sure the
// pod's claims are in state and returns nil, even for a pod without
// claims (every node then scores 0), as kube-scheduler does; for a pod
// whose claims PreFilter would reject, it returns that rejection, which
// the framework treats as an error (the default profile never gets
// there).
func (pl *VolumeBinding) PreScore(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *fwk.Status {
	if pl.scoring() == nil {
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
func (pl *VolumeBinding) Score(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	scorer := pl.scoring()
	if scorer == nil {
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
	return scorer.Score(&placement), nil
}

// ScoreBatch sets every score to 0 without looking at the nodes when the
// pod has no claims, which PreScore then left out of the cycle state, and
// reports false otherwise, for [VolumeBinding.Score] to answer.
func (*VolumeBinding) ScoreBatch(state *fwk.CycleState, _ int, scores []int64) bool {
	if _, ok := volumebinding.ClaimsKey.Read(state); ok {
		return false
	}
	clear(scores)
	return true
}
