package volumebinding

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBindVolume(t *testing.T) {
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "uid-data", ResourceVersion: "7"}}
	full := &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "ns", Name: "data", UID: "uid-data", ResourceVersion: "7"}
	pv := func(ref *v1.ObjectReference, annotations map[string]string) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Annotations: annotations}, Spec: v1.PersistentVolumeSpec{ClaimRef: ref}}
	}
	tests := []struct {
		name        string
		pv          *v1.PersistentVolume
		wantRef     *v1.ObjectReference
		wantByCtrl  bool
		wantChanged bool
	}{
		{"a free volume is bound and marked as bound by the controller", pv(nil, nil), full, true, true},
		{"a volume pre-bound by name gets the claim's UID, unmarked", pv(&v1.ObjectReference{Namespace: "ns", Name: "data"}, nil), full, false, true},
		{"a volume bound to the claim already is left as it is", pv(full.DeepCopy(), map[string]string{annBoundByController: "yes"}), full, true, false},
		{"a volume pre-bound with the claim's UID is unchanged", pv(&v1.ObjectReference{Namespace: "ns", Name: "data", UID: "uid-data"}, nil),
			&v1.ObjectReference{Namespace: "ns", Name: "data", UID: "uid-data"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pv.DeepCopy()
			got, changed := bindVolume(tt.pv, claim)
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if *got.Spec.ClaimRef != *tt.wantRef {
				t.Errorf("claimRef = %+v, want %+v", got.Spec.ClaimRef, tt.wantRef)
			}
			if _, ok := got.Annotations[annBoundByController]; ok != tt.wantByCtrl {
				t.Errorf("bound-by-controller annotation present = %v, want %v", ok, tt.wantByCtrl)
			}
			if tt.pv.Spec.ClaimRef != nil && *tt.pv.Spec.ClaimRef != *before.Spec.ClaimRef || len(tt.pv.Annotations) != len(before.Annotations) {
				t.Error("the volume given was modified")
			}
		})
	}
}
