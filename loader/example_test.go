package loader_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/loader"
)

// What kubectl get nodes,pods,events -A -o yaml prints is a List: the
// nodes and pods are kept, the event counted.
func Example() {
	const dump = `apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: node-a
  status:
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-1
    namespace: default
  spec:
    containers:
    - {name: web, image: nginx, resources: {requests: {cpu: 500m}}}
    nodeName: node-a
  status:
    phase: Running
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-2
    namespace: default
  spec:
    containers:
    - {name: web, image: nginx, resources: {requests: {cpu: 500m}}}
  status:
    phase: Pending
- apiVersion: v1
  kind: Event
  metadata:
    name: web-2.187a9c3e5b7d1f02
    namespace: default
  reason: FailedScheduling
kind: List
metadata:
  resourceVersion: ""
`
	c, err := loader.Read(strings.NewReader(dump), "dump.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d node, %d bound pod, %d pending pod: %s\n", len(c.Nodes), len(c.Bound()), len(c.Pending()), c.Pending()[0].Name)
	fmt.Println("skipped:", c.Skipped)
	// Output:
	// 1 node, 1 bound pod, 1 pending pod: web-2
	// skipped: map[/v1, Kind=Event:1]
}

// A malformed object is an error that says where it is.
func ExampleRead_error() {
	const dump = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  containers:
  - name: web
    resources:
      requests:
        cpu: 12x
`
	_, err := loader.Read(strings.NewReader(dump), "dump.yaml")
	fmt.Println(err)
	// Output:
	// dump.yaml: document 1 (Pod default/web): quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'
}

func ExampleLoad() {
	c, err := loader.Load("testdata/kubectl-get.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range c.Nodes {
		fmt.Printf("%s: %s cpu, %s\n", n.Name, n.Status.Allocatable.Cpu(), n.Labels["topology.kubernetes.io/zone"])
	}
	for _, p := range c.Pending() {
		fmt.Printf("pending %s/%s asks for %s cpu\n", p.Namespace, p.Name, p.Spec.Containers[0].Resources.Requests.Cpu())
	}
	fmt.Printf("%d pods bound, %d other objects\n", len(c.Bound()), len(c.Objects))
	for _, w := range c.Workloads {
		m := w.(metav1.Object)
		fmt.Printf("workload %s %s/%s\n", w.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName())
	}
	for _, kind := range slices.Sorted(maps.Keys(c.Skipped)) {
		fmt.Printf("skipped %s\n", kind)
	}
	// Output:
	// cp-1: 4 cpu, us-east-1a
	// worker-a: 8 cpu, us-east-1a
	// worker-b: 8 cpu, us-east-1b
	// worker-c: 16 cpu, us-east-1c
	// pending default/web-5d8f7b9c6d-z6wbn asks for 500m cpu
	// pending default/train-llm-8kq2d asks for 64 cpu
	// 6 pods bound, 5 other objects
	// workload Deployment default/web
	// skipped /v1, Kind=Event
}

// A pod written by hand has no namespace and only limits: Default gives
// it what the API server would have.
func ExampleCluster_Default() {
	c, err := loader.Read(strings.NewReader(`
apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  containers:
  - name: train
    resources: {limits: {cpu: "8", memory: 64Gi}}
`), "train.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := c.Default(loader.DefaultOptions{})
	p := c.Pods[0]
	fmt.Printf("%s/%s requests %s cpu\n", p.Namespace, p.Name, p.Spec.Containers[0].Resources.Requests.Cpu())
	fmt.Println(r)
	// Output:
	// default/train requests 8 cpu
	// defaulted 1 object the API server would have: namespace default (1 pod), requests from limits (1 pod), schedulerName default-scheduler (1 pod), tolerations of not-ready and unreachable nodes (1 pod)
}

// A Deployment becomes a ReplicaSet and the pending pods of it.
func ExampleCluster_ExpandWorkloads() {
	c, err := loader.Read(strings.NewReader(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, resources: {requests: {cpu: 500m}}}]
`), "web.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := c.ExpandWorkloads()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	fmt.Printf("%d pending pods, of %s\n", len(c.Pending()), metav1.GetControllerOf(c.Pods[0]).Kind)
	// Output:
	// created 2 pods for 1 workload as their controllers would: Deployment default/web 2
	// 2 pending pods, of ReplicaSet
}

// Two files with a node of one name: Check names both places, once
// defaulting has given every object its name and namespace.
func ExampleCluster_Check() {
	c, err := loader.Read(strings.NewReader("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"), "more.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes, err := loader.Read(strings.NewReader(`
--- {apiVersion: v1, kind: Node, metadata: {name: n0}}
--- {apiVersion: v1, kind: Node, metadata: {name: n2}}
--- {apiVersion: v1, kind: Node, metadata: {name: n1}}
`), "nodes.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Merge(nodes)
	c.Default(loader.DefaultOptions{})
	fmt.Println(c.Check())
	// Output:
	// nodes.yaml: document 3: Node "n1" is also in more.yaml: document 1
}

// A resource the API server's validation refuses is an error in its
// words, with the field.
func ExampleRead_invalid() {
	const dump = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - name: web
    resources:
      requests: {cpu: "2"}
      limits: {cpu: "1"}
`
	_, err := loader.Read(strings.NewReader(dump), "pods.yaml")
	fmt.Println(err)
	// Output:
	// pods.yaml: document 1 (Pod default/web): spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1
}
