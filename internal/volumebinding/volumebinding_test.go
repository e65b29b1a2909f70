package volumebinding_test

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/names"
)

type failingClaims struct{}

func (failingClaims) List(labels.Selector) ([]*v1.PersistentVolumeClaim, error) {
	return nil, errors.New("boom")
}

func TestNewClaims(t *testing.T) {
	t.Parallel()
	unset := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "unset"}}
	lost := claim("lost", inClass("local"))
	lost.Status.Phase = v1.ClaimLost
	lost.Spec.VolumeName = "gone"
	deleting := claim("deleting", inClass("local"))
	deleting.DeletionTimestamp = &metav1.Time{}
	owned := claim("p-eph", inClass("local"))
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "uid-p", Controller: new(true)}}
	other := claim("elsewhere", inClass("local"))
	other.Namespace = "other"
	naming := claim("naming", inClass("local"))
	naming.Spec.VolumeName = "pv"
	objs := []runtime.Object{
		localClass, nowClass, unset,
		claim("wait", inClass("local")), claim("bound", boundTo("pv")), claim("orphan", boundTo("missing")),
		claim("now", inClass("now")), claim("classless"), claim("ghost-class", inClass("ghost")),
		claim("unset", inClass("unset")), lost, deleting, other, naming,
		volume("pv", "local", "1Gi"),
	}
	ephemeral := func(pod *v1.Pod) *v1.Pod {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "eph", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}})
		return pod
	}
	unresolvable := func(msg string) *fwk.Status {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg).WithPlugin(names.VolumeBinding)
	}
	emptyDir := podUsing()
	emptyDir.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}

	tests := []struct {
		name      string
		pod       *v1.Pod
		extra     []runtime.Object
		listers   *fwk.Listers
		want      *fwk.Status
		wantClaim bool // a Claims value, rather than nil for "no claims"
	}{
		{name: "a pod without volumes has no claims", pod: podUsing()},
		{name: "a pod with only an emptyDir has no claims", pod: emptyDir},
		{name: "a pod with a waiting claim has claims", pod: podUsing("wait"), wantClaim: true},
		{name: "a pod with a bound claim has claims", pod: podUsing("bound"), wantClaim: true},
		{name: "a claim bound to a missing volume is left to Check", pod: podUsing("orphan"), wantClaim: true},
		{name: "a missing claim is rejected with client-go's message", pod: podUsing("ghost"), want: unresolvable(`persistentvolumeclaim "ghost" not found`)},
		{name: "a claim of another namespace is missing", pod: podUsing("elsewhere"), want: unresolvable(`persistentvolumeclaim "elsewhere" not found`)},
		{name: "a claim without a name is missing", pod: podUsing(""), want: unresolvable(`persistentvolumeclaim "" not found`)},
		{name: "a missing ephemeral claim is waited for", pod: ephemeral(podUsing()), want: unresolvable(`waiting for ephemeral volume controller to create the persistentvolumeclaim "p-eph"`)},
		{name: "an ephemeral claim the pod owns is used", pod: ephemeral(podUsing()), extra: []runtime.Object{owned}, wantClaim: true},
		{name: "an ephemeral claim the pod does not own is rejected", pod: ephemeral(podUsing()), extra: []runtime.Object{claim("p-eph", inClass("local"))}, want: unresolvable("PVC default/p-eph was not created for pod default/p (pod is not owner)")},
		{name: "a lost claim is rejected", pod: podUsing("lost"), want: unresolvable(`persistentvolumeclaim "lost" bound to non-existent persistentvolume "gone"`)},
		{name: "a claim being deleted is rejected", pod: podUsing("deleting"), want: unresolvable(`persistentvolumeclaim "deleting" is being deleted`)},
		{name: "lookups fail in volume order", pod: podUsing("wait", "deleting", "ghost"), want: unresolvable(`persistentvolumeclaim "deleting" is being deleted`)},
		{name: "an unbound claim of an immediate class is rejected", pod: podUsing("wait", "now"), want: unboundImmediate()},
		{name: "an unbound claim without a class binds immediately", pod: podUsing("classless"), want: unboundImmediate()},
		{name: "an unbound claim of a missing class binds immediately", pod: podUsing("ghost-class"), want: unboundImmediate()},
		{name: "a claim naming a volume it is not bound to is unbound and immediate", pod: podUsing("naming"), want: unboundImmediate()},
		{
			name: "a class without binding mode is an error",
			pod:  podUsing("unset"),
			want: fwk.NewStatus(fwk.Error, `VolumeBindingMode not set for StorageClass "unset"`).WithPlugin(names.VolumeBinding),
		},
		{
			name: "a class without binding mode wins over an earlier immediate claim",
			pod:  podUsing("now", "unset"),
			want: fwk.NewStatus(fwk.Error, `VolumeBindingMode not set for StorageClass "unset"`).WithPlugin(names.VolumeBinding),
		},
		{name: "a missing claim wins over an earlier class without binding mode", pod: podUsing("unset", "ghost"), want: unresolvable(`persistentvolumeclaim "ghost" not found`)},
		{name: "no listers means no claims", pod: podUsing("wait"), listers: &fwk.Listers{}, want: unresolvable(`persistentvolumeclaim "wait" not found`)},
		{
			name:    "a failing lister is an error",
			pod:     podUsing("wait"),
			listers: &fwk.Listers{PersistentVolumeClaims: failingClaims{}},
			want:    fwk.NewStatus(fwk.Error, "boom").WithPlugin(names.VolumeBinding),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l fwk.Listers
			if tt.listers != nil {
				l = *tt.listers
			} else {
				l = listers(t, append(slices.Clone(objs), tt.extra...)...)
			}
			got, status := volumebinding.NewClaims(l, tt.pod)
			if !sameStatus(status, tt.want) {
				t.Fatalf("NewClaims status = %v, want %v", status, tt.want)
			}
			if (got != nil) != tt.wantClaim {
				t.Errorf("NewClaims = %v, want claims: %v", got, tt.wantClaim)
			}
		})
	}
}

func unboundImmediate() *fwk.Status {
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, volumebinding.ReasonUnboundImmediate).WithPlugin(names.VolumeBinding)
}

// sameStatus compares code, reasons and plugin.
func sameStatus(a, b *fwk.Status) bool {
	return a.Code() == b.Code() && slices.Equal(a.Reasons(), b.Reasons()) && a.Plugin() == b.Plugin()
}

func TestConflictsReasonsComeInKubeSchedulersOrder(t *testing.T) {
	t.Parallel()
	all := volumebinding.NodeConflict | volumebinding.BindConflict | volumebinding.NotEnoughSpace | volumebinding.PVNotExist
	want := []string{volumebinding.ReasonNodeConflict, volumebinding.ReasonBindConflict, volumebinding.ReasonNotEnoughSpace, volumebinding.ReasonPVNotExist}
	if got := all.Reasons(); !slices.Equal(got, want) {
		t.Errorf("Reasons = %q, want %q", got, want)
	}
	s := (volumebinding.PVNotExist | volumebinding.NotEnoughSpace).Status()
	if s.Code() != fwk.UnschedulableAndUnresolvable || s.Plugin() != names.VolumeBinding ||
		!slices.Equal(s.Reasons(), []string{volumebinding.ReasonNotEnoughSpace, volumebinding.ReasonPVNotExist}) {
		t.Errorf("Status = %v", s)
	}
	if s := volumebinding.Conflicts(0).Status(); s != nil {
		t.Errorf("no conflicts: Status = %v, want nil", s)
	}
}
