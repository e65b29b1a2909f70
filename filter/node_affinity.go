package filter

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/schedconfig"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// NodeAffinity's reasons.
const (
	// ErrReasonPod: the node fails the pod's nodeSelector or required node affinity.
	ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"
	// ErrReasonEnforced: the node fails the profile's AddedAffinity.
	ErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity"
	// ErrReasonConflict: the pod's metadata.name matchFields select no node at all.
	ErrReasonConflict = "pod affinity terms conflict"
)

var (
	affinityMismatch = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonPod).WithPlugin(names.NodeAffinity)
	enforcedMismatch = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonEnforced).WithPlugin(names.NodeAffinity)
	affinityConflict = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonConflict).WithPlugin(names.NodeAffinity)
)

var requiredAffinityKey = fwk.NewStateKey[nodeaffinity.Required]()

// NodeAffinity rejects nodes that fail the pod's spec.nodeSelector or
// required node affinity, and, if configured, the profile's AddedAffinity.
// Its PreFilter narrows the search to the nodes named by metadata.name
// matchFields when every term names some. The zero value is ready to use.
type NodeAffinity struct {
	added *nodeaffinity.Selector
}

var (
	_ fwk.PreFilterPlugin = (*NodeAffinity)(nil)
	_ fwk.FilterPlugin    = (*NodeAffinity)(nil)
)

// NewNodeAffinity returns a NodeAffinity that also enforces the required
// terms of args.AddedAffinity on every pod, as kube-scheduler does; nil
// args add nothing. The whole of AddedAffinity is checked as
// kube-scheduler checks it, and an error lists every problem in its words.
// Its preferred terms belong to score.NewNodeAffinity.
func NewNodeAffinity(args *configv1.NodeAffinityArgs) (*NodeAffinity, error) {
	a, err := schedconfig.PluginArgs(args)
	if err != nil {
		return nil, err
	}
	pl := &NodeAffinity{}
	if added := a.AddedAffinity; added != nil && added.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		pl.added = nodeaffinity.NewSelector(added.RequiredDuringSchedulingIgnoredDuringExecution)
		if err := pl.added.Err(); err != nil {
			return nil, fmt.Errorf("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: %w", err)
		}
	}
	return pl, nil
}

// Name returns "NodeAffinity".
func (*NodeAffinity) Name() string { return names.NodeAffinity }

// PreFilter compiles the pod's constraints once. It returns Skip when there
// is nothing to check, and a PreFilterResult when the required terms name
// their nodes through metadata.name.
func (pl *NodeAffinity) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	var required *v1.NodeSelector
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	// A nil map differs from an empty one here, as in kube-scheduler.
	if required == nil && pl.added == nil && pod.Spec.NodeSelector == nil {
		return nil, skip
	}
	requiredAffinityKey.Write(state, nodeaffinity.RequiredOf(pod))
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		return nil, nil
	}
	// The union over terms of the names each term pins; a term that pins
	// none could match any node, so then nothing can be narrowed.
	var all sets.Set[string]
	for _, t := range required.NodeSelectorTerms {
		var pinned sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key != metav1.ObjectNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			if pinned == nil {
				pinned = sets.New(r.Values...)
			} else {
				pinned = pinned.Intersection(sets.New(r.Values...))
			}
		}
		if pinned == nil {
			return nil, nil
		}
		if all == nil {
			all = pinned
		} else {
			all = all.Union(pinned)
		}
	}
	if len(all) == 0 {
		return nil, affinityConflict
	}
	return &fwk.PreFilterResult{NodeNames: all}, nil
}

// Filter implements [fwk.FilterPlugin].
func (pl *NodeAffinity) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return errNilNode
	}
	if pl.added != nil && !pl.added.Matches(node) {
		return enforcedMismatch
	}
	required, ok := requiredAffinityKey.Read(state)
	if !ok {
		required = nodeaffinity.RequiredOf(pod)
	}
	if !required.Matches(node) {
		return affinityMismatch
	}
	return nil
}

// NodeLocal reports true: the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin).
func (*NodeAffinity) NodeLocal(_ *v1.Pod) bool {
	return true
}
