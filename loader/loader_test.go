package loader_test

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/loader"
)

// summary lists what c holds, in order: "Node a", "Pod ns/name", then
// each object as "Kind ns/name", then the skipped counts.
func summary(c *loader.Cluster) []string {
	var s []string
	name := func(kind string, o metav1.Object) {
		n := o.GetName()
		if o.GetNamespace() != "" {
			n = o.GetNamespace() + "/" + n
		}
		s = append(s, kind+" "+n)
	}
	for _, n := range c.Nodes {
		name("Node", n)
	}
	for _, p := range c.Pods {
		name("Pod", p)
	}
	for _, o := range c.Objects {
		name(o.GetObjectKind().GroupVersionKind().Kind, o.(metav1.Object))
	}
	for _, o := range c.Workloads {
		name(o.GetObjectKind().GroupVersionKind().Kind, o.(metav1.Object))
	}
	for _, kind := range slices.Sorted(maps.Keys(c.Skipped)) {
		s = append(s, fmt.Sprintf("skipped %s: %d", kind, c.Skipped[kind]))
	}
	return s
}

// readCases are inputs Read reads, and what it reads from them; FuzzRead
// starts from them too.
var readCases = []struct {
	name  string
	input string
	want  []string
	check func(t *testing.T, c *loader.Cluster)
}{
	{
		name: "YAML documents are read one by one, and empty and comment-only documents ignored.",
		input: `# A dump made by hand.
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
---
# nothing here
---

---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  nodeName: node-a
  containers:
  - name: web
    image: nginx
...
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
provisioner: example.com/csi
---
`,
		want: []string{"Node node-a", "Pod default/web", "StorageClass standard"},
	},
	{
		name:  "A single YAML object is read.",
		input: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  containers:\n  - name: web\n    image: nginx\n",
		want:  []string{"Pod default/web"},
	},
	{
		name: "A single JSON object is read.",
		input: `{
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "node-a"
    },
    "status": {
        "allocatable": {
            "cpu": "4",
            "memory": "16Gi"
        }
    }
}
`,
		want: []string{"Node node-a"},
		check: func(t *testing.T, c *loader.Cluster) {
			if cpu := c.Nodes[0].Status.Allocatable.Cpu().MilliValue(); cpu != 4000 {
				t.Errorf("allocatable cpu %dm; want 4000m", cpu)
			}
		},
	},
	{
		name: "JSON objects one after another are read one by one.",
		input: `{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"}}{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-b"}}
{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"}, "spec": {"minAvailable": 1}}
`,
		want: []string{"Node node-a", "Node node-b", "PodDisruptionBudget default/web"},
	},
	{
		name: "A List in YAML, as kubectl get -o yaml writes it, is read item by item.",
		input: `apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: node-a
- apiVersion: v1
  kind: Pod
  metadata:
    name: web
    namespace: default
  spec:
    containers:
    - image: nginx
      name: web
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata:
    name: gpu.example.com
kind: List
metadata:
  resourceVersion: ""
`,
		want: []string{"Node node-a", "Pod default/web", "DeviceClass gpu.example.com"},
	},
	{
		name: "A List in JSON, as kubectl get -o json writes it, is read item by item.",
		input: `{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": "node-a"
            }
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "data",
                "namespace": "default"
            }
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
`,
		want: []string{"Node node-a", "PersistentVolumeClaim default/data"},
	},
	{
		name:  "A typed list from the API server gives its items, which carry no kind, its kind.",
		input: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1234"},"items":[{"metadata":{"name":"a","namespace":"default"}},{"metadata":{"name":"b","namespace":"default"}}]}`,
		want:  []string{"Pod default/a", "Pod default/b"},
		check: func(t *testing.T, c *loader.Cluster) {
			if gvk := c.Pods[0].GroupVersionKind(); gvk.Kind != "Pod" || gvk.Version != "v1" {
				t.Errorf("the pod's kind is %v; want v1 Pod", gvk)
			}
		},
	},
	{
		name:  "A typed list whose kind comes after its items gives them its kind too, in order.",
		input: `{"apiVersion":"v1","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},{"metadata":{"name":"b"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"c"}}],"kind":"NodeList","metadata":{}}`,
		want:  []string{"Node a", "Node b", "Node c"},
	},
	{
		name:  "A typed list in YAML gives its items its kind.",
		input: "apiVersion: storage.k8s.io/v1\nitems:\n- metadata:\n    name: standard\n  provisioner: example.com/csi\nkind: StorageClassList\nmetadata: {}\n",
		want:  []string{"StorageClass standard"},
	},
	{
		name: "Lists in a List's items are read too.",
		input: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a}}
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: v1, kind: Pod, metadata: {name: x, namespace: default}}
  - apiVersion: v1
    kind: NodeList
    items:
    - metadata: {name: b}
- {apiVersion: v1, kind: Node, metadata: {name: c}}
`,
		want: []string{"Node a", "Node b", "Node c", "Pod default/x"},
	},
	{
		name:  "Items written as a flow sequence are read with their document.",
		input: "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Node, metadata: {name: a}}, {apiVersion: v1, kind: Node, metadata: {name: b}}]\n",
		want:  []string{"Node a", "Node b"},
	},
	{
		name: "Items indented under items, or with their first line after the dash, are read item by item.",
		input: `apiVersion: v1
kind: List
items:

  - apiVersion: v1
    kind: Node
    metadata:
      name: a
  -   apiVersion: v1
      kind: Node
      metadata: {name: b}
  -
    apiVersion: v1
    kind: Node
    metadata:
      name: c
metadata: {}
`,
		want: []string{"Node a", "Node b", "Node c"},
	},
	{
		name: "Block scalars and comments in a List's items are kept as they are.",
		input: `apiVersion: v1
items:
# the first pod
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      folded: >-
        one
        two
      script: |
        # not a comment

        - not an item
        items:
    name: a
    namespace: default
  spec:
    containers:
    - args:
      - -c
      - |
        echo "---" hi
      image: busybox
      name: a
# the end
kind: List
metadata:
  resourceVersion: ""
`,
		want: []string{"Pod default/a"},
		check: func(t *testing.T, c *loader.Cluster) {
			a := c.Pods[0].Annotations
			if a["script"] != "# not a comment\n\n- not an item\nitems:\n" || a["folded"] != "one two" {
				t.Errorf("annotations %q", a)
			}
			if arg := c.Pods[0].Spec.Containers[0].Args[1]; arg != "echo \"---\" hi\n" {
				t.Errorf("argument %q", arg)
			}
		},
	},
	{
		name:  "A document start marker before content begins a document with it.",
		input: "--- # the nodes\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n--- {apiVersion: v1, kind: Node, metadata: {name: b}}\n--- !!map\napiVersion: v1\nkind: Node\nmetadata: {name: c}\n",
		want:  []string{"Node a", "Node b", "Node c"},
	},
	{
		name:  "Lines ending in CRLF are read.",
		input: "apiVersion: v1\r\nitems:\r\n- apiVersion: v1\r\n  kind: Node\r\n  metadata:\r\n    name: a\r\nkind: List\r\n---\r\napiVersion: v1\r\nkind: Node\r\nmetadata:\r\n  name: b\r\n",
		want:  []string{"Node a", "Node b"},
	},
	{
		name: "A List's items may alias an earlier item, whole or merged into them, as YAML allows.",
		input: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: first}}
- &node
  apiVersion: v1
  kind: Node
  metadata: {name: a, labels: {zone: z1}}
  status:
    allocatable: {cpu: "4"}
- <<: *node
  metadata: {name: b, labels: {zone: z2}}
- *node
- apiVersion: v1
  kind: Node
  metadata: {name: last}
`,
		want: []string{"Node first", "Node a", "Node b", "Node a", "Node last"},
		check: func(t *testing.T, c *loader.Cluster) {
			b := c.Nodes[2]
			if b.Labels["zone"] != "z2" || b.Status.Allocatable.Cpu().String() != "4" {
				t.Errorf("node b has labels %v and allocatable %v; want zone z2 and a's cpu", b.Labels, b.Status.Allocatable)
			}
		},
	},
	{
		name: "A List's items may alias an anchor written before them, and what follows them an anchor in them.",
		input: `base: &base
  apiVersion: v1
  kind: Pod
apiVersion: v1
items:
- <<: *base
  metadata: {name: a, namespace: default}
- <<: *base
  metadata: {name: b, namespace: default, annotations: {list-kind: &kind List}}
kind: *kind
`,
		want: []string{"Pod default/a", "Pod default/b"},
	},
	{
		name: "A multi-document file may use anchors within its documents.",
		input: `apiVersion: v1
kind: Node
metadata: {name: a, labels: &labels {zone: z1}}
status: {capacity: &resources {cpu: "2"}, allocatable: *resources}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: default, labels: &app {app: web}}
- apiVersion: v1
  kind: Pod
  metadata: {name: q, namespace: default, labels: *app}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: &labels {zone: z2}}
spec: {taints: [{key: zone, value: z2, effect: NoSchedule}]}
`,
		want: []string{"Node a", "Node b", "Pod default/p", "Pod default/q"},
		check: func(t *testing.T, c *loader.Cluster) {
			if c.Pods[1].Labels["app"] != "web" || c.Nodes[1].Labels["zone"] != "z2" {
				t.Errorf("pod q's labels %v, node b's %v", c.Pods[1].Labels, c.Nodes[1].Labels)
			}
		},
	},
	{
		name: "Text that looks like an anchor changes nothing.",
		input: `apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a, namespace: default, annotations: {note: "fish &chips", cmd: "a && b &"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: b, namespace: default}
kind: List
`,
		want: []string{"Pod default/a", "Pod default/b"},
	},
	{
		name: "Kinds kubesched does not read, and other API versions of those it does, are counted; workloads are kept.",
		input: `apiVersion: v1
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default}
- apiVersion: resource.k8s.io/v1alpha3
  kind: DeviceTaintRule
  metadata: {name: rule}
- apiVersion: v1
  kind: Event
  metadata: {name: e1, namespace: default}
- apiVersion: v1
  kind: Event
  metadata: {name: e2, namespace: default}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings, namespace: default}
  data: {cpu: 12x}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: slice}
  spec: {driver: gpu.example.com, pool: {name: a, resourceSliceCount: 1}}
kind: List
`,
		want: []string{
			"ResourceSlice slice",
			"Deployment default/web",
			"skipped /v1, Kind=ConfigMap: 1",
			"skipped /v1, Kind=Event: 2",
			"skipped resource.k8s.io/v1alpha3, Kind=DeviceTaintRule: 1",
		},
	},
	{
		name:  "A byte order mark and blank lines before JSON are ignored.",
		input: "\xef\xbb\xbf\n  \n\t{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}",
		want:  []string{"Node a"},
	},
	{
		name:  "A byte order mark and blank lines before YAML are ignored, and the first line's indentation kept.",
		input: "\xef\xbb\xbf\n\n  apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n",
		want:  []string{"Node a"},
	},
	{
		name:  "An empty input is an empty cluster.",
		input: "",
	},
	{
		name:  "An input of blank lines and comments is an empty cluster.",
		input: "\n   \n# nothing\n---\n\n",
	},
	{
		name:  "Documents that are null are ignored.",
		input: "--- null\n---\n~\n",
	},
	{
		name:  "A List without items, as kubectl writes when there are none, is empty.",
		input: "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n---\napiVersion: v1\nkind: PodList\nitems:\n---\n{\"apiVersion\": \"v1\", \"items\": null, \"kind\": \"List\"}\n",
	},
	{
		name:  "A kind that ends in List but has no items is not a List.",
		input: "apiVersion: example.com/v1\nkind: AllowList\nmetadata: {name: a}\nspec: {}\n---\n{\"apiVersion\": \"example.com/v1\", \"kind\": \"AllowList\", \"metadata\": {\"name\": \"b\"}}\n",
		want:  []string{"skipped example.com/v1, Kind=AllowList: 2"},
	},
	{
		name:  "YAML directives before a document are read.",
		input: "%YAML 1.1\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n",
		want:  []string{"Node a"},
	},
	{
		name:  "JSON items that are null make an empty List.",
		input: `{"apiVersion": "v1", "items": null, "kind": "List"}`,
	},
	{
		name: "An object with a field called items is not a List.",
		input: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
items:
- not: an object
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
items:
- 1
---
{"apiVersion": "example.com/v1", "items": [1, "a"], "kind": "Gadget", "metadata": {"name": "g"}}
`,
		want: []string{"Pod default/p", "skipped example.com/v1, Kind=Gadget: 1", "skipped example.com/v1, Kind=Widget: 1"},
	},
	{
		name: "Unknown fields, as a newer API server may write, are ignored.",
		input: `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  futureMetadata: x
spec:
  futureField: {a: 1}
  containers:
  - name: web
    image: nginx
status:
  phase: Running
  futureStatus: [1, 2]
`,
		want: []string{"Pod default/web"},
		check: func(t *testing.T, c *loader.Cluster) {
			if c.Pods[0].Status.Phase != v1.PodRunning {
				t.Errorf("phase %q; want Running", c.Pods[0].Status.Phase)
			}
		},
	},
	{
		name: "Managed fields are dropped and everything else kept.",
		input: `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web}
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:app: {}}}}
    manager: kubectl
    operation: Update
spec:
  containers:
  - name: web
    image: nginx
  nodeName: node-a
status:
  nominatedNodeName: node-b
  phase: Pending
`,
		want: []string{"Pod default/web"},
		check: func(t *testing.T, c *loader.Cluster) {
			p := c.Pods[0]
			if p.ManagedFields != nil || p.Labels["app"] != "web" || p.Status.NominatedNodeName != "node-b" {
				t.Errorf("managed fields %v, labels %v, status %+v", p.ManagedFields, p.Labels, p.Status)
			}
		},
	},
}

func TestRead(t *testing.T) {
	t.Parallel()
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := loader.Read(strings.NewReader(tc.input), "dump.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(c); !slices.Equal(got, tc.want) {
				t.Errorf("read %q; want %q", got, tc.want)
			}
			if c.Skipped == nil {
				t.Error("Skipped is nil")
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// billionLaughs is a YAML alias bomb: 9 aliases, 9 deep, 9⁹ strings.
const billionLaughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

// nestedLists is a List in Lists, depth deep.
func nestedLists(depth int) string {
	return strings.Repeat(`{"apiVersion": "v1", "kind": "List", "items": [`, depth) + strings.Repeat("]}", depth)
}

// errorCases are inputs Read rejects, with the start of its error;
// FuzzRead starts from them too.
var errorCases = []struct {
	name, input, wantErr string
}{
	{
		name:    "A quantity that does not parse is an error naming the item.",
		input:   "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: web, namespace: default}\n  spec:\n    containers:\n    - name: web\n      resources: {requests: {cpu: 12x}}\n",
		wantErr: "dump.yaml: document 1: item 2 (Pod default/web): quantities must match the regular expression",
	},
	{
		name:    "A quantity that does not parse in a JSON object is an error naming the object.",
		input:   `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"Node","metadata":{"name":"b"},"status":{"allocatable":{"cpu":"12x"}}}`,
		wantErr: "dump.yaml: document 2 (Node b): quantities must match the regular expression",
	},
	{
		name:    "A document without a kind is an error.",
		input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: web, namespace: default}\n",
		wantErr: "dump.yaml: document 2 (default/web): missing kind",
	},
	{
		name:    "A document without an apiVersion is an error.",
		input:   `{"kind": "Pod", "metadata": {"name": "web", "namespace": "default"}}`,
		wantErr: "dump.yaml: document 1 (Pod default/web): missing apiVersion",
	},
	{
		name:    "An item of a List without a kind is an error.",
		input:   `{"apiVersion": "v1", "items": [{"apiVersion": "v1", "metadata": {"name": "web", "namespace": "default"}}], "kind": "List"}`,
		wantErr: "dump.yaml: document 1: item 1 (default/web): missing kind",
	},
	{
		name:    "An invalid apiVersion is an error.",
		input:   "apiVersion: a/b/c\nkind: Node\nmetadata: {name: a}\n",
		wantErr: "dump.yaml: document 1 (Node a): unexpected GroupVersion string: a/b/c",
	},
	{
		name:    "A JSON array is an error saying so.",
		input:   `[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}]`,
		wantErr: "dump.yaml: document 1: a JSON array; want an object, such as the List kubectl get -o json writes",
	},
	{
		name:    "A JSON array after a JSON object is an error saying so.",
		input:   `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}} []`,
		wantErr: "dump.yaml: document 2: a JSON array; want an object, such as the List kubectl get -o json writes",
	},
	{
		name:    "JSON cut short in an item is an error naming the item.",
		input:   `{"apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}, {"apiVersion": "v1", "kind": "Node", "metadata": {"na`,
		wantErr: "dump.yaml: document 1: item 2: unexpected EOF",
	},
	{
		name:    "JSON cut short between fields is an error.",
		input:   `{"apiVersion": "v1", `,
		wantErr: "dump.yaml: document 1: unexpected EOF",
	},
	{
		name:    "A YAML List cut short has no kind.",
		input:   "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Node\n  metadata:\n",
		wantErr: "dump.yaml: document 1: missing kind",
	},
	{
		name:    "YAML cut short in a quoted string is an error naming the item.",
		input:   "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: \"a",
		wantErr: "dump.yaml: document 1: item 1: yaml: ",
	},
	{
		name:    "Malformed YAML in an item is an error naming the item.",
		input:   "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n- apiVersion: v1\n  kind: Node\n  metadata: {name: [}\n",
		wantErr: "dump.yaml: document 1: item 2: yaml: ",
	},
	{
		name:    "Malformed JSON is an error.",
		input:   `{"apiVersion": "v1", "kind": Node}`,
		wantErr: "dump.yaml: document 1: invalid character 'N' looking for beginning of value",
	},
	{
		name:    "UTF-16 is an error saying so.",
		input:   "\xff\xfea\x00p\x00i\x00",
		wantErr: "dump.yaml: UTF-16, as Windows PowerShell 5 writes with >; want UTF-8",
	},
	{
		name:    "A scalar document is an error.",
		input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\njust some text\n",
		wantErr: "dump.yaml: document 2: want an object, found a scalar",
	},
	{
		name:    "A YAML sequence document is an error.",
		input:   "- apiVersion: v1\n  kind: Node\n",
		wantErr: "dump.yaml: document 1: want an object, found a list",
	},
	{
		name:    "A JSON string after a JSON object is an error.",
		input:   `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}} "b"`,
		wantErr: "dump.yaml: document 2: want an object, found a string",
	},
	{
		name:    "An item that is not an object is an error.",
		input:   `{"apiVersion": "v1", "items": ["a"], "kind": "List"}`,
		wantErr: "dump.yaml: document 1: item 1: want an object, found a scalar",
	},
	{
		name:    "A List whose items are not a list is an error.",
		input:   "apiVersion: v1\nkind: List\nitems:\n  apiVersion: v1\n  kind: Node\n",
		wantErr: "dump.yaml: document 1: items: want a list, found an object",
	},
	{
		name:    "A JSON List whose items are not a list is an error.",
		input:   `{"apiVersion": "v1", "items": {"apiVersion": "v1", "kind": "Node"}, "kind": "List"}`,
		wantErr: "dump.yaml: document 1: items: want a list, found an object",
	},
	{
		name:    "A field of the wrong type is an error.",
		input:   "apiVersion: v1\nkind: Node\nmetadata:\n  name: 5\n",
		wantErr: "dump.yaml: document 1 (Node): json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string",
	},
	{
		name:    "A time that does not parse is an error.",
		input:   "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  creationTimestamp: yesterday\n",
		wantErr: `dump.yaml: document 1 (Node a): parsing time "yesterday"`,
	},
	{
		name:    "Lists nested too deep are an error.",
		input:   nestedLists(10),
		wantErr: "dump.yaml: document 1: item 1: item 1: item 1: item 1: item 1: item 1: item 1: item 1: Lists nested more than 8 deep",
	},
	{
		name:    "An alias to an anchor of another document is an error.",
		input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: &labels {zone: z1}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b, labels: *labels}\n",
		wantErr: "dump.yaml: document 2: yaml: unknown anchor 'labels' referenced",
	},
	{
		name: "An item read with the rest of its List, for an alias, is named by its number.",
		input: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a}}
- &pod {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}}
- {apiVersion: v1, kind: Node, metadata: {name: b}}
- <<: *pod
  spec: {containers: [{name: web, resources: {requests: {cpu: 12x}}}]}
`,
		wantErr: "dump.yaml: document 1: item 4 (Pod default/web): quantities must match the regular expression",
	},
	{
		name:    "A YAML alias bomb is an error, at once.",
		input:   billionLaughs,
		wantErr: "dump.yaml: document 1: yaml: document contains excessive aliasing",
	},
	{
		name:    "YAML nested too deep is an error, at once.",
		input:   "a: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		wantErr: "dump.yaml: document 1: yaml: exceeded max depth of 10000",
	},
	{
		name:    "JSON nested too deep is an error, at once.",
		input:   `{"a": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}",
		wantErr: "dump.yaml: document 1: invalid character '[' exceeded max depth",
	},
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			c, err := loader.Read(strings.NewReader(tc.input), "dump.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || c != nil {
				t.Errorf("Read: %v, %v; want an error starting %q", c, err, tc.wantErr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Read took %v", d)
			}
		})
	}
}

func TestReadFailingInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, input, wantErr string
	}{
		{
			name:    "A read error in YAML is an error naming the document.",
			input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\n",
			wantErr: "dump.yaml: document 2: disk on fire",
		},
		{
			name:    "A read error in a YAML List's items is an error naming the item.",
			input:   "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n- apiVersion: v1\n",
			wantErr: "dump.yaml: document 1: item 2: disk on fire",
		},
		{
			name:    "A read error in JSON is an error naming the document.",
			input:   `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}} {"apiVersion": "v1", `,
			wantErr: "dump.yaml: document 2: disk on fire",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := io.MultiReader(strings.NewReader(tc.input), iotest.ErrReader(errors.New("disk on fire")))
			c, err := loader.Read(r, "dump.yaml")
			if err == nil || err.Error() != tc.wantErr || c != nil {
				t.Errorf("Read: %v, %v; want the error %q", c, err, tc.wantErr)
			}
		})
	}
}

// testdataSummary is what the dumps in testdata hold.
var testdataSummary = []string{
	"Node cp-1", "Node worker-a", "Node worker-b", "Node worker-c",
	"Pod kube-system/etcd-cp-1", "Pod kube-system/coredns-7db6d8ff4d-x2h7k",
	"Pod default/web-5d8f7b9c6d-4tq2m", "Pod default/web-5d8f7b9c6d-9hx7p",
	"Pod default/postgres-0", "Pod default/api-6c9f8d7b5-k8m2w",
	"Pod default/report-29391840-7xq4z", "Pod default/web-5d8f7b9c6d-z6wbn",
	"Pod default/train-llm-8kq2d",
	"PersistentVolumeClaim default/data-postgres-0",
	"PersistentVolume pvc-3f2a8c1e-5b7d-4e9f-a1c3-5e7b9d1f3a5c",
	"StorageClass gp3",
	"ResourceSlice worker-c-gpu.example.com-7m4xq",
	"PodDisruptionBudget default/web",
	"Deployment default/web",
	"skipped /v1, Kind=Event: 1",
}

func TestReadTestdata(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file string }{
		{name: "What kubectl get -o yaml writes is read.", file: "testdata/kubectl-get.yaml"},
		{name: "What kubectl get -o json writes is read.", file: "testdata/kubectl-get.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := loader.Load(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(c); !slices.Equal(got, testdataSummary) {
				t.Errorf("read %q; want %q", got, testdataSummary)
			}
			for _, n := range c.Nodes {
				if n.ManagedFields != nil {
					t.Errorf("node %s has managed fields", n.Name)
				}
			}
			cp := c.Nodes[0]
			if len(cp.Spec.Taints) != 1 || cp.Status.Allocatable.Cpu().Value() != 4 || len(cp.Status.Conditions) != 4 || len(cp.Status.Images) != 3 || cp.Labels[v1.LabelTopologyZone] != "us-east-1a" {
				t.Errorf("node cp-1 is %+v", cp)
			}
			train, ok := c.Pod("default", "train-llm-8kq2d")
			if !ok || train.Status.Conditions[0].Reason != v1.PodReasonUnschedulable || train.OwnerReferences[0].Kind != "Job" || train.Spec.Containers[0].Resources.Requests.Cpu().Value() != 64 {
				t.Errorf("pod train-llm-8kq2d is %+v", train)
			}
		})
	}
}

func TestReadTestdataAlike(t *testing.T) {
	t.Parallel()
	asYAML, err := loader.Load("testdata/kubectl-get.yaml")
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := loader.Load("testdata/kubectl-get.json")
	if err != nil {
		t.Fatal(err)
	}
	// What they hold, not where: the files' names differ.
	held := func(c *loader.Cluster) loader.Cluster {
		return loader.Cluster{Nodes: c.Nodes, Pods: c.Pods, Objects: c.Objects, Workloads: c.Workloads, Skipped: c.Skipped}
	}
	if !reflect.DeepEqual(held(asYAML), held(asJSON)) {
		t.Error("the YAML and the JSON dump in testdata differ")
	}
}

func TestClusterPods(t *testing.T) {
	t.Parallel()
	deleted := metav1.NewTime(time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name                   string
		pod                    v1.Pod
		wantBound, wantPending bool
	}{
		{name: "A running pod on a node is bound.", pod: v1.Pod{Spec: v1.PodSpec{NodeName: "a"}, Status: v1.PodStatus{Phase: v1.PodRunning}}, wantBound: true},
		{name: "A pod on a node being deleted is still bound.", pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}, Spec: v1.PodSpec{NodeName: "a"}}, wantBound: true},
		{name: "A pod on a node that succeeded is neither bound nor pending.", pod: v1.Pod{Spec: v1.PodSpec{NodeName: "a"}, Status: v1.PodStatus{Phase: v1.PodSucceeded}}},
		{name: "A pod on a node that failed is neither bound nor pending.", pod: v1.Pod{Spec: v1.PodSpec{NodeName: "a"}, Status: v1.PodStatus{Phase: v1.PodFailed}}},
		{name: "A pod without a node is pending.", pod: v1.Pod{Status: v1.PodStatus{Phase: v1.PodPending}}, wantPending: true},
		{name: "A pod without a node or status is pending.", pod: v1.Pod{}, wantPending: true},
		{name: "A pod without a node nominated to one is pending.", pod: v1.Pod{Status: v1.PodStatus{NominatedNodeName: "a"}}, wantPending: true},
		{name: "A pod without a node being deleted is pending, for kube-scheduler to skip with its message.", pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}}, wantPending: true},
		{name: "A pod without a node that failed is neither bound nor pending.", pod: v1.Pod{Status: v1.PodStatus{Phase: v1.PodFailed}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &tc.pod
			pod.Namespace, pod.Name = "default", "p"
			other := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}, Spec: v1.PodSpec{NodeName: "a"}}
			c := &loader.Cluster{Pods: []*v1.Pod{other, pod}}
			if bound := slices.Contains(c.Bound(), pod); bound != tc.wantBound {
				t.Errorf("bound: %v; want %v", bound, tc.wantBound)
			}
			if pending := slices.Contains(c.Pending(), pod); pending != tc.wantPending {
				t.Errorf("pending: %v; want %v", pending, tc.wantPending)
			}
			if got, ok := c.Pod("default", "p"); got != pod || !ok {
				t.Errorf("Pod: %v, %v; want the pod", got, ok)
			}
		})
	}
}

func TestClusterPod(t *testing.T) {
	t.Parallel()
	first := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	c := &loader.Cluster{Pods: []*v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "web"}},
		first,
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}},
	}}
	for _, tc := range []struct {
		name, namespace, pod string
		want                 *v1.Pod
	}{
		{name: "The first pod of a namespace and name is found.", namespace: "default", pod: "web", want: first},
		{name: "A pod of another namespace is not found.", namespace: "other", pod: "web"},
		{name: "A pod of another name is not found.", namespace: "default", pod: "api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := c.Pod(tc.namespace, tc.pod)
			if got != tc.want || ok != (tc.want != nil) {
				t.Errorf("Pod: %v, %v; want %v", got, ok, tc.want)
			}
		})
	}
}

func TestClusterMerge(t *testing.T) {
	t.Parallel()
	read := func(t *testing.T, input string) *loader.Cluster {
		c, err := loader.Read(strings.NewReader(input), "input")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const a = "--- {apiVersion: v1, kind: Node, metadata: {name: a}}\n--- {apiVersion: v1, kind: Event, metadata: {name: e}}\n--- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default}}\n"
	const b = "--- {apiVersion: v1, kind: Node, metadata: {name: b}}\n--- {apiVersion: v1, kind: Event, metadata: {name: f}}\n--- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n"
	for _, tc := range []struct {
		name  string
		into  func(t *testing.T) *loader.Cluster
		other func(t *testing.T) *loader.Cluster
		want  []string
	}{
		{
			name:  "Merging appends the other cluster's objects and adds its counts.",
			into:  func(t *testing.T) *loader.Cluster { return read(t, a) },
			other: func(t *testing.T) *loader.Cluster { return read(t, b) },
			want:  []string{"Node a", "Node b", "Pod default/p", "Namespace default", "skipped /v1, Kind=Event: 2"},
		},
		{
			name:  "Merging into an empty cluster copies the other.",
			into:  func(t *testing.T) *loader.Cluster { return &loader.Cluster{} },
			other: func(t *testing.T) *loader.Cluster { return read(t, b) },
			want:  []string{"Node b", "Namespace default", "skipped /v1, Kind=Event: 1"},
		},
		{
			name:  "Merging nil changes nothing.",
			into:  func(t *testing.T) *loader.Cluster { return read(t, a) },
			other: func(t *testing.T) *loader.Cluster { return nil },
			want:  []string{"Node a", "Pod default/p", "skipped /v1, Kind=Event: 1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.into(t)
			c.Merge(tc.other(t))
			if got := summary(c); !slices.Equal(got, tc.want) {
				t.Errorf("merged %q; want %q", got, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"b.yaml":        "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n",
		"a.json":        `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}`,
		"c.yml":         "apiVersion: v1\nkind: Node\nmetadata: {name: c}\n",
		"notes.txt":     "apiVersion: v1\nkind: Node\nmetadata: {name: notes}\n",
		"d.yaml.orig":   "not even YAML: [",
		"sub/e.yaml":    "apiVersion: v1\nkind: Node\nmetadata: {name: e}\n",
		"bad/bad.yaml":  "apiVersion: v1\nkind: Node\nmetadata: {name: bad}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: [\n",
		"empty/.keep":   "",
		"other/f.json":  `{"apiVersion": "v1", "kind": "Event", "metadata": {"name": "f"}}`,
		"other/g.YAML":  "apiVersion: v1\nkind: Node\nmetadata: {name: g}\n",
		"other/h/i.yml": "apiVersion: v1\nkind: Node\nmetadata: {name: i}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		paths   []string
		want    []string
		wantErr string
	}{
		{
			name:  "A directory's .yaml, .yml and .json files are read in order of name, and no other file or subdirectory.",
			paths: []string{dir},
			want:  []string{"Node a", "Node b", "Node c"},
		},
		{
			name:  "A file named is read whatever its name.",
			paths: []string{filepath.Join(dir, "notes.txt")},
			want:  []string{"Node notes"},
		},
		{
			name:  "Several paths are read in order and merged.",
			paths: []string{filepath.Join(dir, "other"), filepath.Join(dir, "c.yml"), filepath.Join(dir, "sub"), filepath.Join(dir, "empty")},
			want:  []string{"Node c", "Node e", "skipped /v1, Kind=Event: 1"},
		},
		{
			name: "No paths is an empty cluster.",
		},
		{
			name:    "A path that does not exist is an error.",
			paths:   []string{dir, filepath.Join(dir, "missing.yaml")},
			wantErr: "stat " + filepath.Join(dir, "missing.yaml") + ": no such file or directory",
		},
		{
			name:    "An error in a file names the file.",
			paths:   []string{filepath.Join(dir, "bad")},
			wantErr: filepath.Join(dir, "bad", "bad.yaml") + ": document 2: yaml: ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := loader.Load(tc.paths...)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || c != nil {
					t.Errorf("Load: %v, %v; want an error starting %q", c, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(c); !slices.Equal(got, tc.want) {
				t.Errorf("loaded %q; want %q", got, tc.want)
			}
		})
	}
}

// TestLoadStandardInput reads "-". It does not run in parallel: it
// replaces os.Stdin.
func TestLoadStandardInput(t *testing.T) {
	f, err := os.Open("testdata/kubectl-get.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	c, err := loader.Load("-")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 4 || len(c.Pods) != 9 {
		t.Errorf("read %d nodes and %d pods from standard input; want 4 and 9", len(c.Nodes), len(c.Pods))
	}
}
