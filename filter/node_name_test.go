package filter_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// podOnNode is a pod whose spec.nodeName is name.
func podOnNode(name string) *v1.Pod { return &v1.Pod{Spec: v1.PodSpec{NodeName: name}} }

// nodeNamed is an empty node called name.
func nodeNamed(name string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func TestNodeName(t *testing.T) {
	t.Parallel()
	mismatch := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, filter.ErrReasonNodeName).WithPlugin(names.NodeName)
	tests := []struct {
		name string
		pod  *v1.Pod
		node *nodeinfo.NodeInfo
		want *fwk.Status
	}{
		{"a pod naming no node fits any node", podOnNode(""), nodeNamed("node-a"), nil},
		{"a pod naming this node fits", podOnNode("node-a"), nodeNamed("node-a"), nil},
		{"a pod naming another node is rejected", podOnNode("node-b"), nodeNamed("node-a"), mismatch},
		{"names are compared exactly, case included", podOnNode("Node-A"), nodeNamed("node-a"), mismatch},
		{"a pod naming a node does not fit a node with an empty name", podOnNode("node-a"), nodeNamed(""), mismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := (&filter.NodeName{}).Filter(context.Background(), nil, tc.pod, tc.node); got.String() != tc.want.String() {
				t.Errorf("Filter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeNamePreFilterNarrowsToTheNamedNodeFromV137(t *testing.T) {
	t.Parallel()
	v136 := feature.Features{}
	for _, tc := range []struct {
		name     string
		features *feature.Features
		pod      *v1.Pod
		want     []string // nil: every node
	}{
		{"a pod naming a node is narrowed to it", nil, podOnNode("node-b"), []string{"node-b"}},
		{"a pod naming a node that is not there is narrowed to it all the same", nil, podOnNode("gone"), []string{"gone"}},
		{"a pod naming no node is not narrowed", nil, podOnNode(""), nil},
		{"without NodeNamePreFilter, as v1.36, nothing is narrowed", &v136, podOnNode("node-b"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl := &filter.NodeName{Features: tc.features}
			res, status := pl.PreFilter(context.Background(), nil, tc.pod, []*nodeinfo.NodeInfo{nodeNamed("node-a"), nodeNamed("node-b")})
			if status != nil {
				t.Fatalf("PreFilter status = %v, want nil", status)
			}
			if tc.want == nil {
				if !res.AllNodes() {
					t.Errorf("PreFilter = %v, want every node", res.NodeNames)
				}
				return
			}
			if res.AllNodes() || !res.NodeNames.Equal(sets.New(tc.want...)) {
				t.Errorf("PreFilter = %v, want %v", res, tc.want)
			}
		})
	}
}

func BenchmarkNodeName(b *testing.B) {
	pl := &filter.NodeName{}
	ctx := context.Background()
	node := nodeNamed("node-a")
	for _, bc := range []struct{ name, nodeName, want string }{
		{"Fits", "node-a", "Success"},
		{"Mismatch", "node-b", "UnschedulableAndUnresolvable (NodeName): " + filter.ErrReasonNodeName},
	} {
		pod := podOnNode(bc.nodeName)
		b.Run(bc.name, func(b *testing.B) {
			if got := pl.Filter(ctx, nil, pod, node).String(); got != bc.want {
				b.Fatalf("Filter = %v, want %v", got, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				pl.Filter(ctx, nil, pod, node)
			}
		})
	}
}
