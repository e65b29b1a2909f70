package filter_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// cordoned is node-a, with spec.unschedulable set as given.
func cordoned(unschedulable bool) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec:       v1.NodeSpec{Unschedulable: unschedulable},
	})
}

// podTolerating is a pod with tolerations.
func podTolerating(tolerations ...v1.Toleration) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Tolerations: tolerations}}
}

func TestNodeUnschedulable(t *testing.T) {
	t.Parallel()
	rejected := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, filter.ErrReasonUnschedulable).WithPlugin(names.NodeUnschedulable)
	const key = v1.TaintNodeUnschedulable // node.kubernetes.io/unschedulable
	tests := []struct {
		name          string
		unschedulable bool
		pod           *v1.Pod
		want          *fwk.Status
	}{
		{"a schedulable node accepts a pod without tolerations", false, podTolerating(), nil},
		{"a cordoned node rejects a pod without tolerations", true, podTolerating(), rejected},
		{
			"a cordoned node accepts a pod tolerating the key with Exists and NoSchedule", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}), nil,
		},
		{
			"a cordoned node accepts a pod tolerating the key with Exists and any effect", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpExists}), nil,
		},
		{
			"a cordoned node accepts a pod tolerating everything (Exists with an empty key)", true,
			podTolerating(v1.Toleration{Operator: v1.TolerationOpExists}), nil,
		},
		{
			"a cordoned node accepts Equal with the taint's empty value", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpEqual, Effect: v1.TaintEffectNoSchedule}), nil,
		},
		{
			"a cordoned node accepts an empty operator, which means Equal", true,
			podTolerating(v1.Toleration{Key: key}), nil,
		},
		{
			"a cordoned node rejects Equal with a value, since the taint has none", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpEqual, Value: "true"}), rejected,
		},
		{
			"a cordoned node rejects a toleration of the NoExecute effect only", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}), rejected,
		},
		{
			"a cordoned node rejects a toleration of the PreferNoSchedule effect only", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule}), rejected,
		},
		{
			"a cordoned node rejects a toleration of another key", true,
			podTolerating(v1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists}), rejected,
		},
		{
			"a cordoned node rejects Gt, since comparison operators are off in v1.36.3", true,
			podTolerating(v1.Toleration{Key: key, Operator: v1.TolerationOpGt, Value: "0"}), rejected,
		},
		{
			"one tolerating toleration among others suffices", true,
			podTolerating(
				v1.Toleration{Key: "other", Operator: v1.TolerationOpExists},
				v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
			), nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := (&filter.NodeUnschedulable{}).Filter(context.Background(), nil, tc.pod, cordoned(tc.unschedulable))
			if got.String() != tc.want.String() {
				t.Errorf("Filter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeUnschedulableIgnoresTheNodesTaints(t *testing.T) {
	t.Parallel()
	// The taint itself is TaintToleration's to judge; this filter reads
	// only spec.unschedulable.
	ni := nodeinfo.New(&v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec:       v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}}},
	})
	if got := (&filter.NodeUnschedulable{}).Filter(context.Background(), nil, podTolerating(), ni); got != nil {
		t.Errorf("Filter = %v, want nil", got)
	}
}

func BenchmarkNodeUnschedulable(b *testing.B) {
	pl := &filter.NodeUnschedulable{}
	ctx := context.Background()
	tolerating := podTolerating(
		v1.Toleration{Key: "a", Operator: v1.TolerationOpExists},
		v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	)
	for _, bc := range []struct {
		name          string
		unschedulable bool
		pod           *v1.Pod
		want          string
	}{
		{"Schedulable", false, podTolerating(), "Success"},
		{"CordonedTolerated", true, tolerating, "Success"},
		{"CordonedRejected", true, podTolerating(), "UnschedulableAndUnresolvable (NodeUnschedulable): " + filter.ErrReasonUnschedulable},
	} {
		node := cordoned(bc.unschedulable)
		b.Run(bc.name, func(b *testing.B) {
			if got := pl.Filter(ctx, nil, bc.pod, node).String(); got != bc.want {
				b.Fatalf("Filter = %v, want %v", got, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				pl.Filter(ctx, nil, bc.pod, node)
			}
		})
	}
}
