package filter

import (
	"context"
	"testing"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

func nodeWithTaints(taints ...v1.Taint) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: v1.NodeSpec{Taints: taints}})
}

func podWithTolerations(tolerations ...v1.Toleration) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Tolerations: tolerations}}
}

func TestTaintTolerationFilter(t *testing.T) {
	t.Parallel()
	noSchedule := v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}
	noExecute := v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoExecute}
	prefer := v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name  string
		pod   *v1.Pod
		node  *nodeinfo.NodeInfo
		wantR bool
	}{
		{"an untainted node fits", podWithTolerations(), nodeWithTaints(), false},
		{"an untolerated NoSchedule taint rejects", podWithTolerations(), nodeWithTaints(noSchedule), true},
		{"an untolerated NoExecute taint rejects", podWithTolerations(), nodeWithTaints(noExecute), true},
		{"a PreferNoSchedule taint never rejects", podWithTolerations(), nodeWithTaints(prefer), false},
		{"an Equal toleration with the same value tolerates", podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule}), nodeWithTaints(noSchedule), false},
		{"an Equal toleration with another value does not", podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "web", Effect: v1.TaintEffectNoSchedule}), nodeWithTaints(noSchedule), true},
		{"an Exists toleration ignores the value", podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists}), nodeWithTaints(noSchedule, noExecute), false},
		{"an empty key with Exists tolerates everything", podWithTolerations(v1.Toleration{Operator: v1.TolerationOpExists}), nodeWithTaints(noSchedule, noExecute), false},
		{"a toleration for another effect does not tolerate", podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}), nodeWithTaints(noSchedule), true},
		{"every NoSchedule taint must be tolerated", podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists}), nodeWithTaints(noSchedule, v1.Taint{Key: "gpu", Effect: v1.TaintEffectNoSchedule}), true},
		{"an operator left empty means Equal", podWithTolerations(v1.Toleration{Key: "dedicated", Value: "infra"}), nodeWithTaints(noSchedule), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := (&TaintToleration{}).Filter(context.Background(), nil, tc.pod, tc.node)
			if tc.wantR {
				if got.Code() != fwk.UnschedulableAndUnresolvable || got.Message() != ErrReasonUntoleratedTaint || got.Plugin() != "TaintToleration" {
					t.Errorf("got %v, want UnschedulableAndUnresolvable %q", got, ErrReasonUntoleratedTaint)
				}
			} else if got != nil {
				t.Errorf("got %v, want a fit", got)
			}
		})
	}
}

func BenchmarkTaintTolerationFilter(b *testing.B) {
	pod := podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists})
	ni := nodeWithTaints(v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}, v1.Taint{Key: "x", Effect: v1.TaintEffectPreferNoSchedule})
	b.ReportAllocs()
	for b.Loop() {
		if s := (&TaintToleration{}).Filter(context.Background(), nil, pod, ni); s != nil {
			b.Fatal(s)
		}
	}
}

func TestTaintTolerationComparisonOperatorsFollowTheOption(t *testing.T) {
	t.Parallel()
	node := nodeWithTaints(v1.Taint{Key: "gen", Value: "7", Effect: v1.TaintEffectNoSchedule})
	tests := []struct {
		name    string
		enabled bool
		value   string
		op      v1.TolerationOperator
		fits    bool
	}{
		{"Gt tolerates nothing while the option is off, as in v1.36.3", false, "5", v1.TolerationOpGt, false},
		{"with the option, Gt tolerates a larger taint value", true, "5", v1.TolerationOpGt, true},
		{"with the option, Lt does not tolerate a larger taint value", true, "5", v1.TolerationOpLt, false},
		{"with the option, a non-numeric value tolerates nothing", true, "five", v1.TolerationOpGt, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := podWithTolerations(v1.Toleration{Key: "gen", Operator: tc.op, Value: tc.value, Effect: v1.TaintEffectNoSchedule})
			got := (&TaintToleration{Features: &feature.Features{TaintTolerationComparisonOperators: tc.enabled}}).Filter(context.Background(), nil, pod, node)
			if (got == nil) != tc.fits {
				t.Errorf("got %v, want fits=%v", got, tc.fits)
			}
		})
	}
}
