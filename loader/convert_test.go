package loader_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"

	"github.com/kubesched/kubesched/loader"
)

// conversionCases are objects in older versions of resource.k8s.io and
// the same written in v1; FuzzRead starts from them too.
var conversionCases = []struct {
	name, older, v1 string
}{
	{
		name: "A v1beta2 DeviceClass, as scheduler_perf's templates write them, is the same in v1.",
		older: `apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata: {name: test-class-0}
spec:
  selectors:
  - cel: {expression: device.driver == "test-driver.cdi.k8s.io"}
  extendedResourceName: example.com/gpu-0
`,
		v1: `--- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: test-class-0}, spec: {selectors: [{cel: {expression: device.driver == "test-driver.cdi.k8s.io"}}], extendedResourceName: example.com/gpu-0}}`,
	},
	{
		name: "A v1beta2 ResourceSlice is the same in v1.",
		older: `apiVersion: resource.k8s.io/v1beta2
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  sharedCounters: [{name: mem, counters: {memory: {value: 80Gi}}}]
  devices:
  - name: gpu-0
    attributes: {model: {string: a100}, index: {int: 0}}
    capacity: {memory: {value: 40Gi}}
    consumesCounters: [{counterSet: mem, counters: {memory: {value: 40Gi}}}]
    taints: [{key: broken, value: "yes", effect: NoSchedule}]
`,
		v1: `--- {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: node-a-gpu}, spec: {driver: gpu.example.com, nodeName: node-a,
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}, sharedCounters: [{name: mem, counters: {memory: {value: 80Gi}}}],
  devices: [{name: gpu-0, attributes: {model: {string: a100}, index: {int: 0}}, capacity: {memory: {value: 40Gi}},
    consumesCounters: [{counterSet: mem, counters: {memory: {value: 40Gi}}}], taints: [{key: broken, value: "yes", effect: NoSchedule}]}]}}`,
	},
	{
		name: "A v1beta2 ResourceClaim, its status too, is the same in v1.",
		older: `apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec:
  devices:
    requests:
    - {name: one, exactly: {deviceClassName: gpu, count: 2, tolerations: [{key: broken, operator: Exists}]}}
    - {name: any, firstAvailable: [{name: big, deviceClassName: big-gpu}, {name: small, deviceClassName: gpu}]}
    constraints: [{requests: [one], matchAttribute: gpu.example.com/model}]
status:
  allocation:
    devices:
      results: [{request: one, driver: gpu.example.com, pool: node-a, device: gpu-0}]
    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-a]}]}]}
  reservedFor: [{resource: pods, name: web, uid: "1234"}]
`,
		v1: `--- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: gpu, namespace: default}, spec: {devices: {
  requests: [{name: one, exactly: {deviceClassName: gpu, count: 2, tolerations: [{key: broken, operator: Exists}]}},
    {name: any, firstAvailable: [{name: big, deviceClassName: big-gpu}, {name: small, deviceClassName: gpu}]}],
  constraints: [{requests: [one], matchAttribute: gpu.example.com/model}]}},
  status: {allocation: {devices: {results: [{request: one, driver: gpu.example.com, pool: node-a, device: gpu-0}]},
    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-a]}]}]}},
  reservedFor: [{resource: pods, name: web, uid: "1234"}]}}`,
	},
	{
		name:  "A v1beta2 DeviceTaintRule is the same in v1.",
		older: `--- {apiVersion: resource.k8s.io/v1beta2, kind: DeviceTaintRule, metadata: {name: r}, spec: {deviceSelector: {driver: gpu.example.com, pool: node-a}, taint: {key: k, value: v, effect: NoExecute}}}`,
		v1:    `--- {apiVersion: resource.k8s.io/v1, kind: DeviceTaintRule, metadata: {name: r}, spec: {deviceSelector: {driver: gpu.example.com, pool: node-a}, taint: {key: k, value: v, effect: NoExecute}}}`,
	},
	{
		name:  "A v1beta1 DeviceClass is the same in v1.",
		older: `--- {apiVersion: resource.k8s.io/v1beta1, kind: DeviceClass, metadata: {name: gpu}, spec: {selectors: [{cel: {expression: "true"}}], config: [{opaque: {driver: gpu.example.com, parameters: {a: 1}}}]}}`,
		v1:    `--- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}, spec: {selectors: [{cel: {expression: "true"}}], config: [{opaque: {driver: gpu.example.com, parameters: {a: 1}}}]}}`,
	},
	{
		name: "A v1beta1 ResourceSlice's devices have in v1 the fields of their basic.",
		older: `apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes: {model: {string: a100}}
      capacity: {memory: {value: 40Gi}}
      taints: [{key: broken, effect: NoSchedule}]
  - name: gpu-1
`,
		v1: `--- {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: node-a-gpu}, spec: {driver: gpu.example.com, nodeName: node-a,
  pool: {name: node-a, resourceSliceCount: 1}, devices: [{name: gpu-0, attributes: {model: {string: a100}}, capacity: {memory: {value: 40Gi}},
  taints: [{key: broken, effect: NoSchedule}]}, {name: gpu-1}]}}`,
	},
	{
		name:  "A v1beta1 ResourceSlice's empty nodeName and false allNodes are unset in v1.",
		older: `--- {apiVersion: resource.k8s.io/v1beta1, kind: ResourceSlice, metadata: {name: s}, spec: {driver: d, nodeName: "", allNodes: false, nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}, pool: {name: p, resourceSliceCount: 1}}}`,
		v1:    `--- {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: s}, spec: {driver: d, nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}, pool: {name: p, resourceSliceCount: 1}}}`,
	},
	{
		name:  "A v1beta1 ResourceSlice for all nodes is for all nodes in v1.",
		older: `--- {apiVersion: resource.k8s.io/v1beta1, kind: ResourceSlice, metadata: {name: s}, spec: {driver: d, allNodes: true, pool: {name: p, resourceSliceCount: 1}}}`,
		v1:    `--- {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: s}, spec: {driver: d, allNodes: true, pool: {name: p, resourceSliceCount: 1}}}`,
	},
	{
		name: "A v1beta1 ResourceClaim's requests have in v1 their fields for an exact count in exactly, when any is set, even an empty list.",
		older: `apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec:
  devices:
    requests:
    - name: one
      deviceClassName: gpu
      allocationMode: ExactCount
      count: 2
      adminAccess: false
      selectors: [{cel: {expression: "true"}}]
      tolerations: [{key: broken, operator: Exists, effect: NoSchedule}]
    - name: any
      firstAvailable: [{name: big, deviceClassName: big-gpu, allocationMode: All}]
    - {name: bare, selectors: []}
status:
  allocation:
    devices:
      results: [{request: one, driver: gpu.example.com, pool: node-a, device: gpu-0}]
`,
		v1: `--- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: gpu, namespace: default}, spec: {devices: {requests: [
  {name: one, exactly: {deviceClassName: gpu, allocationMode: ExactCount, count: 2, adminAccess: false, selectors: [{cel: {expression: "true"}}],
    tolerations: [{key: broken, operator: Exists, effect: NoSchedule}]}},
  {name: any, firstAvailable: [{name: big, deviceClassName: big-gpu, allocationMode: All}]},
  {name: bare, exactly: {selectors: []}}]}},
  status: {allocation: {devices: {results: [{request: one, driver: gpu.example.com, pool: node-a, device: gpu-0}]}}}}`,
	},
}

func TestReadConvertsOlderResourceVersionsToV1(t *testing.T) {
	t.Parallel()
	for _, tc := range conversionCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			older, err := loader.Read(strings.NewReader(tc.older), "older.yaml")
			if err != nil {
				t.Fatal(err)
			}
			v1, err := loader.Read(strings.NewReader(tc.v1), "v1.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if len(older.Objects) != 1 || len(older.Skipped) != 0 || len(v1.Objects) != 1 {
				t.Fatalf("read %v, skipped %v; want one object", summary(older), older.Skipped)
			}
			got, err := json.Marshal(older.Objects[0])
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(v1.Objects[0])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("converted to\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestOlderVersionsHaveV1sFields checks what conversion relies on: that
// resource.k8s.io/v1beta2 has the JSON fields of v1, of the same types,
// and v1beta1 too but where v1 moved them (see the loader's convert), so
// that a field an API release adds to one version and not the other
// fails here rather than being lost.
func TestOlderVersionsHaveV1sFields(t *testing.T) {
	t.Parallel()
	// asV1 is where v1 has a field of v1beta1's, at path.
	asV1 := func(path string) string {
		if rest, ok := strings.CutPrefix(path, ".spec.devices[].basic*"); ok {
			return ".spec.devices[]" + rest
		}
		if rest, ok := strings.CutPrefix(path, ".spec.devices.requests[]."); ok &&
			!strings.HasPrefix(rest, "name") && !strings.HasPrefix(rest, "firstAvailable") {
			return ".spec.devices.requests[].exactly*." + rest
		}
		switch path {
		case ".spec.nodeName", ".spec.allNodes":
			return path + "*" // "" and false are unset
		}
		return path
	}
	same := func(path string) string { return path }
	for _, tc := range []struct {
		name      string
		older, v1 any
		asV1      func(string) string
	}{
		{"v1beta2 DeviceClass", resourcev1beta2.DeviceClass{}, resourcev1.DeviceClass{}, same},
		{"v1beta2 ResourceSlice", resourcev1beta2.ResourceSlice{}, resourcev1.ResourceSlice{}, same},
		{"v1beta2 ResourceClaim", resourcev1beta2.ResourceClaim{}, resourcev1.ResourceClaim{}, same},
		{"v1beta2 DeviceTaintRule", resourcev1beta2.DeviceTaintRule{}, resourcev1.DeviceTaintRule{}, same},
		{"v1beta1 DeviceClass", resourcev1beta1.DeviceClass{}, resourcev1.DeviceClass{}, same},
		{"v1beta1 ResourceSlice", resourcev1beta1.ResourceSlice{}, resourcev1.ResourceSlice{}, asV1},
		{"v1beta1 ResourceClaim", resourcev1beta1.ResourceClaim{}, resourcev1.ResourceClaim{}, asV1},
	} {
		t.Run(tc.name+" has v1's fields.", func(t *testing.T) {
			t.Parallel()
			older := map[string]string{}
			for path, typ := range jsonFields(reflect.TypeOf(tc.older)) {
				older[tc.asV1(path)] = typ
			}
			v1 := jsonFields(reflect.TypeOf(tc.v1))
			for _, path := range slices.Sorted(maps.Keys(v1)) {
				if older[path] != v1[path] {
					t.Errorf("%s: %q in v1, %q in the older version", path, v1[path], older[path])
				}
			}
			for _, path := range slices.Sorted(maps.Keys(older)) {
				if _, ok := v1[path]; !ok {
					t.Errorf("%s: %q in the older version, not in v1", path, older[path])
				}
			}
		})
	}
}

// jsonFields returns the JSON fields of t and of what it holds, by path
// (".spec.devices[].name"; "*" for a pointer, "[]" for a list's items
// and "{string}" for a map's values), with their types: the kind and
// name of a type of the API group, the full name of any other.
func jsonFields(t reflect.Type) map[string]string {
	fields := map[string]string{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		switch t.Kind() {
		case reflect.Pointer:
			walk(t.Elem(), path+"*")
			return
		case reflect.Slice:
			if t.Elem().Kind() != reflect.Uint8 {
				walk(t.Elem(), path+"[]")
				return
			}
		case reflect.Map:
			walk(t.Elem(), path+"{"+t.Key().Kind().String()+"}")
			return
		case reflect.Struct:
			if !strings.HasPrefix(t.PkgPath(), "k8s.io/api/resource/") {
				break // metav1.Time, resource.Quantity, v1.NodeSelector: shared
			}
			for i := range t.NumField() {
				f := t.Field(i)
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				switch {
				case name == "-":
				case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
					walk(f.Type, path)
				default:
					walk(f.Type, path+"."+name)
				}
			}
			return
		}
		if strings.HasPrefix(t.PkgPath(), "k8s.io/api/resource/") {
			fields[path] = t.Kind().String() + " " + t.Name()
		} else {
			fields[path] = t.String()
		}
	}
	walk(t, "")
	return fields
}
