package volumebinding_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/volumebinding"
)

// defaultShape is kube-scheduler's default capacity-scoring shape, which
// favours nodes with more room.
var defaultShape = []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}

func TestScorerScore(t *testing.T) {
	t.Parallel()
	wide := class("wide", storagev1.VolumeBindingWaitForFirstConsumer, "kubernetes.io/no-provisioner")
	plainCSI := class("nocap", storagev1.VolumeBindingWaitForFirstConsumer, "plain.example.com")
	tests := []struct {
		name string
		pod  *v1.Pod
		objs []runtime.Object
		want int64
	}{
		{
			name: "bound volumes count requests against the chosen volumes' sizes",
			pod:  podUsing("c", "d"),
			objs: []runtime.Object{localClass, claim("c", inClass("local"), requesting("5Gi")), claim("d", inClass("local"), requesting("3Gi")),
				volume("pv1", "local", "10Gi"), volume("pv2", "local", "11Gi")},
			want: 62, // 8 of 21Gi: 38% used
		},
		{
			name: "classes are averaged and rounded half away from zero",
			pod:  podUsing("c", "d"),
			objs: []runtime.Object{localClass, wide, claim("c", inClass("local"), requesting("5Gi")), claim("d", inClass("wide"), requesting("1Gi")),
				volume("pv1", "local", "10Gi"), volume("pv2", "wide", "4Gi")},
			want: 63, // 50 and 75
		},
		{
			name: "provisioned claims of one class share its capacity",
			pod:  podUsing("c", "d"),
			objs: []runtime.Object{csiClass, csiDriver, claim("c", inClass("csi"), requesting("5Gi")), claim("d", inClass("csi"), requesting("5Gi")),
				storageCapacity("cap", "csi", "20Gi", "zone-1")},
			want: 50, // 10 of 20Gi, not of 40Gi
		},
		{
			name: "provisioned claims that overflow the capacity together score as full",
			pod:  podUsing("c", "d"),
			objs: []runtime.Object{csiClass, csiDriver, claim("c", inClass("csi"), requesting("6Gi")), claim("d", inClass("csi"), requesting("6Gi")),
				storageCapacity("cap", "csi", "10Gi", "zone-1")},
			want: 0,
		},
		{
			name: "once a volume is bound, provisioned claims are not scored",
			pod:  podUsing("c", "d"),
			objs: []runtime.Object{localClass, csiClass, csiDriver, claim("c", inClass("local"), requesting("5Gi")), volume("pv1", "local", "20Gi"),
				claim("d", inClass("csi"), requesting("9Gi")), storageCapacity("cap", "csi", "10Gi", "zone-1")},
			want: 75,
		},
		{
			name: "provisioned claims without a capacity score 0",
			pod:  podUsing("c"),
			objs: []runtime.Object{plainCSI, claim("c", inClass("nocap"), requesting("5Gi"))},
			want: 0,
		},
		{
			name: "bound claims alone score 0",
			pod:  podUsing("c"),
			objs: []runtime.Object{claim("c", boundTo("pv")), volume("pv", "local", "1Gi")},
			want: 0,
		},
	}
	scorer := volumebinding.NewScorer(defaultShape)
	a := nodeIn("a", "zone-1")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			claims := newClaims(t, tt.pod, tt.objs...)
			var pl volumebinding.Placement
			if got, status := claims.Check(a.name, a.labels, &pl); got != 0 || status != nil {
				t.Fatalf("Check = %v, %v; want a fit", got.Reasons(), status)
			}
			if got := scorer.Score(&pl); got != tt.want {
				t.Errorf("Score = %d, want %d", got, tt.want)
			}
		})
	}
}
