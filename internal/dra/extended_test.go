package dra

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

const extGPU = v1.ResourceName("example.com/gpu")

// backing returns a class named name providing resource, created at the
// given second.
func backing(name string, resource v1.ResourceName, second int64) *resourceapi.DeviceClass {
	c := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(second, 0)}}
	if resource != "" {
		r := string(resource)
		c.Spec.ExtendedResourceName = &r
	}
	c.Spec.Selectors = gpuClass.Spec.Selectors
	return c
}

func className(c *resourceapi.DeviceClass) string {
	if c == nil {
		return "<none>"
	}
	return c.Name
}

func TestResolver(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		classes []*resourceapi.DeviceClass
		want    map[v1.ResourceName]string
	}{{
		name:    "a class maps its extended resource and its implicit name",
		classes: []*resourceapi.DeviceClass{backing("gpu", extGPU, 1)},
		want:    map[v1.ResourceName]string{extGPU: "gpu", "deviceclass.resource.kubernetes.io/gpu": "gpu", "example.com/other": "<none>"},
	}, {
		name:    "a class without an extended resource maps only its implicit name",
		classes: []*resourceapi.DeviceClass{backing("gpu", "", 1)},
		want:    map[v1.ResourceName]string{extGPU: "<none>", "deviceclass.resource.kubernetes.io/gpu": "gpu"},
	}, {
		name:    "a newer class naming the same resource takes it over, and both keep their implicit names",
		classes: []*resourceapi.DeviceClass{backing("b", extGPU, 2), backing("a", extGPU, 1)},
		want:    map[v1.ResourceName]string{extGPU: "b", "deviceclass.resource.kubernetes.io/a": "a", "deviceclass.resource.kubernetes.io/b": "b"},
	}, {
		name:    "an older class sorting after the newer one loses even its implicit name",
		classes: []*resourceapi.DeviceClass{backing("a", extGPU, 2), backing("b", extGPU, 1)},
		want:    map[v1.ResourceName]string{extGPU: "a", "deviceclass.resource.kubernetes.io/a": "a", "deviceclass.resource.kubernetes.io/b": "<none>"},
	}, {
		name:    "classes created at the same time: the name sorting first wins",
		classes: []*resourceapi.DeviceClass{backing("b", extGPU, 1), backing("a", extGPU, 1)},
		want:    map[v1.ResourceName]string{extGPU: "a", "deviceclass.resource.kubernetes.io/a": "a", "deviceclass.resource.kubernetes.io/b": "<none>"},
	}, {
		name:    "no classes resolve nothing",
		classes: nil,
		want:    map[v1.ResourceName]string{extGPU: "<none>"},
	}, {
		name:    "a nil class in the list is skipped",
		classes: []*resourceapi.DeviceClass{nil, backing("gpu", extGPU, 1)},
		want:    map[v1.ResourceName]string{extGPU: "gpu"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := NewResolver(tc.classes)
			for name, want := range tc.want {
				if got := className(r.Class(name)); got != want {
					t.Errorf("class of %s = %s, want %s", name, got, want)
				}
			}
		})
	}
	var nilResolver *Resolver
	if nilResolver.Class(extGPU) != nil {
		t.Error("a nil resolver resolved a name")
	}
}

func container(name string, requests map[v1.ResourceName]string, sidecar bool) v1.Container {
	c := v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: v1.ResourceList{}}}
	for n, q := range requests {
		c.Resources.Requests[n] = resource.MustParse(q)
	}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	return c
}

func exact(name, class string, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count,
	}}
}

func mapping(container, request string) v1.ContainerExtendedResourceRequest {
	return v1.ContainerExtendedResourceRequest{ContainerName: container, ResourceName: string(extGPU), RequestName: request}
}

func TestRequestsAndMappings(t *testing.T) {
	t.Parallel()
	gpu := map[v1.ResourceName]string{extGPU: "2"}
	tests := []struct {
		name         string
		init, main   []v1.Container
		wantRequests []resourceapi.DeviceRequest
		wantMappings []v1.ContainerExtendedResourceRequest
	}{{
		name:         "one container asks for its count",
		main:         []v1.Container{container("app", gpu, false)},
		wantRequests: []resourceapi.DeviceRequest{exact("container-0-request-0", "gpu", 2)},
		wantMappings: []v1.ContainerExtendedResourceRequest{mapping("app", "container-0-request-0")},
	}, {
		name:         "the request is numbered by the resource's place among the container's sorted requests",
		main:         []v1.Container{container("app", map[v1.ResourceName]string{extGPU: "1", "cpu": "1", "memory": "1Gi"}, false)},
		wantRequests: []resourceapi.DeviceRequest{exact("container-0-request-1", "gpu", 1)},
		wantMappings: []v1.ContainerExtendedResourceRequest{mapping("app", "container-0-request-1")},
	}, {
		name: "an init container uses the later containers' devices and asks for the rest",
		init: []v1.Container{container("init", map[v1.ResourceName]string{extGPU: "3"}, false)},
		main: []v1.Container{container("app", map[v1.ResourceName]string{extGPU: "1"}, false)},
		wantRequests: []resourceapi.DeviceRequest{
			exact("container-0-request-0", "gpu", 2),
			exact("container-1-request-0", "gpu", 1),
		},
		wantMappings: []v1.ContainerExtendedResourceRequest{
			mapping("app", "container-1-request-0"),
			mapping("init", "container-1-request-0"),
			mapping("init", "container-0-request-0"),
		},
	}, {
		name: "an init container covered by later containers asks for nothing",
		init: []v1.Container{container("init", map[v1.ResourceName]string{extGPU: "1"}, false)},
		main: []v1.Container{container("app", gpu, false)},
		wantRequests: []resourceapi.DeviceRequest{
			exact("container-1-request-0", "gpu", 2),
		},
		wantMappings: []v1.ContainerExtendedResourceRequest{
			mapping("app", "container-1-request-0"),
			mapping("init", "container-1-request-0"),
		},
	}, {
		name: "of several init containers only the largest request is kept and all map to it",
		init: []v1.Container{
			container("first", gpu, false),
			container("second", map[v1.ResourceName]string{extGPU: "3"}, false),
		},
		wantRequests: []resourceapi.DeviceRequest{exact("container-1-request-0", "gpu", 3)},
		wantMappings: []v1.ContainerExtendedResourceRequest{
			mapping("first", "container-1-request-0"),
			mapping("second", "container-1-request-0"),
		},
	}, {
		name:         "equal init-container requests keep the first",
		init:         []v1.Container{container("first", gpu, false), container("second", gpu, false)},
		wantRequests: []resourceapi.DeviceRequest{exact("container-0-request-0", "gpu", 2)},
		wantMappings: []v1.ContainerExtendedResourceRequest{
			mapping("first", "container-0-request-0"),
			mapping("second", "container-0-request-0"),
		},
	}, {
		name: "a sidecar is long-lived, but an init container after it does not reuse it",
		init: []v1.Container{
			container("sidecar", map[v1.ResourceName]string{extGPU: "1"}, true),
			container("init", gpu, false),
		},
		wantRequests: []resourceapi.DeviceRequest{
			exact("container-0-request-0", "gpu", 1),
			exact("container-1-request-0", "gpu", 2),
		},
		wantMappings: []v1.ContainerExtendedResourceRequest{
			mapping("sidecar", "container-0-request-0"),
			mapping("init", "container-1-request-0"),
		},
	}, {
		name: "requests sort by name as strings, container 10 before container 2",
		init: func() []v1.Container {
			var cs []v1.Container
			for i := range 10 {
				cs = append(cs, container(strings.Repeat("s", i+1), map[v1.ResourceName]string{extGPU: "1"}, true))
			}
			return cs
		}(),
		main: []v1.Container{container("app", map[v1.ResourceName]string{extGPU: "1"}, false)},
		wantRequests: []resourceapi.DeviceRequest{
			exact("container-0-request-0", "gpu", 1), exact("container-1-request-0", "gpu", 1),
			exact("container-10-request-0", "gpu", 1), exact("container-2-request-0", "gpu", 1),
			exact("container-3-request-0", "gpu", 1), exact("container-4-request-0", "gpu", 1),
			exact("container-5-request-0", "gpu", 1), exact("container-6-request-0", "gpu", 1),
			exact("container-7-request-0", "gpu", 1), exact("container-8-request-0", "gpu", 1),
			exact("container-9-request-0", "gpu", 1),
		},
	}, {
		name: "a fraction of a device asks for nothing",
		main: []v1.Container{container("app", map[v1.ResourceName]string{extGPU: "500m"}, false)},
	}}
	r := NewResolver([]*resourceapi.DeviceClass{backing("gpu", extGPU, 1)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: tc.init, Containers: tc.main}}
			reqs, mappings := requestsAndMappings(pod, map[v1.ResourceName]int64{extGPU: 1, "example.com/unbacked": 1}, r)
			if !reflect.DeepEqual(reqs, tc.wantRequests) {
				t.Errorf("requests = %+v, want %+v", reqs, tc.wantRequests)
			}
			if (tc.wantMappings != nil || len(tc.init) < 10) && !reflect.DeepEqual(mappings, tc.wantMappings) {
				t.Errorf("mappings = %+v, want %+v", mappings, tc.wantMappings)
			}
		})
	}
}

// gpuNode is a node with the given example.com/gpu allocatable (none when
// negative) and ResourceSlice devices.
func gpuNode(name string, allocatable int64) *nodeinfo.NodeInfo {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
	}}}
	if allocatable >= 0 {
		n.Status.Allocatable[extGPU] = *resource.NewQuantity(allocatable, resource.DecimalSI)
	}
	return nodeinfo.New(n)
}

func podAsking(gpus string, claims ...string) *v1.Pod {
	p := podUsing("default", claims...)
	p.Spec.Containers = []v1.Container{container("app", map[v1.ResourceName]string{extGPU: gpus}, false)}
	return p
}

func TestExtendedResourcesFilterAndReserve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Unix(1000, 0)
	class := backing("gpu", extGPU, 1)
	stale := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{
		Name: "p-extended-resources-abcde", Namespace: "default",
		Annotations:     map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "Pod", Name: "p", UID: "uid-p", Controller: new(true)}},
	}, Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exact("container-0-request-0", "gpu", 1)}}}}
	strangersClaim := stale.DeepCopy()
	strangersClaim.OwnerReferences[0].UID = "uid-other"
	noController := stale.DeepCopy()
	noController.OwnerReferences[0].Controller = nil
	tests := []struct {
		name    string
		objects []runtime.Object
		pod     *v1.Pod
		node    *nodeinfo.NodeInfo
		code    fwk.Code
		message string
		// explain is what Explain says of a rejected node.
		explain []string
		// claims Reserve returns and the devices of the last one.
		claims  int
		devices int
	}{{
		name:    "a node without the resource allocates it from its devices",
		objects: []runtime.Object{class, gpuSlice("n1", "gpu-0", "gpu-1")},
		pod:     podAsking("2"), node: gpuNode("n1", -1),
		claims: 1, devices: 2,
	}, {
		name:    "a node with too few devices cannot allocate",
		objects: []runtime.Object{class, gpuSlice("n1", "gpu-0")},
		pod:     podAsking("2"), node: gpuNode("n1", -1),
		code: fwk.UnschedulableAndUnresolvable, message: ReasonCannotAllocate,
		explain: []string{"the claim for the pod's extended resources (container-0-request-0: 2 of gpu) cannot be allocated on this node"},
	}, {
		name:    "a node offering the resource itself leaves it to NodeResourcesFit",
		objects: []runtime.Object{class},
		pod:     podAsking("2"), node: gpuNode("n1", 1),
	}, {
		name:    "a node offering zero of it still gets it from devices",
		objects: []runtime.Object{class, gpuSlice("n1", "gpu-0")},
		pod:     podAsking("1"), node: gpuNode("n1", 0),
		claims: 1, devices: 1,
	}, {
		name:    "a claim left from an earlier attempt turns every node down",
		objects: []runtime.Object{class, gpuSlice("n1", "gpu-0"), stale},
		pod:     podAsking("1"), node: gpuNode("n1", -1),
		code: fwk.UnschedulableAndUnresolvable, message: ReasonStaleExtendedClaim,
		explain: []string{"claim default/p-extended-resources-abcde, made for the pod's extended resources in an earlier attempt, still holds its requests: kube-scheduler deletes it and tries again"},
	}, {
		name:    "another pod's extended-resource claim is not this pod's",
		objects: []runtime.Object{class, gpuSlice("n1", "gpu-0"), strangersClaim},
		pod:     podAsking("1"), node: gpuNode("n1", -1),
		claims: 1, devices: 1,
	}, {
		name:    "an owner reference without controller set is not the pod's, and does not panic",
		objects: []runtime.Object{class, gpuSlice("n1", "gpu-0"), noController},
		pod:     podAsking("1"), node: gpuNode("n1", -1),
		claims: 1, devices: 1,
	}, {
		name:    "with a claim of its own, the extended-resource claim comes last",
		objects: []runtime.Object{class, gpuClass, gpuSlice("n1", "gpu-0", "gpu-1"), gpuClaim("gpu", "default")},
		pod:     podAsking("1", "gpu"), node: gpuNode("n1", -1),
		claims: 2, devices: 1,
	}, {
		name:    "with a claim of its own on a node offering the resource, no extended claim is written",
		objects: []runtime.Object{class, gpuClass, gpuSlice("n1", "gpu-0"), gpuClaim("gpu", "default")},
		pod:     podAsking("1", "gpu"), node: gpuNode("n1", 4),
		claims: 1, devices: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := New(Args{Now: func() time.Time { return now }})
			s, st := p.PreFilter(ctx, cycle(listers(t, tc.objects...)), tc.pod, feature.Default())
			if st != nil {
				t.Fatalf("PreFilter = %v", st)
			}
			got := p.Filter(ctx, s, tc.pod, tc.node)
			checkStatus(t, "Filter", got, tc.code, tc.message)
			if explained := p.Explain(ctx, s, tc.pod, tc.node); !slices.Equal(explained, tc.explain) {
				t.Errorf("Explain = %q, want %q", explained, tc.explain)
			}
			if got != nil {
				return
			}
			claims, ext, st := p.Reserve(s, tc.pod, tc.node.Name())
			if st != nil {
				t.Fatalf("Reserve = %v", st)
			}
			if len(claims) != tc.claims {
				t.Fatalf("Reserve returned %d claims, want %d", len(claims), tc.claims)
			}
			if tc.claims == 0 {
				if ext != nil {
					t.Errorf("no claim, but an extended-resource claim status %+v", ext)
				}
				return
			}
			last := claims[len(claims)-1]
			if n := len(last.Status.Allocation.Devices.Results); n != tc.devices {
				t.Errorf("last claim holds %d devices, want %d", n, tc.devices)
			}
			if !slices.Contains(last.Finalizers, resourceapi.Finalizer) || last.Status.ReservedFor[0].Name != "p" {
				t.Errorf("last claim %+v lacks the finalizer or the pod in reservedFor", last)
			}
			if last.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
				if ext != nil {
					t.Errorf("no extended-resource claim, but a status for it: %+v", ext)
				}
				return
			}
			if last.GenerateName != "p-extended-resources-" || !strings.HasPrefix(last.Name, "p-extended-resources-") || len(last.Name) != len("p-extended-resources-")+5 || last.UID != "" {
				t.Errorf("extended-resource claim named %q (generateName %q, UID %q), want a generated name and no UID", last.Name, last.GenerateName, last.UID)
			}
			want := &v1.PodExtendedResourceClaimStatus{ResourceClaimName: last.Name, RequestMappings: []v1.ContainerExtendedResourceRequest{mapping("app", "container-0-request-0")}}
			if !reflect.DeepEqual(ext, want) {
				t.Errorf("extended-resource claim status = %+v, want %+v", ext, want)
			}
		})
	}
}

func TestExtendedResourcesPreFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	class := backing("gpu", extGPU, 1)
	tests := []struct {
		name    string
		l       fwk.Listers
		pod     *v1.Pod
		code    fwk.Code
		message string
	}{{
		name: "a pod asking for a resource no class provides is skipped",
		l:    listers(t, class), pod: func() *v1.Pod {
			p := podAsking("1")
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{"example.com/fpga": resource.MustParse("1")}
			return p
		}(),
		code: fwk.Skip,
	}, {
		name: "a pod asking for zero of a provided resource is skipped",
		l:    listers(t, class), pod: podAsking("0"),
		code: fwk.Skip,
	}, {
		name: "a pod asking for a provided resource is not skipped",
		l:    listers(t, class), pod: podAsking("1"),
	}, {
		name: "a pod asking by the implicit class name is not skipped",
		l:    listers(t, class), pod: func() *v1.Pod {
			p := podAsking("1")
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{"deviceclass.resource.kubernetes.io/gpu": resource.MustParse("1")}
			return p
		}(),
	}, {
		name: "failing to list classes is an error",
		l:    fwk.Listers{DeviceClasses: failingClasses{}}, pod: podAsking("1"),
		code: fwk.Error, message: "classes unavailable",
	}, {
		name: "failing to list claims is an error",
		l:    fwk.Listers{DeviceClasses: listers(t, class).DeviceClasses, ResourceClaims: failingClaims{listErr: errors.New("claims unavailable")}}, pod: podAsking("1"),
		code: fwk.Error, message: "listing ResourceClaims: claims unavailable",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, st := New(Args{}).PreFilter(ctx, cycle(tc.l), tc.pod, feature.Default())
			checkStatus(t, "PreFilter", st, tc.code, tc.message)
		})
	}
}

func TestResolverForIsBuiltOncePerCycle(t *testing.T) {
	t.Parallel()
	state := cycle(listers(t, backing("gpu", extGPU, 1)))
	first, err := ResolverFor(state)
	if err != nil {
		t.Fatal(err)
	}
	second, err := ResolverFor(state)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("the second plugin asking got another resolver")
	}
	if got := className(first.Class(extGPU)); got != "gpu" {
		t.Errorf("class of %s = %s, want gpu", extGPU, got)
	}
	r, err := ResolverFor(nil)
	if err != nil || r.Class(extGPU) != nil {
		t.Errorf("ResolverFor(nil) = %v, %v; want one resolving nothing", r, err)
	}
}

func TestGeneratedNameIsCutLikeTheAPIServers(t *testing.T) {
	t.Parallel()
	long := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 60), Namespace: "ns", UID: "u"}}
	name := generatedName(long)
	if len(name) != 63 || !strings.HasPrefix(name, strings.Repeat("a", 58)) {
		t.Errorf("generated name %q, want 58 characters of the pod's name and 5 more", name)
	}
	if again := generatedName(long); again != name {
		t.Errorf("the same pod got %q, then %q", name, again)
	}
	other := long.DeepCopy()
	other.UID = "v"
	if generatedName(other) == name {
		t.Error("another pod got the same name")
	}
}
