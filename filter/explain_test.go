package filter_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestExplainersOfPluginsWithOneReason(t *testing.T) {
	t.Parallel()
	cordoned := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: v1.NodeSpec{Unschedulable: true}})
	pinned := podNamed("p")
	pinned.Spec.NodeName = "elsewhere"
	tolerant := podNamed("p")
	tolerant.Spec.Tolerations = []v1.Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: v1.TolerationOpExists}}
	holder := podNamed("holder", gcePD("disk-1", false))
	rwopUser := podNamed("user", claimSource("once"))
	listers := volumeListers([]*v1.PersistentVolumeClaim{claim("once", "pv", "", v1.ReadWriteOncePod)}, nil, nil)

	tests := []struct {
		name  string
		pl    fwk.FilterExplainer
		pod   *v1.Pod
		node  *nodeinfo.NodeInfo
		nodes []*nodeinfo.NodeInfo // the cycle's, when not just node
		want  []string
	}{
		{"NodeName names the node the pod asks for", &filter.NodeName{}, pinned, onNode("n"), nil,
			[]string{"the pod's spec.nodeName is elsewhere"}},
		{"NodeName has nothing to say of the node asked for", &filter.NodeName{}, pinned, onNode("elsewhere"), nil, nil},
		{"NodeUnschedulable says the node is cordoned", &filter.NodeUnschedulable{}, podNamed("p"), cordoned, nil,
			[]string{"the node is cordoned (spec.unschedulable) and the pod does not tolerate node.kubernetes.io/unschedulable:NoSchedule"}},
		{"NodeUnschedulable has nothing to say for a pod that tolerates it", &filter.NodeUnschedulable{}, tolerant, cordoned, nil, nil},
		{"VolumeRestrictions names the disk and the pod holding it", &filter.VolumeRestrictions{}, podNamed("p", gcePD("disk-1", false)), onNode("n", holder), nil,
			[]string{"volume v0 (GCE persistent disk disk-1) is mounted by pod default/holder on the node, and not read-only on both sides"}},
		{"VolumeRestrictions names a ReadWriteOncePod claim in use and where", &filter.VolumeRestrictions{}, podNamed("p", claimSource("once")), onNode("n"),
			[]*nodeinfo.NodeInfo{onNode("n"), onNode("m", rwopUser)},
			[]string{"claim default/once is ReadWriteOncePod and pod default/user on node m uses it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nodes := tt.nodes
			if nodes == nil {
				nodes = []*nodeinfo.NodeInfo{tt.node}
			}
			state := fwk.NewCycleState(nodes).SetListers(listers)
			if p, ok := tt.pl.(fwk.PreFilterPlugin); ok {
				if _, s := p.PreFilter(context.Background(), state, tt.pod, nodes); !s.IsSuccess() && !s.IsSkip() {
					t.Fatalf("PreFilter = %v", s)
				}
			}
			rejected := tt.pl.Filter(context.Background(), state, tt.pod, tt.node)
			var got []string
			for _, d := range tt.pl.ExplainFilter(context.Background(), state, tt.pod, tt.node) {
				got = append(got, d.Message)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExplainFilter = %q, want %q", got, tt.want)
			}
			if rejected.IsRejected() != (tt.want != nil) {
				t.Errorf("Filter = %v while ExplainFilter says %q", rejected, got)
			}
		})
	}
}
