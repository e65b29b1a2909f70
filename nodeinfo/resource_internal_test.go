package nodeinfo

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func containers(requests ...v1.ResourceList) *v1.Pod {
	p := &v1.Pod{}
	for _, r := range requests {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: r}})
	}
	return p
}

func TestPlainRequestsAddUpAsComponentHelpers(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		plain bool // whether the map-free way applies
	}{
		{"a container with cpu and memory", containers(v1.ResourceList{v1.ResourceCPU: q("100m"), v1.ResourceMemory: q("500Mi")}), true},
		{"containers, one requesting nothing, defaults for the missing", containers(v1.ResourceList{v1.ResourceCPU: q("1")}, nil, v1.ResourceList{v1.ResourceEphemeralStorage: q("1Gi")}), true},
		{"a request of zero stays zero, no default", containers(v1.ResourceList{v1.ResourceCPU: q("0"), v1.ResourceMemory: q("0")}), true},
		{"no containers", containers(), true},
		{"a fraction of a millicore is left to component-helpers", containers(v1.ResourceList{v1.ResourceCPU: q("0.0001")}), false},
		{"a fraction of a byte too", containers(v1.ResourceList{v1.ResourceMemory: q("0.5")}), false},
		{"an extended resource", containers(v1.ResourceList{"example.com/gpu": q("1")}), false},
		{"a negative request", containers(v1.ResourceList{v1.ResourceCPU: q("-1")}), false},
		{"init containers", func() *v1.Pod {
			p := containers(v1.ResourceList{v1.ResourceCPU: q("1")})
			p.Spec.InitContainers = []v1.Container{{Name: "i", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("2")}}}}
			return p
		}(), false},
		{"overhead", func() *v1.Pod {
			p := containers(v1.ResourceList{v1.ResourceCPU: q("1")})
			p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: q("250m")}
			return p
		}(), false},
		{"pod-level requests", func() *v1.Pod {
			p := containers(v1.ResourceList{v1.ResourceCPU: q("1")})
			p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("2")}}
			return p
		}(), false},
		{"container statuses, which may resize", func() *v1.Pod {
			p := containers(v1.ResourceList{v1.ResourceCPU: q("1")})
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("2")}}}}
			return p
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, ok := plainRequests(tc.pod); ok != tc.plain {
				t.Errorf("plainRequests applies: %v, want %v", ok, tc.plain)
			}
			gotReq, gotCPU, gotMem := PodRequests(tc.pod)
			wantReq, wantCPU, wantMem := helperRequests(tc.pod)
			if !reflect.DeepEqual(gotReq, wantReq) || gotCPU != wantCPU || gotMem != wantMem {
				t.Errorf("PodRequests = %+v, %d, %d; component-helpers %+v, %d, %d", gotReq, gotCPU, gotMem, wantReq, wantCPU, wantMem)
			}
		})
	}
}

func FuzzPlainRequestsAddUpAsComponentHelpers(f *testing.F) {
	f.Add("100m", "500Mi", "1Gi", "2", "")
	f.Add("0.0001", "1.5", "", "1e3", "0")
	f.Add("9223372036854775807", "1Ei", "-1", "1n", "100u")
	f.Fuzz(func(t *testing.T, cpu1, mem1, eph1, cpu2, mem2 string) {
		list := func(kv ...string) v1.ResourceList {
			l := v1.ResourceList{}
			for i := 0; i < len(kv); i += 2 {
				// Exponents in the millions take apimachinery's decimal
				// arithmetic minutes, either way.
				if len(kv[i+1]) > 5 && strings.ContainsAny(kv[i+1], "eE") {
					continue
				}
				if q, err := resource.ParseQuantity(kv[i+1]); err == nil {
					l[v1.ResourceName(kv[i])] = q
				}
			}
			return l
		}
		pod := containers(list("cpu", cpu1, "memory", mem1, "ephemeral-storage", eph1), list("cpu", cpu2, "memory", mem2))
		gotReq, gotCPU, gotMem := PodRequests(pod)
		wantReq, wantCPU, wantMem := helperRequests(pod)
		if !reflect.DeepEqual(gotReq, wantReq) || gotCPU != wantCPU || gotMem != wantMem {
			t.Errorf("PodRequests = %+v, %d, %d; component-helpers %+v, %d, %d", gotReq, gotCPU, gotMem, wantReq, wantCPU, wantMem)
		}
	})
}
