package filter_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
)

func TestTheOutputAccessorsReadWhatTheirKeysHold(t *testing.T) {
	t.Parallel()
	claim := &resourceapi.ResourceClaim{}
	pv, pvc := &v1.PersistentVolume{}, &v1.PersistentVolumeClaim{}
	ext := &v1.PodExtendedResourceClaimStatus{}
	var r framework.Result
	filter.ClaimsOutput.Set(&r.Outputs, []*resourceapi.ResourceClaim{claim})
	filter.ExtendedResourceClaimStatusOutput.Set(&r.Outputs, ext)
	filter.VolumesOutput.Set(&r.Outputs, []*v1.PersistentVolume{pv})
	filter.ProvisionedClaimsOutput.Set(&r.Outputs, []*v1.PersistentVolumeClaim{pvc})
	var fe framework.FitError
	filter.DeallocateClaimOutput.Set(&fe.Outputs, claim)
	filter.DeleteClaimOutput.Set(&fe.Outputs, claim)
	for _, tc := range []struct {
		name      string
		got, want bool
	}{
		{"Claims reads ClaimsOutput", len(filter.Claims(&r)) == 1 && filter.Claims(&r)[0] == claim, true},
		{"ExtendedResourceClaimStatus reads its output", filter.ExtendedResourceClaimStatus(&r) == ext, true},
		{"Volumes reads VolumesOutput", len(filter.Volumes(&r)) == 1 && filter.Volumes(&r)[0] == pv, true},
		{"ProvisionedClaims reads its output", len(filter.ProvisionedClaims(&r)) == 1 && filter.ProvisionedClaims(&r)[0] == pvc, true},
		{"ClaimToDeallocate reads DeallocateClaimOutput", filter.ClaimToDeallocate(&fe) == claim, true},
		{"ClaimToDelete reads DeleteClaimOutput", filter.ClaimToDelete(&fe) == claim, true},
		{"an empty Result has no claims", filter.Claims(&framework.Result{}) == nil, true},
		{"a nil Result has no claims, volumes or status", filter.Claims(nil) == nil && filter.Volumes(nil) == nil &&
			filter.ProvisionedClaims(nil) == nil && filter.ExtendedResourceClaimStatus(nil) == nil, true},
		{"a nil FitError has no claim to deallocate or delete", filter.ClaimToDeallocate(nil) == nil && filter.ClaimToDelete(nil) == nil, true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v", tc.name, tc.got)
		}
	}
}
