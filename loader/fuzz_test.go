package loader_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/loader"
)

// FuzzRead reads arbitrary input: a cluster of objects, none nil, or an
// error, never a panic or both; and the same read one byte at a time.
// It starts from, among others, Lists with YAML anchors across items
// (in readCases) and objects of older versions Read converts.
func FuzzRead(f *testing.F) {
	for _, file := range []string{"testdata/kubectl-get.yaml", "testdata/kubectl-get.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range readCases {
		f.Add([]byte(tc.input))
	}
	for _, tc := range errorCases {
		f.Add([]byte(tc.input))
	}
	for _, tc := range invalidCases {
		f.Add([]byte(tc.input))
	}
	for _, tc := range conversionCases {
		f.Add([]byte(tc.older))
		// In a List, whose items are read one at a time.
		f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimPrefix(tc.older, "--- "), "\n", "\n  ")))
	}
	for _, d := range dumpFormats {
		var b bytes.Buffer
		if err := d.write(&b, 3, 2); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := loader.Read(bytes.NewReader(data), "fuzz")
		switch {
		case err != nil && c != nil:
			t.Fatalf("a cluster and an error: %v", err)
		case err != nil:
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
		default:
			check(t, c)
		}
		c2, err2 := loader.Read(iotest.OneByteReader(bytes.NewReader(data)), "fuzz")
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() || !reflect.DeepEqual(c, c2) {
			t.Fatalf("read at once: %v; one byte at a time: %v", err, err2)
		}
	})
}

// check checks that what c holds is objects, without managed fields, and
// counts of skipped objects.
func check(t *testing.T, c *loader.Cluster) {
	t.Helper()
	if c.Skipped == nil {
		t.Fatal("Skipped is nil")
	}
	for kind, n := range c.Skipped {
		if n <= 0 || kind == "" {
			t.Fatalf("skipped %q %d times", kind, n)
		}
	}
	var objs []metav1.Object
	for _, n := range c.Nodes {
		objs = append(objs, n)
	}
	for _, p := range c.Pods {
		objs = append(objs, p)
	}
	for _, o := range c.Objects {
		m, _ := o.(metav1.Object)
		objs = append(objs, m)
	}
	for i, o := range objs {
		if reflect.ValueOf(o).IsNil() {
			t.Fatalf("object %d is nil", i)
		}
		if o.GetManagedFields() != nil {
			t.Fatalf("object %d has managed fields", i)
		}
	}
	for _, o := range c.Objects {
		if gvk := o.GetObjectKind().GroupVersionKind(); gvk.Group == resourcev1.GroupName {
			decodesAsV1(t, o)
		}
	}
	c.Bound()
	c.Pending()
}

// decodesAsV1 checks that o, of resource.k8s.io, is in v1 and reads
// back as itself: what conversion makes is an object of v1.
func decodesAsV1(t *testing.T, o runtime.Object) {
	t.Helper()
	if gvk := o.GetObjectKind().GroupVersionKind(); gvk.Version != resourcev1.SchemeGroupVersion.Version {
		t.Fatalf("kept %v, want it in v1", gvk)
	}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loader.Read(bytes.NewReader(data), "again")
	if err != nil {
		t.Fatalf("%s does not read back: %v", data, err)
	}
	if len(again.Objects) != 1 {
		t.Fatalf("%s reads back as %d objects", data, len(again.Objects))
	}
	if back, err := json.Marshal(again.Objects[0]); err != nil || !bytes.Equal(back, data) {
		t.Fatalf("%s reads back as %s (%v)", data, back, err)
	}
}

// FuzzDefault defaults what Read reads of arbitrary input: never a
// panic, and defaulting again changes nothing; then checks it, changing
// nothing, and passing no object without a name.
func FuzzDefault(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := loader.Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		first := c.Default(loader.DefaultOptions{})
		if (first.Objects == 0) != (first.String() == "") || first.Objects > len(c.Nodes)+len(c.Pods)+len(c.Objects)+len(c.Workloads) {
			t.Fatalf("report of %d objects: %q", first.Objects, first)
		}
		before := snapshot(t, c)
		if again := c.Default(loader.DefaultOptions{}); again.Objects != 0 || snapshot(t, c) != before {
			t.Fatalf("defaulting again: %s", again)
		}
		err = c.Check()
		if snapshot(t, c) != before {
			t.Fatalf("checking changed the cluster: %v", err)
		}
		for _, o := range slices.Concat(c.Objects, c.Workloads) {
			if err == nil && o.(metav1.Object).GetName() == "" {
				t.Fatalf("checked, with a %T without a name", o)
			}
		}
	})
}

// FuzzExpandWorkloads expands the workloads of arbitrary input, once
// defaulted: never a panic; an error changes nothing; expanding again
// creates nothing, and what was created lacks no default.
func FuzzExpandWorkloads(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := loader.Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if large(c) {
			return // slow to expand, to no purpose: the limit has its own test
		}
		c.Default(loader.DefaultOptions{})
		before := snapshot(t, c)
		r, err := c.ExpandWorkloads()
		if err != nil {
			if len(r.Workloads) != 0 || snapshot(t, c) != before {
				t.Fatalf("an error, %v, and a change", err)
			}
			return
		}
		if r.Pods() > loader.MaxExpandedPods {
			t.Fatalf("created %d pods", r.Pods())
		}
		check(t, c)
		after := snapshot(t, c)
		if again, err := c.ExpandWorkloads(); err != nil || len(again.Workloads) != 0 || len(again.ResourceClaims) != 0 || snapshot(t, c) != after {
			t.Fatalf("expanding again: %s, %v", again, err)
		}
		if d := c.Default(loader.DefaultOptions{}); d.Objects != 0 {
			t.Fatalf("created without defaults: %s", d)
		}
	})
}

// large says whether c has a workload of more than a thousand replicas.
func large(c *loader.Cluster) bool {
	over := func(n *int32) bool { return n != nil && *n > 1000 }
	for _, o := range slices.Concat(c.Objects, c.Workloads) {
		switch o := o.(type) {
		case *appsv1.Deployment:
			if over(o.Spec.Replicas) {
				return true
			}
		case *appsv1.ReplicaSet:
			if over(o.Spec.Replicas) {
				return true
			}
		case *appsv1.StatefulSet:
			if over(o.Spec.Replicas) {
				return true
			}
		case *v1.ReplicationController:
			if over(o.Spec.Replicas) {
				return true
			}
		case *batchv1.Job:
			if over(o.Spec.Parallelism) {
				return true
			}
		}
	}
	return len(c.Nodes) > 1000
}

// workloadSeeds are workloads and objects without defaults to start
// fuzzing from.
var workloadSeeds = []string{
	webDeployment,
	gpuTemplate + "---" + claimingPod("train", "one-gpu"),
	`{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {replicas: 2, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}, volumeClaimTemplates: [{metadata: {name: data}}]}}`,
	"apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {hostNetwork: true, containers: [{name: c, ports: [{containerPort: 80}]}]}}}\n",
	"apiVersion: batch/v1\nkind: Job\nmetadata: {name: report}\nspec: {parallelism: 3, completions: 5, completionMode: Indexed, template: {spec: {containers: [{name: c}]}}}\n",
	"apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {replicas: -1}\n",
	// A node without a name has its DaemonSet pod all the same.
	"apiVersion: v1\nkind: Node\n---\napiVersion: apps/v1\nkind: DaemonSet",
	// Objects named by generateName, as scheduler_perf's templates are.
	"--- {apiVersion: v1, kind: Node, metadata: {generateName: n-}}\n--- {apiVersion: v1, kind: Node, metadata: {generateName: n-}}\n--- {apiVersion: v1, kind: Pod, metadata: {generateName: p-}}\n",
	// Objects with most defaults to set.
	`--- {apiVersion: v1, kind: Pod, metadata: {name: web, labels: {app: web, rev: "7"}}, spec: {hostNetwork: true,
  containers: [{name: c, ports: [{containerPort: 3}], resources: {limits: {cpu: 1}}}], resources: {limits: {cpu: 2, hugepages-2Mi: 1Mi}},
  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: zone, matchLabelKeys: [rev]}]}}}}
--- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: gpu}, spec: {devices: {requests: [
  {name: a, exactly: {deviceClassName: gpu, tolerations: [{key: k, value: v}]}}, {name: b, firstAvailable: [{name: big, deviceClassName: gpu}]}]}}}
--- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: a}}
--- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: old, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}}
--- {apiVersion: v1, kind: Node, metadata: {name: a}, status: {capacity: {cpu: "2"}}}
`,
}

// addSeeds adds the inputs the other tests read.
func addSeeds(f *testing.F) {
	for _, file := range []string{"testdata/kubectl-get.yaml", "testdata/kubectl-get.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range readCases {
		f.Add([]byte(tc.input))
	}
	for _, s := range workloadSeeds {
		f.Add([]byte(s))
	}
	for _, tc := range conversionCases {
		f.Add([]byte(tc.older))
	}
}
