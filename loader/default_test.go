package loader_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/loader"
)

// readYAML reads a cluster from YAML, failing the test on error. Each
// line that begins with a flow mapping begins a document.
func readYAML(t testing.TB, input string) *loader.Cluster {
	t.Helper()
	input = strings.ReplaceAll("\n"+input, "\n{", "\n--- {")
	c, err := loader.Read(strings.NewReader(input), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// counts are a report's counts as "default: n Kind", for comparing.
func counts(r loader.DefaultReport) []string {
	var s []string
	for _, c := range r.Counts {
		s = append(s, fmt.Sprintf("%s: %d %s", c.Default, c.Count, c.Kind))
	}
	return s
}

// A pod written to have no defaults but the one under test: it names
// its scheduler and tolerates every taint.
const bare = "spec: {schedulerName: default-scheduler, tolerations: [{operator: Exists}]"

func TestDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		namespace string
		input     string
		want      []string // the report's counts
		check     func(t *testing.T, c *loader.Cluster)
	}{
		{
			name: "A pod with only limits gets them as requests, in its init containers too.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}, ` + bare + `,
  initContainers: [{name: i, resources: {limits: {cpu: "1"}}}],
  containers: [{name: c, resources: {limits: {cpu: "8", memory: 64Gi}}}]}}`,
			want: []string{"requests from limits: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				p := c.Pods[0]
				if got := p.Spec.Containers[0].Resources.Requests; got.Cpu().String() != "8" || got.Memory().String() != "64Gi" {
					t.Errorf("container requests %v", got)
				}
				if got := p.Spec.InitContainers[0].Resources.Requests; got.Cpu().String() != "1" {
					t.Errorf("init container requests %v", got)
				}
			},
		},
		{
			name: "A request given is kept; only resources not requested are copied from limits.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}, ` + bare + `,
  containers: [{name: c, resources: {requests: {cpu: 500m}, limits: {cpu: "2", memory: 1Gi}}}]}}`,
			want: []string{"requests from limits: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				if got := c.Pods[0].Spec.Containers[0].Resources.Requests; got.Cpu().String() != "500m" || got.Memory().String() != "1Gi" {
					t.Errorf("requests %v", got)
				}
			},
		},
		{
			name:  "A pod without a namespace is in the default namespace.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: web}, ` + bare + `, containers: [{name: c}]}}`,
			want:  []string{"namespace default: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				if _, ok := c.Pod("default", "web"); !ok {
					t.Error("no pod default/web")
				}
			},
		},
		{
			name:      "The namespace of the options is given instead when there is one.",
			namespace: "team-a",
			input:     `{apiVersion: v1, kind: Pod, metadata: {name: web}, ` + bare + `, containers: [{name: c}]}}`,
			want:      []string{"namespace team-a: 1 Pod"},
		},
		{
			name: "Namespaced objects of every kind get a namespace; cluster-scoped ones do not.",
			input: `
{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data}, spec: {volumeMode: Block, storageClassName: ""}}
{apiVersion: v1, kind: Service, metadata: {name: web}}
{apiVersion: v1, kind: ReplicationController, metadata: {name: rc}, spec: {selector: {app: rc}}}
{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs}}
{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}}
{apiVersion: storage.k8s.io/v1, kind: CSIStorageCapacity, metadata: {name: cap}}
{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: gpu}}
{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: web}}
{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}}
{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent}}
{apiVersion: batch/v1, kind: Job, metadata: {name: report}}
{apiVersion: v1, kind: PersistentVolume, metadata: {name: pv}, spec: {volumeMode: Block, claimRef: {name: data}}}
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: fast}, volumeBindingMode: WaitForFirstConsumer}
{apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}}
`,
			want: []string{
				"namespace default: 1 PersistentVolumeClaim", "namespace default: 1 Service",
				"namespace default: 1 ReplicationController", "namespace default: 1 ReplicaSet",
				"namespace default: 1 StatefulSet", "namespace default: 1 CSIStorageCapacity",
				"namespace default: 1 ResourceClaim", "namespace default: 1 PodDisruptionBudget",
				"namespace default: 1 Deployment", "namespace default: 1 DaemonSet", "namespace default: 1 Job",
			},
			check: func(t *testing.T, c *loader.Cluster) {
				for _, o := range slices.Concat(c.Objects, c.Workloads) {
					m := o.(metav1.Object)
					kind := o.GetObjectKind().GroupVersionKind().Kind
					clusterScoped := kind == "PersistentVolume" || kind == "StorageClass" || kind == "Namespace" || kind == "DeviceClass"
					if (m.GetNamespace() == "") != clusterScoped {
						t.Errorf("%s %s: namespace %q", kind, m.GetName(), m.GetNamespace())
					}
				}
			},
		},
		{
			name: "Objects with a generateName but no name are named, as scheduler_perf's templates are.",
			input: `
{apiVersion: v1, kind: Node, metadata: {generateName: scheduler-perf-}, status: {allocatable: {cpu: "4"}}}
{apiVersion: v1, kind: Node, metadata: {generateName: scheduler-perf-}, status: {allocatable: {cpu: "4"}}}
{apiVersion: v1, kind: Pod, metadata: {generateName: pod-, namespace: default}, ` + bare + `, containers: [{name: c}]}}
{apiVersion: v1, kind: Pod, metadata: {name: named, generateName: pod-, namespace: default}, ` + bare + `, containers: [{name: c}]}}
`,
			want: []string{"name from generateName: 2 Node", "name from generateName: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				a, b, p := c.Nodes[0].Name, c.Nodes[1].Name, c.Pods[0].Name
				if len(a) != len("scheduler-perf-")+5 || !strings.HasPrefix(a, "scheduler-perf-") || a == b || len(p) != len("pod-")+5 || c.Pods[1].Name != "named" {
					t.Errorf("named %q, %q, %q and %q", a, b, p, c.Pods[1].Name)
				}
			},
		},
		{
			name:  "A pod that names no scheduler names default-scheduler.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}, spec: {tolerations: [{operator: Exists}], containers: [{name: c}]}}`,
			want:  []string{"schedulerName default-scheduler: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				if got := c.Pods[0].Spec.SchedulerName; got != v1.DefaultSchedulerName {
					t.Errorf("schedulerName %q", got)
				}
			},
		},
		{
			name: "Ports without a protocol are TCP; a pod on the host's network binds its container ports on the host.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: dns, namespace: default}, ` + bare + `, hostNetwork: true,
  containers: [{name: c, ports: [{containerPort: 53, protocol: UDP}, {containerPort: 9153}, {containerPort: 80, hostPort: 8080}]}]}}`,
			want: []string{"host ports of the host network: 1 Pod", "port protocol TCP: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				got := c.Pods[0].Spec.Containers[0].Ports
				want := []v1.ContainerPort{
					{ContainerPort: 53, HostPort: 53, Protocol: v1.ProtocolUDP},
					{ContainerPort: 9153, HostPort: 9153, Protocol: v1.ProtocolTCP},
					{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP},
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("ports %+v, want %+v", got, want)
				}
			},
		},
		{
			name: "A pod of a system PriorityClass gets its priority; one of another class keeps none.",
			input: `
{apiVersion: v1, kind: Pod, metadata: {name: proxy, namespace: kube-system}, ` + bare + `, priorityClassName: system-node-critical, containers: [{name: c}]}}
{apiVersion: v1, kind: Pod, metadata: {name: dns, namespace: kube-system}, ` + bare + `, priorityClassName: system-cluster-critical, containers: [{name: c}]}}
{apiVersion: v1, kind: Pod, metadata: {name: batch, namespace: default}, ` + bare + `, priorityClassName: low, containers: [{name: c}]}}
`,
			want: []string{"priority of system PriorityClasses: 2 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				var got []any
				for _, p := range c.Pods {
					if p.Spec.Priority == nil {
						got = append(got, nil)
					} else {
						got = append(got, *p.Spec.Priority)
					}
				}
				if want := []any{int32(2000001000), int32(2000000000), nil}; !reflect.DeepEqual(got, want) {
					t.Errorf("priorities %v, want %v", got, want)
				}
			},
		},
		{
			name: "A pod tolerates not-ready and unreachable nodes for five minutes, unless it tolerates them already.",
			input: `
{apiVersion: v1, kind: Pod, metadata: {name: a, namespace: default}, spec: {schedulerName: s, containers: [{name: c}]}}
{apiVersion: v1, kind: Pod, metadata: {name: b, namespace: default}, spec: {schedulerName: s, containers: [{name: c}],
  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 10}]}}
{apiVersion: v1, kind: Pod, metadata: {name: c, namespace: default}, spec: {schedulerName: s, containers: [{name: c}], tolerations: [{operator: Exists}]}}
`,
			want: []string{"tolerations of not-ready and unreachable nodes: 2 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				keys := func(p *v1.Pod) []string {
					var s []string
					for _, t := range p.Spec.Tolerations {
						s = append(s, fmt.Sprintf("%s=%d", t.Key, *ptrOr(t.TolerationSeconds, -1)))
					}
					return s
				}
				want := [][]string{
					{"node.kubernetes.io/not-ready=300", "node.kubernetes.io/unreachable=300"},
					{"node.kubernetes.io/not-ready=10", "node.kubernetes.io/unreachable=300"},
					{"=-1"},
				}
				for i, p := range c.Pods {
					if got := keys(p); !slices.Equal(got, want[i]) {
						t.Errorf("pod %s tolerates %v, want %v", p.Name, got, want[i])
					}
				}
			},
		},
		{
			name: "Pod affinity matchLabelKeys and mismatchLabelKeys are merged into the labelSelector, once.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default, labels: {app: web, rev: "7"}}, ` + bare + `, containers: [{name: c}],
  affinity: {
    podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
      {labelSelector: {matchLabels: {app: web}}, topologyKey: zone, matchLabelKeys: [rev, missing]}]},
    podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [
      {weight: 1, podAffinityTerm: {labelSelector: {matchExpressions: [{key: rev, operator: NotIn, values: ["7"]}]}, topologyKey: host, mismatchLabelKeys: [rev]}}]}}}}`,
			want: []string{"pod affinity matchLabelKeys in labelSelector: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				a := c.Pods[0].Spec.Affinity
				got := a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions
				want := []metav1.LabelSelectorRequirement{{Key: "rev", Operator: metav1.LabelSelectorOpIn, Values: []string{"7"}}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("affinity expressions %v, want %v", got, want)
				}
				if got := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchExpressions; len(got) != 1 {
					t.Errorf("anti-affinity expressions %v, want the one already there", got)
				}
			},
		},
		{
			name: "A pod with pod-level limits gets pod-level requests from them and from its containers' requests.",
			input: `{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}, ` + bare + `,
  resources: {limits: {cpu: "4", memory: 8Gi, hugepages-2Mi: 4Mi}},
  containers: [{name: a, resources: {requests: {cpu: "1"}}}, {name: b, resources: {requests: {cpu: 500m}, limits: {hugepages-1Gi: 2Gi}}}]}}`,
			want: []string{"requests from limits: 1 Pod", "pod-level requests: 1 Pod"},
			check: func(t *testing.T, c *loader.Cluster) {
				r := c.Pods[0].Spec.Resources
				want := v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("1500m"),
					v1.ResourceMemory: resource.MustParse("8Gi"),
					"hugepages-2Mi":   resource.MustParse("4Mi"),
					"hugepages-1Gi":   resource.MustParse("2Gi"),
				}
				if len(r.Requests) != len(want) {
					t.Fatalf("pod-level requests %v, want %v", r.Requests, want)
				}
				for name, q := range want {
					if got := r.Requests[name]; got.Cmp(q) != 0 {
						t.Errorf("pod-level request of %s %s, want %s", name, &got, &q)
					}
				}
				if got := r.Limits["hugepages-1Gi"]; got.String() != "2Gi" {
					t.Errorf("pod-level limit of hugepages-1Gi %s, want the containers' 2Gi", &got)
				}
			},
		},
		{
			name:  "A node with only capacity gets it as allocatable.",
			input: `{apiVersion: v1, kind: Node, metadata: {name: a}, status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}}`,
			want:  []string{"allocatable from capacity: 1 Node"},
			check: func(t *testing.T, c *loader.Cluster) {
				if got := c.Nodes[0].Status.Allocatable; got.Cpu().String() != "2" || got.Pods().String() != "110" {
					t.Errorf("allocatable %v", got)
				}
			},
		},
		{
			name: "Claims get volumeMode Filesystem and the default StorageClass, the newest of two; a claim of the class \"\" keeps it.",
			input: `
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: old, creationTimestamp: "2024-01-01T00:00:00Z", annotations: {storageclass.kubernetes.io/is-default-class: "true"}}, volumeBindingMode: Immediate}
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: new, creationTimestamp: "2025-01-01T00:00:00Z", annotations: {storageclass.beta.kubernetes.io/is-default-class: "true"}}, volumeBindingMode: Immediate}
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: other, creationTimestamp: "2026-01-01T00:00:00Z"}, volumeBindingMode: Immediate}
{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: a, namespace: default}}
{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: b, namespace: default}, spec: {storageClassName: "", volumeMode: Block}}
`,
			want: []string{"volumeMode Filesystem: 1 PersistentVolumeClaim", "the default StorageClass: 1 PersistentVolumeClaim"},
			check: func(t *testing.T, c *loader.Cluster) {
				a, b := c.Objects[3].(*v1.PersistentVolumeClaim), c.Objects[4].(*v1.PersistentVolumeClaim)
				if *a.Spec.StorageClassName != "new" || *a.Spec.VolumeMode != v1.PersistentVolumeFilesystem {
					t.Errorf("claim a: class %q, mode %q", *a.Spec.StorageClassName, *a.Spec.VolumeMode)
				}
				if *b.Spec.StorageClassName != "" {
					t.Errorf("claim b: class %q", *b.Spec.StorageClassName)
				}
			},
		},
		{
			name: "A volume gets volumeMode Filesystem and, unbound and without a phase, phase Available.",
			input: `
{apiVersion: v1, kind: PersistentVolume, metadata: {name: free}}
{apiVersion: v1, kind: PersistentVolume, metadata: {name: taken}, spec: {claimRef: {namespace: default, name: data}}}
`,
			want: []string{"volumeMode Filesystem: 2 PersistentVolume", "phase Available, as the PV controller sets: 1 PersistentVolume"},
			check: func(t *testing.T, c *loader.Cluster) {
				free, taken := c.Objects[0].(*v1.PersistentVolume), c.Objects[1].(*v1.PersistentVolume)
				if free.Status.Phase != v1.VolumeAvailable || taken.Status.Phase != "" {
					t.Errorf("phases %q and %q", free.Status.Phase, taken.Status.Phase)
				}
			},
		},
		{
			name:  "A StorageClass without a binding mode binds immediately.",
			input: `{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: standard}, provisioner: x}`,
			want:  []string{"volumeBindingMode Immediate: 1 StorageClass"},
			check: func(t *testing.T, c *loader.Cluster) {
				if m := c.Objects[0].(*storagev1.StorageClass).VolumeBindingMode; m == nil || *m != storagev1.VolumeBindingImmediate {
					t.Errorf("binding mode %v", m)
				}
			},
		},
		{
			name: "A claim's device requests without allocationMode ask for exactly one device, first-available ones too, and tolerations' operator is Equal.",
			input: `{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: gpu, namespace: default}, spec: {devices: {requests: [
  {name: a, exactly: {deviceClassName: gpu, tolerations: [{key: k, value: v}]}},
  {name: b, exactly: {deviceClassName: gpu, allocationMode: All}},
  {name: c, exactly: {deviceClassName: gpu, count: 2}},
  {name: d, firstAvailable: [{name: big, deviceClassName: gpu}, {name: small, deviceClassName: gpu, allocationMode: ExactCount, count: 3}]}]}}}`,
			want: []string{"allocationMode ExactCount: 1 ResourceClaim", "device count 1: 1 ResourceClaim", "toleration operator Equal: 1 ResourceClaim"},
			check: func(t *testing.T, c *loader.Cluster) {
				r := c.Objects[0].(*resourceapi.ResourceClaim).Spec.Devices.Requests
				type req struct {
					mode  resourceapi.DeviceAllocationMode
					count int64
				}
				got := []req{
					{r[0].Exactly.AllocationMode, r[0].Exactly.Count}, {r[1].Exactly.AllocationMode, r[1].Exactly.Count},
					{r[2].Exactly.AllocationMode, r[2].Exactly.Count},
					{r[3].FirstAvailable[0].AllocationMode, r[3].FirstAvailable[0].Count}, {r[3].FirstAvailable[1].AllocationMode, r[3].FirstAvailable[1].Count},
				}
				want := []req{{"ExactCount", 1}, {"All", 0}, {"ExactCount", 2}, {"ExactCount", 1}, {"ExactCount", 3}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("requests %v, want %v", got, want)
				}
				if op := r[0].Exactly.Tolerations[0].Operator; op != resourceapi.DeviceTolerationOpEqual {
					t.Errorf("toleration operator %q", op)
				}
			},
		},
		{
			name:  "A ReplicationController without a selector selects its template's labels.",
			input: `{apiVersion: v1, kind: ReplicationController, metadata: {name: rc, namespace: default}, spec: {template: {metadata: {labels: {app: rc}}}}}`,
			want:  []string{"selector from template labels: 1 ReplicationController"},
			check: func(t *testing.T, c *loader.Cluster) {
				if got := c.Objects[0].(*v1.ReplicationController).Spec.Selector; got["app"] != "rc" {
					t.Errorf("selector %v", got)
				}
			},
		},
		{
			name: "Objects read from an API server, which have a resourceVersion, are left alone.",
			input: `
{apiVersion: v1, kind: Pod, metadata: {name: web, resourceVersion: "7"}, spec: {containers: [{name: c, resources: {limits: {cpu: "8"}}}]}}
{apiVersion: v1, kind: Node, metadata: {name: a, resourceVersion: "8"}, status: {capacity: {cpu: "2"}}}
{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, resourceVersion: "9"}}
`,
			check: func(t *testing.T, c *loader.Cluster) {
				if c.Pods[0].Spec.Containers[0].Resources.Requests != nil || c.Pods[0].Namespace != "" || c.Nodes[0].Status.Allocatable != nil {
					t.Error("a served object was defaulted")
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := readYAML(t, tc.input)
			r := c.Default(loader.DefaultOptions{Namespace: tc.namespace})
			if got := counts(r); !slices.Equal(got, tc.want) {
				t.Errorf("report %q, want %q", got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
			before := snapshot(t, c)
			if again := c.Default(loader.DefaultOptions{Namespace: tc.namespace}); again.Objects != 0 || snapshot(t, c) != before {
				t.Errorf("defaulting again changed %d objects: %s", again.Objects, again)
			}
		})
	}
}

func ptrOr[T any](p *T, or T) *T {
	if p == nil {
		return &or
	}
	return p
}

// snapshot is c as JSON, to compare byte for byte.
func snapshot(t testing.TB, c *loader.Cluster) string {
	t.Helper()
	data, err := json.Marshal([]any{c.Nodes, c.Pods, c.Objects, c.Workloads})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestDefaultReportSaysWhatWasSetInOneLine(t *testing.T) {
	t.Parallel()
	c := readYAML(t, `
{apiVersion: v1, kind: Pod, metadata: {name: web}, `+bare+`, containers: [{name: c, resources: {limits: {cpu: "8"}}}]}}
{apiVersion: v1, kind: Pod, metadata: {name: db}, `+bare+`, containers: [{name: c}]}}
{apiVersion: v1, kind: Node, metadata: {name: a}, status: {capacity: {cpu: "2"}}}
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: a}}
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: b}}
`)
	const want = "defaulted 5 objects the API server would have: namespace default (2 pods), requests from limits (1 pod), allocatable from capacity (1 node), volumeBindingMode Immediate (2 StorageClasses)"
	if got := c.Default(loader.DefaultOptions{}).String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := c.Default(loader.DefaultOptions{}).String(); got != "" {
		t.Errorf("defaulting again says %q, want nothing", got)
	}
}

func TestDefaultLeavesADumpOfALiveClusterUntouched(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"testdata/kubectl-get.yaml", "testdata/kubectl-get.json"} {
		c, err := loader.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, c)
		if r := c.Default(loader.DefaultOptions{Namespace: "elsewhere"}); r.Objects != 0 {
			t.Errorf("%s: defaulted %s", file, r)
		}
		r, err := c.ExpandWorkloads()
		if err != nil || len(r.Workloads) != 0 {
			t.Errorf("%s: expanded %s, %v", file, r, err)
		}
		if snapshot(t, c) != before {
			t.Errorf("%s: changed", file)
		}
	}
}

func TestDefaultCountsEveryObjectOnce(t *testing.T) {
	t.Parallel()
	c := &loader.Cluster{
		Pods: []*v1.Pod{{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
		Objects: []runtime.Object{
			&appsv1.ReplicaSet{},
			&v1.PersistentVolumeClaim{},
		},
	}
	r := c.Default(loader.DefaultOptions{})
	if r.Objects != 3 {
		t.Errorf("defaulted %d objects, want 3: %s", r.Objects, r)
	}
}
