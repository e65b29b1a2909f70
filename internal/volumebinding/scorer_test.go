package volumebinding_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/noderesources"
	"github.com/kubesched/kubesched/internal/volumebinding"
)

func TestArgsValidate(t *testing.T) {
	t.Parallel()
	type pt = noderesources.UtilizationShapePoint
	tests := []struct {
		name    string
		args    volumebinding.Args
		wantErr string // substring; empty means valid
	}{
		{name: "the zero value is valid and scores nothing", args: volumebinding.Args{}},
		{name: "scoring without a shape uses the default", args: volumebinding.Args{StorageCapacityScoring: true}},
		{name: "scoring with a sorted shape in range is valid", args: volumebinding.Args{StorageCapacityScoring: true, Shape: []pt{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}}},
		{
			name:    "a shape without scoring is refused",
			args:    volumebinding.Args{Shape: []pt{{Utilization: 0, Score: 10}}},
			wantErr: "invalid VolumeBinding args: shape: Invalid value: ",
		},
		{
			name:    "an empty shape without scoring is refused, as a configured one",
			args:    volumebinding.Args{Shape: []pt{}},
			wantErr: "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
		},
		{
			name:    "an unsorted shape is refused",
			args:    volumebinding.Args{StorageCapacityScoring: true, Shape: []pt{{Utilization: 50, Score: 1}, {Utilization: 50, Score: 2}}},
			wantErr: "shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
		},
		{
			name:    "a utilization above 100 is refused",
			args:    volumebinding.Args{StorageCapacityScoring: true, Shape: []pt{{Utilization: 101, Score: 1}}},
			wantErr: "shape[0].utilization: Invalid value: 101: not in valid range [0, 100]",
		},
		{
			name:    "a negative score is refused",
			args:    volumebinding.Args{StorageCapacityScoring: true, Shape: []pt{{Utilization: 0, Score: -1}}},
			wantErr: "shape[0].score: Invalid value: -1: not in valid range [0, 10]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := volumebinding.NewScorer(tt.args)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("NewScorer = %v", err)
				}
				if (s != nil) != tt.args.StorageCapacityScoring {
					t.Errorf("NewScorer = %v, want a scorer only with StorageCapacityScoring", s)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewScorer error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

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
	scorer, err := volumebinding.NewScorer(volumebinding.Args{StorageCapacityScoring: true})
	if err != nil {
		t.Fatal(err)
	}
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
