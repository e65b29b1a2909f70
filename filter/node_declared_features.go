package filter

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrReasonUnsatisfiedFeatures is NodeDeclaredFeatures' reason, worded as
// kube-scheduler's.
const ErrReasonUnsatisfiedFeatures = "node(s) didn't match Pod's required features"

var unsatisfiedFeatures = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonUnsatisfiedFeatures).WithPlugin(names.NodeDeclaredFeatures)

// schedulerVersion is the version kube-scheduler infers a pod's required
// features for: features retired before it are no longer required.
var schedulerVersion = version.MustParse("1.36.3")

var declaredFeaturesKey = fwk.NewStateKey[ndf.FeatureSet]()

// NodeDeclaredFeatures rejects nodes that do not declare
// (status.declaredFeatures) a feature the pod needs, as kube-scheduler
// plugin of that name does, with its feature registry
// (k8s.io/component-helpers/nodedeclaredfeatures): today a pod needs one
// when a container restarts all containers on exit, or when it runs in the
// host network with a user namespace. It filters last in the default
// profile, as upstream appends it. The zero value is ready to use.
type NodeDeclaredFeatures struct{}

var (
	_ fwk.PreFilterPlugin = &NodeDeclaredFeatures{}
	_ fwk.FilterPlugin    = &NodeDeclaredFeatures{}
)

// Name returns "NodeDeclaredFeatures".
func (*NodeDeclaredFeatures) Name() string { return names.NodeDeclaredFeatures }

// PreFilter works out the features pod needs, and returns Skip when it
// needs none, so that Filter is not called.
func (*NodeDeclaredFeatures) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	reqs, err := RequiredFeatures(pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if reqs.IsEmpty() {
		return nil, skip
	}
	declaredFeaturesKey.Write(state, reqs)
	return nil, nil
}

// RequiredFeatures returns the node features pod needs, as kube-scheduler
// infers them from its spec. The queue's NodeDeclaredFeatures hint
// compares them before and after an update of the pod.
func RequiredFeatures(pod *v1.Pod) (ndf.FeatureSet, error) {
	return ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, schedulerVersion)
}

// Filter returns nil when the node declares every feature pod needs,
// UnschedulableAndUnresolvable with [ErrReasonUnsatisfiedFeatures]
// otherwise, and Error without PreFilter's state or a node. It modifies
// nothing and is safe for concurrent use.
func (*NodeDeclaredFeatures) Filter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	reqs, ok := declaredFeaturesKey.Read(state)
	if !ok {
		return fwk.AsStatus(fmt.Errorf("%s: Filter without PreFilter's state", names.NodeDeclaredFeatures))
	}
	if ni.Node() == nil {
		return errNilNode
	}
	fits, err := reqs.IsSubset(ni.DeclaredFeatures())
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !fits {
		return unsatisfiedFeatures
	}
	return nil
}

// NodeLocal reports true: the verdict on a node depends on the pod and
// that node alone (fwk.NodeLocalPlugin).
func (*NodeDeclaredFeatures) NodeLocal(_ *v1.Pod) bool {
	return true
}
