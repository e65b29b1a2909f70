package loader

import (
	"encoding/json"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// older are the older versions of kinds Read keeps that an API server
// may still serve, and templates such as scheduler_perf's are written
// in: Read converts them to the version it keeps, as the API server
// converts what it stores. Other versions (v1alpha3 DeviceTaintRules,
// policy/v1beta1 PodDisruptionBudgets, whose serving ended in 1.25) stay
// skipped.
var older = map[schema.GroupVersion][]runtime.Object{
	resourcev1beta1.SchemeGroupVersion: {
		&resourcev1beta1.ResourceClaim{}, &resourcev1beta1.ResourceSlice{}, &resourcev1beta1.DeviceClass{},
		&resourcev1beta1.ResourceClaimTemplate{},
	},
	resourcev1beta2.SchemeGroupVersion: {
		&resourcev1beta2.ResourceClaim{}, &resourcev1beta2.ResourceSlice{}, &resourcev1beta2.DeviceClass{},
		&resourcev1beta2.DeviceTaintRule{}, &resourcev1beta2.ResourceClaimTemplate{},
	},
}

// convert returns obj in the version Read keeps: obj itself if it is in
// it, else obj converted to resource.k8s.io/v1.
//
// resource.k8s.io/v1beta2 has v1's fields exactly, and v1beta1 has them
// but in three places, where v1 moved them (the API server's conversion
// does the same): a request's fields for an exact count of devices,
// which v1 puts in "exactly" when any of them is set; a device's fields,
// which v1beta1 has in "basic"; and a slice's nodeName and allNodes,
// which v1 leaves unset rather than "" and false. So the rest converts
// field by field through JSON, whose names are the same;
// TestOlderVersionsHaveV1sFields checks that they are, field by field.
func convert(obj runtime.Object) (runtime.Object, error) {
	var out runtime.Object
	var err error
	switch in := obj.(type) {
	case *resourcev1beta2.ResourceClaim:
		out, err = recodeTo(in, &resourceapi.ResourceClaim{})
	case *resourcev1beta2.ResourceSlice:
		out, err = recodeTo(in, &resourceapi.ResourceSlice{})
	case *resourcev1beta2.DeviceClass:
		out, err = recodeTo(in, &resourceapi.DeviceClass{})
	case *resourcev1beta2.DeviceTaintRule:
		out, err = recodeTo(in, &resourceapi.DeviceTaintRule{})
	case *resourcev1beta1.DeviceClass:
		out, err = recodeTo(in, &resourceapi.DeviceClass{})
	case *resourcev1beta1.ResourceClaim:
		out, err = claimFromV1beta1(in)
	case *resourcev1beta1.ResourceSlice:
		out, err = sliceFromV1beta1(in)
	case *resourcev1beta2.ResourceClaimTemplate:
		out, err = recodeTo(in, &resourceapi.ResourceClaimTemplate{})
	case *resourcev1beta1.ResourceClaimTemplate:
		out, err = templateFromV1beta1(in)
	default:
		return obj, nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if err != nil {
		// Not for any input: the fields' types are the same.
		return nil, fmt.Errorf("converting %s to %s: %w", gvk.GroupVersion(), resourceapi.SchemeGroupVersion, err)
	}
	out.GetObjectKind().SetGroupVersionKind(resourceapi.SchemeGroupVersion.WithKind(gvk.Kind))
	return out, nil
}

// recodeTo fills out with in's fields of the same JSON names and returns
// it.
func recodeTo[T any](in any, out *T) (*T, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	return out, nil
}

// claimFromV1beta1 converts a v1beta1 ResourceClaim: each request with
// any field of an exact request set gets them in exactly, whether valid
// or not (validation is the API server's, later); one with none, only
// firstAvailable, has no exactly.
func claimFromV1beta1(in *resourcev1beta1.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	out, err := recodeTo(in, &resourceapi.ResourceClaim{})
	if err != nil {
		return nil, err
	}
	for i := range in.Spec.Devices.Requests {
		r := &in.Spec.Devices.Requests[i]
		if !asksExactly(r) {
			continue
		}
		// The request's other fields, name and firstAvailable, are not
		// an exact request's.
		if out.Spec.Devices.Requests[i].Exactly, err = recodeTo(r, &resourceapi.ExactDeviceRequest{}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// asksExactly says whether a v1beta1 request has any field that v1 has
// in exactly: set, for a list, even when empty.
func asksExactly(r *resourcev1beta1.DeviceRequest) bool {
	return r.DeviceClassName != "" || r.Selectors != nil || r.AllocationMode != "" || r.Count != 0 ||
		r.AdminAccess != nil || r.Tolerations != nil || r.Capacity != nil || r.DerivedAttributes != nil
}

// sliceFromV1beta1 converts a v1beta1 ResourceSlice: its devices' basic
// fields become the device's; nodeName "" and allNodes false, which JSON
// leaves out, become unset.
func sliceFromV1beta1(in *resourcev1beta1.ResourceSlice) (*resourceapi.ResourceSlice, error) {
	out, err := recodeTo(in, &resourceapi.ResourceSlice{})
	if err != nil {
		return nil, err
	}
	for i := range in.Spec.Devices {
		if basic := in.Spec.Devices[i].Basic; basic != nil {
			// Into the device, which has its name already.
			if _, err := recodeTo(basic, &out.Spec.Devices[i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// templateFromV1beta1 converts a template's claim spec as
// claimFromV1beta1 converts a claim's.
func templateFromV1beta1(in *resourcev1beta1.ResourceClaimTemplate) (*resourceapi.ResourceClaimTemplate, error) {
	claim, err := claimFromV1beta1(&resourcev1beta1.ResourceClaim{Spec: in.Spec.Spec})
	if err != nil {
		return nil, err
	}
	out := &resourceapi.ResourceClaimTemplate{ObjectMeta: in.ObjectMeta, Spec: resourceapi.ResourceClaimTemplateSpec{Spec: claim.Spec}}
	in.Spec.ObjectMeta.DeepCopyInto(&out.Spec.ObjectMeta)
	return out, nil
}
