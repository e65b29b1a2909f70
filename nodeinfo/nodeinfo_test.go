package nodeinfo

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func node(name string, images ...v1.ContainerImage) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi"),
				v1.ResourcePods: resource.MustParse("110"), "example.com/gpu": resource.MustParse("2"),
				"unprefixed-unknown": resource.MustParse("5"),
			},
			Images: images,
		},
	}
}

func pod(name, nodeName string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec:       v1.PodSpec{NodeName: nodeName, Containers: containers},
	}
}

func requesting(cpu, mem string) v1.Container {
	c := v1.Container{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

func TestNewAccountsForPods(t *testing.T) {
	t.Parallel()
	always := v1.ContainerRestartPolicyAlways
	withPorts := pod("ports", "n",
		v1.Container{Ports: []v1.ContainerPort{{HostPort: 80, ContainerPort: 80}, {ContainerPort: 8080}}})
	withPorts.Spec.InitContainers = []v1.Container{
		{Name: "sidecar", RestartPolicy: &always, Ports: []v1.ContainerPort{{HostPort: 9000, Protocol: v1.ProtocolUDP, HostIP: "10.0.0.1"}}},
		{Name: "init", Ports: []v1.ContainerPort{{HostPort: 7000}}},
	}
	ni := New(node("n"), pod("a", "n", requesting("500m", "1Gi")), pod("b", "n", requesting("", "")), withPorts)

	if got := ni.allocatable; got.MilliCPU != 4000 || got.AllowedPodNumber != 110 || got.ScalarResources["example.com/gpu"] != 2 {
		t.Errorf("Allocatable = %+v", got)
	}
	if _, ok := ni.allocatable.ScalarResources["unprefixed-unknown"]; ok {
		t.Error("an unprefixed unknown resource was counted as a scalar resource")
	}
	if ni.requested.MilliCPU != 500 || ni.requested.Memory != 1<<30 {
		t.Errorf("Requested = %+v, want 500m and 1Gi", ni.requested)
	}
	// Containers without requests count the defaults (100m, 200Mi) towards the
	// non-zero totals: one for pod b, two for the ports pod (container and sidecar).
	if want := int64(500 + 100 + 2*100); ni.nonZeroRequested.MilliCPU != want {
		t.Errorf("NonZeroRequested.MilliCPU = %d, want %d", ni.nonZeroRequested.MilliCPU, want)
	}
	if want := int64(1<<30 + 3*DefaultMemoryRequest); ni.nonZeroRequested.Memory != want {
		t.Errorf("NonZeroRequested.Memory = %d, want %d", ni.nonZeroRequested.Memory, want)
	}
	if !ni.usedPorts.CheckConflict("", "TCP", 80) || !ni.usedPorts.CheckConflict("10.0.0.1", "UDP", 9000) {
		t.Errorf("UsedPorts = %v, want container and sidecar host ports", ni.usedPorts)
	}
	if ni.usedPorts.CheckConflict("", "TCP", 7000) || ni.usedPorts.Len() != 2 {
		t.Errorf("UsedPorts = %v: ordinary init containers hold no ports", ni.usedPorts)
	}
}

func TestRemovePodUndoesAddPod(t *testing.T) {
	t.Parallel()
	a := pod("a", "n", requesting("1", "1Gi"))
	a.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 80}}
	a.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: "zone"}}}}
	a.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	for _, tc := range []struct {
		name string
		add  func(*NodeInfo)
	}{
		{name: "a pod added with AddPod", add: func(ni *NodeInfo) { ni.AddPod(a) }},
		{name: "a PodInfo made by NewPodInfo", add: func(ni *NodeInfo) { ni.AddPodInfo(NewPodInfo(a)) }},
		{name: "a PodInfo built by hand, which the node reads the pod of", add: func(ni *NodeInfo) {
			pi := NewPodInfo(a)
			ni.AddPodInfo(&PodInfo{Pod: a, Requests: pi.Requests, NonZeroCPU: pi.NonZeroCPU, NonZeroMem: pi.NonZeroMem})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ni := New(node("n"), pod("b", "n", requesting("2", "")))
			before := ni.generation
			tc.add(ni)
			if len(ni.podsWithAffinity) != 1 || len(ni.podsWithRequiredAntiAffinity) != 1 {
				t.Fatalf("affinity lists = %d/%d, want 1/1", len(ni.podsWithAffinity), len(ni.podsWithRequiredAntiAffinity))
			}
			if ni.usedPorts.Len() != 1 || ni.pvcRefCounts["default/data"] != 1 {
				t.Fatalf("after add: ports %v, claims %v, want port 80 and claim data", ni.usedPorts, ni.pvcRefCounts)
			}
			if err := ni.RemovePod(a.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			if len(ni.pods) != 1 || ni.requested.MilliCPU != 2000 || ni.requested.Memory != 0 || ni.usedPorts.Len() != 0 || len(ni.pvcRefCounts) != 0 {
				t.Errorf("after remove: %d pods, requested %+v, ports %v, claims %v", len(ni.pods), ni.requested, ni.usedPorts, ni.pvcRefCounts)
			}
			if len(ni.podsWithAffinity) != 0 || len(ni.podsWithRequiredAntiAffinity) != 0 {
				t.Error("affinity lists still hold the removed pod")
			}
			if ni.generation <= before {
				t.Error("Generation did not increase")
			}
			if err := ni.RemovePod(a); err == nil {
				t.Error("removing a pod twice succeeded")
			}
			if err := ni.RemovePod(nil); err == nil {
				t.Error("removing a nil pod succeeded")
			}
		})
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	img := func(size int64, names ...string) v1.ContainerImage {
		return v1.ContainerImage{Names: names, SizeBytes: size}
	}
	nodes := []*v1.Node{
		node("n1", img(100, "nginx:1.25", "docker.io/library/nginx:1.25"), img(5, "busybox:latest")),
		node("n2", img(100, "nginx:1.25")),
		node("n3"),
	}
	pods := []*v1.Pod{pod("a", "n2"), pod("b", "elsewhere"), pod("c", ""), nil, pod("d", "n2")}
	infos := Build(nodes, pods)
	if len(infos) != 3 || infos[0].Node().Name != "n1" || infos[2].Node().Name != "n3" {
		t.Fatalf("Build returned %d infos out of order", len(infos))
	}
	if len(infos[1].pods) != 2 || len(infos[0].pods) != 0 {
		t.Errorf("pods per node = %d/%d/%d, want 0/2/0", len(infos[0].pods), len(infos[1].pods), len(infos[2].pods))
	}
	if got := infos[0].imageStates["nginx:1.25"]; got == nil || got.NumNodes != 2 || got.Size != 100 {
		t.Errorf("nginx:1.25 on n1 = %+v, want size 100 on 2 nodes", got)
	}
	if got := infos[0].imageStates["docker.io/library/nginx:1.25"]; got == nil || got.NumNodes != 1 {
		t.Errorf("docker.io/library/nginx:1.25 = %+v, want 1 node", got)
	}
	if len(infos[2].imageStates) != 0 {
		t.Errorf("n3 images = %v, want none", infos[2].imageStates)
	}
}

func TestBuildKeepsNilNodesForTheFrameworkToReject(t *testing.T) {
	t.Parallel()
	infos := Build([]*v1.Node{nil, node("n")}, []*v1.Pod{pod("a", "n")})
	if len(infos) != 2 || infos[0].Node() != nil || len(infos[1].pods) != 1 {
		t.Fatalf("Build with a nil node = %+v", infos)
	}
}

func TestPodRequests(t *testing.T) {
	t.Parallel()
	always := v1.ContainerRestartPolicyAlways
	tests := []struct {
		name                    string
		pod                     *v1.Pod
		wantCPU, wantNonZeroCPU int64
		wantMem, wantNonZeroMem int64
	}{
		{"containers add up", pod("p", "", requesting("100m", "1Mi"), requesting("200m", "1Mi")), 300, 300, 2 << 20, 2 << 20},
		{"missing requests count as defaults only in the non-zero totals", pod("p", "", requesting("", "")), 0, 100, 0, DefaultMemoryRequest},
		{"a larger init container raises the request", func() *v1.Pod {
			p := pod("p", "", requesting("100m", ""))
			p.Spec.InitContainers = []v1.Container{requesting("1", "")}
			return p
		}(), 1000, 1000, 0, DefaultMemoryRequest},
		{"a sidecar runs alongside the containers", func() *v1.Pod {
			p := pod("p", "", requesting("100m", ""))
			sc := requesting("50m", "")
			sc.RestartPolicy = &always
			p.Spec.InitContainers = []v1.Container{sc}
			return p
		}(), 150, 150, 0, 2 * DefaultMemoryRequest},
		{"overhead is added", func() *v1.Pod {
			p := pod("p", "", requesting("100m", "1Mi"))
			p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m")}
			return p
		}(), 110, 110, 1 << 20, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, cpu, mem := PodRequests(tc.pod)
			if req.MilliCPU != tc.wantCPU || cpu != tc.wantNonZeroCPU || req.Memory != tc.wantMem || mem != tc.wantNonZeroMem {
				t.Errorf("got cpu %d (non-zero %d), mem %d (non-zero %d); want %d (%d), %d (%d)",
					req.MilliCPU, cpu, req.Memory, mem, tc.wantCPU, tc.wantNonZeroCPU, tc.wantMem, tc.wantNonZeroMem)
			}
		})
	}
}

func TestHostPortConflicts(t *testing.T) {
	t.Parallel()
	used := HostPortInfo{}
	used.Add("10.0.0.1", "TCP", 80)
	used.Add("", "", 443)
	tests := []struct {
		name     string
		ip, prot string
		port     int32
		want     bool
	}{
		{"the same ip, protocol and port conflict", "10.0.0.1", "TCP", 80, true},
		{"another ip does not conflict", "10.0.0.2", "TCP", 80, false},
		{"0.0.0.0 conflicts with any ip", "0.0.0.0", "TCP", 80, true},
		{"an empty ip means 0.0.0.0", "", "TCP", 80, true},
		{"another protocol does not conflict", "10.0.0.1", "UDP", 80, false},
		{"a port bound on 0.0.0.0 conflicts with every ip", "10.9.9.9", "TCP", 443, true},
		{"an empty protocol means TCP", "10.9.9.9", "", 443, true},
		{"port zero is no host port", "10.0.0.1", "TCP", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := used.CheckConflict(tc.ip, tc.prot, tc.port); got != tc.want {
				t.Errorf("CheckConflict(%q, %q, %d) = %v, want %v", tc.ip, tc.prot, tc.port, got, tc.want)
			}
		})
	}
}

func TestIsScalarResourceName(t *testing.T) {
	t.Parallel()
	for name, want := range map[v1.ResourceName]bool{
		"example.com/gpu":         true,
		"hugepages-2Mi":           true,
		"kubernetes.io/something": true,
		"attachable-volumes-aws":  true,
		"cpu":                     false,
		"unprefixed":              false,
		"requests.example.com/x":  false,
	} {
		if got := IsScalarResourceName(name); got != want {
			t.Errorf("IsScalarResourceName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPVCRefCountsFollowPods(t *testing.T) {
	t.Parallel()
	withClaim := func(name, claim string) *v1.Pod {
		p := pod(name, "n")
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		return p
	}
	a, b := withClaim("a", "shared"), withClaim("b", "shared")
	ni := New(node("n"), a, b, withClaim("c", "own"), pod("d", "n"))
	if got := ni.pvcRefCounts; got["default/shared"] != 2 || got["default/own"] != 1 || len(got) != 2 {
		t.Fatalf("PVCRefCounts = %v, want shared 2 and own 1", got)
	}
	if err := ni.RemovePod(a); err != nil {
		t.Fatal(err)
	}
	if err := ni.RemovePod(b); err != nil {
		t.Fatal(err)
	}
	if _, ok := ni.pvcRefCounts["default/shared"]; ok || ni.pvcRefCounts["default/own"] != 1 {
		t.Errorf("after removing both users: %v, want only own", ni.pvcRefCounts)
	}
	c := ni.Clone()
	c.pvcRefCounts["default/own"]++
	if ni.pvcRefCounts["default/own"] != 1 {
		t.Error("Clone shares PVCRefCounts with the original")
	}
}

func TestAffinityTermsOfAPodWithoutAffinityAllocateNothing(t *testing.T) {
	plain := NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"}})
	if allocs := testing.AllocsPerRun(100, func() { _ = plain.AffinityTerms() }); allocs != 0 {
		t.Errorf("AffinityTerms allocates %.0f times for a pod without affinity, want 0", allocs)
	}
	if terms := plain.AffinityTerms(); len(terms.RequiredAffinity)+len(terms.RequiredAntiAffinity) != 0 {
		t.Errorf("AffinityTerms = %+v, want none", terms)
	}
	withAnti := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "anti"}, Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{}}},
	}}}}
	// A PodInfo made by hand, without NewPodInfo, is read on the spot.
	for name, pi := range map[string]*PodInfo{"NewPodInfo": NewPodInfo(withAnti), "by hand": {Pod: withAnti}} {
		if got := len(pi.AffinityTerms().RequiredAntiAffinity); got != 1 {
			t.Errorf("%s: %d required anti-affinity terms, want 1", name, got)
		}
	}
}
