package loader_test

import (
	"strings"
	"testing"

	"github.com/kubesched/kubesched/loader"
)

// webPod is a pod manifest named web in default with spec.
func webPod(spec string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec: " + spec + "\n"
}

// invalidCases are objects the API server refuses for what
// kube-scheduler reads of them, with Read's error, in the API server's
// words; FuzzRead starts from them too.
var invalidCases = []struct {
	name, input, wantErr string
}{
	{
		name:    "A container's negative request is refused, with its place and field.",
		input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n" + webPod(`{containers: [{name: web, resources: {requests: {cpu: "-5"}}}]}`),
		wantErr: `pods.yaml: document 2 (Pod default/web): spec.containers[0].resources.requests[cpu]: Invalid value: "-5": must be greater than or equal to 0`,
	},
	{
		name:    "An init container's negative limit is refused.",
		input:   webPod(`{initContainers: [{name: init, resources: {limits: {memory: -1Gi}}}], containers: [{name: web}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.initContainers[0].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0`,
	},
	{
		name:    "A request above its limit is refused, on the requests as the API server says.",
		input:   webPod(`{containers: [{name: a}, {name: web, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.containers[1].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	},
	{
		name:    "An extended resource's request must equal its limit.",
		input:   webPod(`{containers: [{name: web, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "2"}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2`,
	},
	{
		name:    "An extended resource requested without a limit is refused.",
		input:   webPod(`{containers: [{name: web, resources: {requests: {nvidia.com/gpu: "1"}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
	},
	{
		name:  "A fractional extended resource is refused, in limits and requests alike, all errors at once in order.",
		input: webPod(`{containers: [{name: web, resources: {requests: {example.com/foo: 500m}, limits: {example.com/foo: 500m}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): [spec.containers[0].resources.limits[example.com/foo]: Invalid value: "500m": must be an integer, ` +
			`spec.containers[0].resources.requests[example.com/foo]: Invalid value: "500m": must be an integer]`,
	},
	{
		name:  "A resource name without a domain that no container may ask for is refused.",
		input: webPod(`{containers: [{name: web, resources: {requests: {gpu: "1"}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): [spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers, ` +
			`spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified]`,
	},
	{
		name:    "Hugepages without cpu or memory are refused.",
		input:   webPod(`{containers: [{name: web, resources: {limits: {hugepages-2Mi: 4Mi}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.containers[0].resources: Forbidden: HugePages require cpu or memory`,
	},
	{
		name:    "Hugepages that are not a whole number of pages are refused.",
		input:   webPod(`{containers: [{name: web, resources: {limits: {memory: 1Gi, hugepages-2Mi: 1Mi}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "1Mi": 1Mi is not positive integer multiple of hugepages-2Mi`,
	},
	{
		name:    "A pod-level request above the pod-level limit is refused.",
		input:   webPod(`{resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}, containers: [{name: web}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	},
	{
		name:    "A pod-level limit below its containers' requests is refused, as the pod-level request defaulting would set is.",
		input:   webPod(`{resources: {limits: {cpu: "1"}}, containers: [{name: a, resources: {requests: {cpu: 600m}}}, {name: b, resources: {limits: {cpu: 900m}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1`,
	},
	{
		name:    "A pod-level request below its containers' requests is refused.",
		input:   webPod(`{resources: {requests: {cpu: "1"}}, containers: [{name: a, resources: {requests: {cpu: 600m}}}, {name: b, resources: {requests: {cpu: 600m}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container requests of 1200m`,
	},
	{
		name:    "A container's limit above the pod-level limit is refused, at the API server's path.",
		input:   webPod(`{resources: {requests: {memory: 2Gi}, limits: {memory: 2Gi}}, containers: [{name: web, resources: {requests: {memory: 1Gi}, limits: {memory: 3Gi}}}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.resources.containers[0][memory].limits: Invalid value: "3Gi": must be less than or equal to pod limits of 2Gi`,
	},
	{
		name:    "A pod-level resource other than cpu, memory and hugepages is refused.",
		input:   webPod(`{resources: {limits: {nvidia.com/gpu: "1"}}, containers: [{name: web}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported values: "cpu", "hugepages-", "memory"`,
	},
	{
		name:    "Pod-level resources of a windows pod are refused.",
		input:   webPod(`{os: {name: windows}, resources: {limits: {cpu: "1"}}, containers: [{name: web}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.resources: Forbidden: may not be set for a windows pod`,
	},
	{
		name:    "A negative overhead is refused, as a container's limit, at the API server's path.",
		input:   webPod(`{overhead: {cpu: 250m, memory: -1Mi}, containers: [{name: web}]}`),
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.overhead.limits[memory]: Invalid value: "-1Mi": must be greater than or equal to 0`,
	},
	{
		name:    "A node's negative allocatable is refused, at the API server's path.",
		input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: \"4\"}, allocatable: {cpu: \"-1\"}}\n",
		wantErr: `pods.yaml: document 1 (Node a): status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0`,
	},
	{
		name:    "A node's fractional capacity of pods is refused.",
		input:   "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: \"4\", pods: \"1.5\"}}\n",
		wantErr: `pods.yaml: document 1 (Node a): status.capacity.pods: Invalid value: "1500m": must be an integer`,
	},
	{
		name: "A workload's template is refused as its pods would be.",
		input: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n" +
			"spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, resources: {requests: {memory: -1}}}]}}}\n",
		wantErr: `pods.yaml: document 1 (Deployment default/web): spec.template.spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0`,
	},
	{
		name: "An item of a List is named by its number.",
		input: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n" +
			"- {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}, spec: {containers: [{name: web, resources: {limits: {cpu: \"-1\"}}}]}}\n",
		wantErr: `pods.yaml: document 1: item 2 (Pod default/web): spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
	},
	{
		name:    "A pod from an API server is checked too: it cannot be invalid, so checking costs nothing more.",
		input:   "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, resourceVersion: \"7\"}\nspec: {containers: [{name: web, resources: {requests: {cpu: \"-5\"}}}]}\n",
		wantErr: `pods.yaml: document 1 (Pod default/web): spec.containers[0].resources.requests[cpu]: Invalid value: "-5": must be greater than or equal to 0`,
	},
}

func TestReadRefusesResourcesTheAPIServerRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := loader.Read(strings.NewReader(tc.input), "pods.yaml")
			if err == nil || err.Error() != tc.wantErr || c != nil {
				t.Errorf("Read: %v, %v\nwant the error %s", c, err, tc.wantErr)
			}
		})
	}
}

func TestReadAcceptsResourcesTheAPIServerAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, input string }{
		{
			name:  "Requests without limits, and limits without requests, are accepted.",
			input: webPod(`{containers: [{name: a, resources: {requests: {cpu: 100m, memory: 1Gi, ephemeral-storage: 1Gi}}}, {name: b, resources: {limits: {cpu: "2", nvidia.com/gpu: "1"}}}]}`),
		},
		{
			name:  "Requests equal to or below their limits are accepted, and extended resources equal to theirs.",
			input: webPod(`{containers: [{name: web, resources: {requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: "2"}, limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "2"}}}]}`),
		},
		{
			name:  "Zero is accepted.",
			input: webPod(`{containers: [{name: web, resources: {requests: {cpu: "0", example.com/foo: "0"}, limits: {example.com/foo: "0"}}}]}`),
		},
		{
			name:  "Hugepages of whole pages with memory are accepted.",
			input: webPod(`{containers: [{name: web, resources: {limits: {memory: 1Gi, hugepages-2Mi: 4Mi, hugepages-1Gi: 2Gi}}}]}`),
		},
		{
			name: "Pod-level resources at or above the containers' are accepted, with hugepages from the containers' limits.",
			input: webPod(`{resources: {limits: {cpu: "4", memory: 8Gi, hugepages-2Mi: 4Mi}},
  containers: [{name: a, resources: {requests: {cpu: "1"}}}, {name: b, resources: {requests: {cpu: 500m}, limits: {hugepages-1Gi: 2Gi}}}]}`),
		},
		{
			name:  "Pod-level requests count a sidecar's requests once, as the API server sums them.",
			input: webPod(`{resources: {requests: {cpu: "1"}}, initContainers: [{name: init, resources: {requests: {cpu: "1"}}}, {name: side, restartPolicy: Always, resources: {requests: {cpu: 500m}}}], containers: [{name: web, resources: {requests: {cpu: 500m}}}]}`),
		},
		{
			name:  "A node's zero hugepages and whole pods are accepted.",
			input: "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: 3500m, hugepages-2Mi: \"0\", pods: \"110\", example.com/foo: \"4\"}}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := loader.Read(strings.NewReader(tc.input), "pods.yaml"); err != nil {
				t.Error(err)
			}
		})
	}
}
