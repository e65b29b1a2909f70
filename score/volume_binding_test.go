package score_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

// volumeCluster has class "local" (pre-created volumes only), a claim "c"
// of it asking for 5Gi, and volumes of 10Gi on node a, 20Gi on node b.
func volumeCluster(t *testing.T) (fwk.Listers, []*nodeinfo.NodeInfo) {
	t.Helper()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	class := "local"
	onHost := func(name, host, size string) *v1.PersistentVolume {
		return &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PersistentVolumeSpec{
				StorageClassName: class,
				Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
				}}}},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}
	}
	l, err := fwk.NewListers(
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, VolumeBindingMode: &wffc, Provisioner: "kubernetes.io/no-provisioner"},
		&v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"},
			Spec: v1.PersistentVolumeClaimSpec{
				StorageClassName: &class,
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}},
			},
		},
		onHost("pv-a", "a", "10Gi"), onHost("pv-b", "b", "20Gi"),
	)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*nodeinfo.NodeInfo
	for _, name := range []string{"a", "b", "c"} {
		nodes = append(nodes, nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}}}))
	}
	return l, nodes
}

func podWithClaim(claims ...string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
	for _, c := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c},
		}})
	}
	return pod
}

func TestVolumeBindingScoresNothingWithoutStorageCapacityScoring(t *testing.T) {
	t.Parallel()
	l, nodes := volumeCluster(t)
	v136 := &feature.Features{}
	configured, err := score.NewVolumeBinding(&configv1.VolumeBindingArgs{})
	if err != nil {
		t.Fatal(err)
	}
	configured.Features = v136
	for name, pl := range map[string]*score.VolumeBinding{"the zero value with v1.36's features": {Features: v136}, "the default arguments with v1.36's features": configured} {
		state := fwk.NewCycleState(nodes).SetListers(l)
		if got := pl.PreScore(context.Background(), state, podWithClaim("c"), nodes); !got.IsSkip() {
			t.Errorf("%s: PreScore = %v, want Skip", name, got)
		}
		if got, status := pl.Score(context.Background(), state, podWithClaim("c"), nodes[0]); got != 0 || status != nil {
			t.Errorf("%s: Score = %d, %v; want 0", name, got, status)
		}
	}
}

func TestNewVolumeBindingChecksTheShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		shape []configv1.UtilizationShapePoint
		want  string
	}{
		{name: "an unsorted shape is refused", shape: []configv1.UtilizationShapePoint{{Utilization: 50, Score: 1}, {Utilization: 50, Score: 2}},
			want: "shape[1].utilization: Invalid value: 50: values must be sorted in increasing order"},
		{name: "a utilization above 100 is refused", shape: []configv1.UtilizationShapePoint{{Utilization: 101, Score: 1}},
			want: "shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"},
		{name: "a negative score is refused", shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: -1}},
			want: "shape[0].score: Invalid value: -1: not in valid range [0, 10]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := score.NewVolumeBinding(&configv1.VolumeBindingArgs{Shape: tc.shape}); err == nil || err.Error() != tc.want {
				t.Errorf("NewVolumeBinding = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestVolumeBindingCapacityScoring(t *testing.T) {
	t.Parallel()
	l, nodes := volumeCluster(t)
	packing, err := score.NewVolumeBinding(&configv1.VolumeBindingArgs{
		Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spreading := &score.VolumeBinding{}
	tests := []struct {
		name      string
		pl        *score.VolumeBinding
		pod       *v1.Pod
		preFilter bool // run filter.VolumeBinding's PreFilter first
		want      []int64
	}{
		// 5Gi of 10Gi on a, of 20Gi on b; c has no volume and fails the filter.
		{name: "the default shape favours the roomier volume", pl: spreading, pod: podWithClaim("c"), want: []int64{50, 75, 0}},
		{name: "nil args are the default shape", pl: mustVolumeBinding(t, nil), pod: podWithClaim("c"), want: []int64{50, 75, 0}},
		{name: "a rising shape favours the fuller volume", pl: packing, pod: podWithClaim("c"), want: []int64{50, 25, 0}},
		{name: "the filter's PreFilter result is reused", pl: spreading, pod: podWithClaim("c"), preFilter: true, want: []int64{50, 75, 0}},
		{name: "a pod without claims scores 0 everywhere", pl: spreading, pod: podWithClaim(), want: []int64{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			state := fwk.NewCycleState(nodes).SetListers(l)
			if tt.preFilter {
				if _, status := (&filter.VolumeBinding{}).PreFilter(ctx, state, tt.pod, nodes); status != nil {
					t.Fatalf("PreFilter = %v", status)
				}
			}
			if !tt.pl.PodOnlyPreScore(state, tt.pod) {
				t.Error("PodOnlyPreScore = false, want true")
			}
			if status := tt.pl.PreScore(ctx, state, tt.pod, nodes); status != nil {
				t.Fatalf("PreScore = %v, want nil", status)
			}
			for i, ni := range nodes {
				got, status := tt.pl.Score(ctx, state, tt.pod, ni)
				if status != nil || got != tt.want[i] {
					t.Errorf("Score(%s) = %d, %v; want %d", ni.Name(), got, status, tt.want[i])
				}
			}
			// ScoreBatch answers for a pod without claims alone, as Score
			// would.
			batch := []int64{-1, -1, -1}
			withoutClaims := len(tt.pod.Spec.Volumes) == 0
			if answered := tt.pl.ScoreBatch(state, 0, batch); answered != withoutClaims || answered && !slices.Equal(batch, tt.want) {
				t.Errorf("ScoreBatch = %t with %v; want %t with %v", answered, batch, withoutClaims, tt.want)
			}
		})
	}
}

func TestVolumeBindingScoreReportsBrokenClaims(t *testing.T) {
	t.Parallel()
	pl, err := score.NewVolumeBinding(nil)
	if err != nil {
		t.Fatal(err)
	}
	node := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	if _, status := pl.Score(context.Background(), nil, podWithClaim("ghost"), node); status.Code() != fwk.UnschedulableAndUnresolvable {
		t.Errorf("Score(missing claim) status = %v, want UnschedulableAndUnresolvable", status)
	}
	if _, status := pl.Score(context.Background(), nil, podWithClaim(), nodeinfo.New(nil)); status.Code() != fwk.Error {
		t.Errorf("Score(nil node) status = %v, want Error", status)
	}
}

func mustVolumeBinding(t *testing.T, args *configv1.VolumeBindingArgs) *score.VolumeBinding {
	t.Helper()
	pl, err := score.NewVolumeBinding(args)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}
