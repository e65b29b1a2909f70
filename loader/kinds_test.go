package loader_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/loader"
)

// TestKeptKindsAreThoseNewListersAccepts reads one object of every kind,
// in every version, of the API groups whose objects kubesched reads, and
// checks that the loader keeps as objects exactly those
// fwk.NewListers accepts, so that the two cannot drift apart, and
// as workloads exactly Deployments, DaemonSets, Jobs and
// ResourceClaimTemplates (which ExpandWorkloads reads); and that it
// converts to resource.k8s.io/v1 exactly the older versions the API
// server may serve of the kinds it reads there.
func TestKeptKindsAreThoseNewListersAccepts(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		v1.AddToScheme,
		appsv1.AddToScheme, appsv1beta1.AddToScheme, appsv1beta2.AddToScheme, batchv1.AddToScheme,
		storagev1.AddToScheme, storagev1beta1.AddToScheme, storagev1alpha1.AddToScheme,
		resourcev1.AddToScheme, resourcev1beta2.AddToScheme, resourcev1beta1.AddToScheme, resourcev1alpha3.AddToScheme,
		policyv1.AddToScheme, policyv1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	var (
		input    strings.Builder
		accepted = map[schema.GroupVersionKind]bool{}
	)
	for gvk := range scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") {
			continue // read as Lists
		}
		obj, err := scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fwk.NewListers(obj)
		accepted[gvk] = err == nil
		fmt.Fprintf(&input, "{\"apiVersion\": %q, \"kind\": %q, \"metadata\": {\"name\": \"x\"}}\n", gvk.GroupVersion(), gvk.Kind)
	}
	c, err := loader.Read(strings.NewReader(input.String()), "all kinds")
	if err != nil {
		t.Fatal(err)
	}
	kept := map[schema.GroupVersionKind]bool{}
	for _, o := range c.Objects {
		kept[o.GetObjectKind().GroupVersionKind()] = true
	}
	if _, err := fwk.NewListers(c.Objects...); err != nil {
		t.Error(err)
	}
	workloads := map[schema.GroupVersionKind]bool{}
	for _, o := range c.Workloads {
		workloads[o.GetObjectKind().GroupVersionKind()] = true
	}
	wantWorkloads := map[schema.GroupVersionKind]bool{
		appsv1.SchemeGroupVersion.WithKind("Deployment"):                true,
		appsv1.SchemeGroupVersion.WithKind("DaemonSet"):                 true,
		batchv1.SchemeGroupVersion.WithKind("Job"):                      true,
		resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate"): true,
	}
	// Older versions of templates are read as v1 ones.
	wantTemplates := 3
	if len(workloads) != len(wantWorkloads) || len(c.Workloads) != len(wantWorkloads)-1+wantTemplates {
		t.Errorf("read workloads of kinds %v; want %v", workloads, wantWorkloads)
	}
	converted := map[schema.GroupVersionKind]bool{}
	for _, gv := range []schema.GroupVersion{resourcev1beta1.SchemeGroupVersion, resourcev1beta2.SchemeGroupVersion} {
		for _, kind := range []string{"ResourceClaim", "ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaimTemplate"} {
			if gvk := gv.WithKind(kind); scheme.Recognizes(gvk) {
				converted[gvk] = true
			}
		}
	}
	if len(converted) != 9 {
		t.Errorf("%d kinds to convert, want 9 (v1beta1 has no DeviceTaintRule): %v", len(converted), converted)
	}
	for gvk, ok := range accepted {
		nodeOrPod := gvk == v1.SchemeGroupVersion.WithKind("Node") || gvk == v1.SchemeGroupVersion.WithKind("Pod")
		switch {
		case converted[gvk]:
			v1gvk := resourcev1.SchemeGroupVersion.WithKind(gvk.Kind)
			if c.Skipped[gvk.String()] != 0 || !kept[v1gvk] && !workloads[v1gvk] {
				t.Errorf("%v: skipped %d times, want converted to v1 and kept", gvk, c.Skipped[gvk.String()])
			}
		case kept[gvk] != ok:
			t.Errorf("%v: kept %v, accepted by NewListers %v", gvk, kept[gvk], ok)
		case workloads[gvk] != wantWorkloads[gvk]:
			t.Errorf("%v: a workload %v, want %v", gvk, workloads[gvk], wantWorkloads[gvk])
		case !ok && !nodeOrPod && !wantWorkloads[gvk] && c.Skipped[gvk.String()] != 1:
			t.Errorf("%v: skipped %d times; want once", gvk, c.Skipped[gvk.String()])
		}
	}
	if len(c.Nodes) != 1 || len(c.Pods) != 1 || len(kept) != 17 {
		t.Errorf("read %d nodes, %d pods and %d kinds of objects; want 1, 1 and 17", len(c.Nodes), len(c.Pods), len(kept))
	}
}
