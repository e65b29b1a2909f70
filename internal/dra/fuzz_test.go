package dra

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Seeds for FuzzPreFilterFilter: valid objects of the shapes the plugin
// handles, in the JSON an API server would serve.
var (
	seedClaims = []string{
		`{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":1}}]}}}`,
		`{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","allocationMode":"All"}}]}}}`,
		`{"spec":{"devices":{"requests":[{"name":"gpu","firstAvailable":[{"name":"big","deviceClassName":"gpu","allocationMode":"ExactCount","count":2},{"name":"small","deviceClassName":"gpu","allocationMode":"ExactCount","count":1}]}]}}}`,
		`{"spec":{"devices":{"requests":[{"name":"a","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":1,"selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].model == \"a100\""}}]}},{"name":"b","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":1,"tolerations":[{"key":"broken","operator":"Exists"}]}}],"constraints":[{"requests":["a","b"],"matchAttribute":"gpu.example.com/model"}]}}}`,
		`{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":1,"adminAccess":true}}]}}}`,
		`{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":1}}]}},"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0","bindingConditions":["attached"],"bindingFailureConditions":["failed"]}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},"allocationTimestamp":"2025-01-01T00:00:00Z"},"devices":[{"driver":"gpu.example.com","pool":"n1","device":"gpu-0","conditions":[{"type":"attached","status":"False","reason":"Wait","message":"","lastTransitionTime":"2025-01-01T00:00:00Z"}]}]}}`,
		`{"spec":{"devices":{"requests":[{"name":"mem","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":1,"capacity":{"requests":{"memory":"1Gi"}}}}]}}}`,
	}
	seedSlices = []string{
		`{"spec":{"driver":"gpu.example.com","nodeName":"n1","pool":{"name":"n1","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0","attributes":{"model":{"string":"a100"}}},{"name":"gpu-1","attributes":{"model":{"string":"a100"}}}]}}`,
		`{"spec":{"driver":"gpu.example.com","nodeName":"n1","pool":{"name":"n1","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0","taints":[{"key":"broken","value":"true","effect":"NoSchedule"}],"bindingConditions":["attached"],"bindingFailureConditions":["failed"]}]}}`,
		`{"spec":{"driver":"gpu.example.com","allNodes":true,"pool":{"name":"shared","generation":1,"resourceSliceCount":1},"devices":[{"name":"mem-0","allowMultipleAllocations":true,"capacity":{"memory":{"value":"8Gi","requestPolicy":{"default":"1Gi","validRange":{"min":"1Gi"}}}}}]}}`,
		`{"spec":{"driver":"gpu.example.com","nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]},"pool":{"name":"zone-a","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0","attributes":{"model":{"string":"a100"}},"capacity":{"memory":{"value":"80Gi"}}},{"name":"gpu-1","attributes":{"model":{"string":"a100"}}}]}}`,
	}
	seedClasses = []string{
		`{"spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}]}}`,
		`{"spec":{"selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].healthy"}}]}}`,
		`{"spec":{"selectors":[{"cel":{"expression":"device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"1Gi\")) >= 0"}}],"extendedResourceName":"example.com/gpu"}}`,
		`{"spec":{}}`,
	}
)

// FuzzPreFilterFilter decodes a ResourceClaim, a ResourceSlice and a
// DeviceClass from JSON and runs a pod using that claim through PreFilter,
// Filter on two nodes, Score and Reserve. Whatever the objects, nothing may
// panic nor modify the objects; a node Filter finds feasible must score without error and be
// reservable, with every claim coming back allocated and reserved.
func FuzzPreFilterFilter(f *testing.F) {
	for _, c := range seedClaims {
		for _, s := range seedSlices {
			for _, d := range seedClasses {
				f.Add([]byte(c), []byte(s), []byte(d))
			}
		}
	}
	f.Fuzz(func(t *testing.T, claimJSON, sliceJSON, classJSON []byte) {
		var claim resourceapi.ResourceClaim
		var slice resourceapi.ResourceSlice
		var class resourceapi.DeviceClass
		if json.Unmarshal(claimJSON, &claim) != nil || json.Unmarshal(sliceJSON, &slice) != nil || json.Unmarshal(classJSON, &class) != nil {
			return
		}
		// The pod finds the claim by name; the claim's requests name the
		// class "gpu".
		claim.Name, claim.Namespace, claim.UID = "gpu", "default", "uid-claim"
		slice.Name, class.Name = "slice", "gpu"
		before := []any{claim.DeepCopy(), slice.DeepCopy(), class.DeepCopy()}
		defer func() {
			if !apiequality.Semantic.DeepEqual(before, []any{&claim, &slice, &class}) {
				t.Fatal("the plugin modified the listed objects")
			}
		}()
		l, err := fwk.NewListers(&claim, &slice, &class)
		if err != nil {
			t.Fatal(err)
		}
		pod := podUsing("default", "gpu")
		nodes := []*nodeinfo.NodeInfo{
			nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}}}),
			nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}),
		}
		ctx := context.Background()
		// The seed's allocation time is five minutes before this clock: its
		// binding has not timed out.
		p := New(Args{FilterTimeout: time.Second, Now: func() time.Time { return time.Date(2025, 1, 1, 0, 5, 0, 0, time.UTC) }})
		s, st := p.PreFilter(ctx, fwk.NewCycleState(nil).SetListers(l), pod, feature.Default())
		if st.IsSuccess() != (s != nil) {
			t.Fatalf("PreFilter returned state %v with status %v", s, st)
		}
		if s == nil {
			return
		}
		for _, ni := range nodes {
			if st := p.Filter(ctx, s, pod, ni); !st.IsSuccess() {
				if c := st.Code(); c != fwk.Error && c != fwk.UnschedulableAndUnresolvable {
					t.Fatalf("Filter(%s) = %v, want Error or UnschedulableAndUnresolvable", ni.Name(), st)
				}
				continue
			}
			if _, st := Score(s, ni.Name()); st != nil {
				t.Fatalf("Score(%s) of a feasible node = %v", ni.Name(), st)
			}
			claims, _, st := p.Reserve(s, pod, ni.Name())
			if st != nil || len(claims) != 1 {
				t.Fatalf("Reserve(%s) of a feasible node = %d claims, %v", ni.Name(), len(claims), st)
			}
			if c := claims[0]; c == &claim || c.Status.Allocation == nil || len(c.Status.ReservedFor) == 0 {
				t.Fatalf("Reserve(%s) = %+v, want a copy allocated and reserved", ni.Name(), c)
			}
		}
	})
}
