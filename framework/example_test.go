package framework_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// rackFilter is a user's own filter: pods labelled with a rack only fit
// nodes in that rack.
type rackFilter struct{}

func (rackFilter) Name() string { return "Rack" }

func (rackFilter) Filter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	want, ok := pod.Labels["rack"]
	if !ok || ni.Node().Labels["rack"] == want {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) in another rack")
}

// A framework built from a single custom filter.
func ExampleNew() {
	f, err := framework.New(framework.WithPlugin(rackFilter{}, 0))
	if err != nil {
		fmt.Println(err)
		return
	}
	node := func(name, rack string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rack": rack}}}
	}
	nodes := nodeinfo.Build([]*v1.Node{node("n1", "r1"), node("n2", "r2")}, nil)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"rack": "r2"}}}

	res, err := f.Schedule(context.Background(), pod, nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost, res.Diagnosis.NodeStatus("n1"))
	// Output: n2 UnschedulableAndUnresolvable (Rack): node(s) in another rack
}

// A StateKey gives a plugin a typed per-pod slot: written once in
// PreFilter or PreScore, read for every node.
func ExampleStateKey() {
	key := fwk.NewStateKey[[]string]()
	state := fwk.NewCycleState(nil)
	key.Write(state, []string{"computed", "once"})
	v, ok := key.Read(state)
	fmt.Println(v, ok)
	_, ok = key.Read(nil)
	fmt.Println(ok)
	// Output:
	// [computed once] true
	// false
}

// namespaceCache stands in for a controller's namespace informer lister;
// client-go's listers satisfy the same interfaces and plug in the same way.
type namespaceCache map[string]*v1.Namespace

func (c namespaceCache) Get(name string) (*v1.Namespace, error) {
	if ns, ok := c[name]; ok {
		return ns, nil
	}
	return nil, fmt.Errorf("namespace %q not found", name)
}

func (c namespaceCache) List(selector labels.Selector) ([]*v1.Namespace, error) {
	var out []*v1.Namespace
	for _, ns := range c {
		if selector.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out, nil
}

// A controller passes its own listers; with client-go that is
// fwk.Listers{Namespaces: factory.Core().V1().Namespaces().Lister(), ...}.
// Here InterPodAffinity needs the namespaces' labels to see that the
// running database is in a production namespace.
func ExampleWithListers() {
	cache := namespaceCache{"team-a": {ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"env": "prod"}}}}
	f, err := kubesched.DefaultFramework(framework.WithListers(fwk.Listers{Namespaces: cache}))
	if err != nil {
		fmt.Println(err)
		return
	}
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("10")}}}
	}
	db := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team-a", Labels: map[string]string{"app": "db"}}, Spec: v1.PodSpec{NodeName: "n1"}}
	// Keep away from databases in production namespaces.
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			TopologyKey:       "kubernetes.io/hostname",
		}},
	}}}}
	res, err := f.Schedule(context.Background(), web, nodeinfo.Build([]*v1.Node{node("n1"), node("n2")}, []*v1.Pod{db}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost, res.Diagnosis.NodeStatus("n1").Reasons())
	// Output: n2 [node(s) didn't match pod anti-affinity rules]
}

// A pod whose claim is bound to a volume in zone-a can only go to nodes in
// zone-a: WithObjects hands the claim and the volume to VolumeZone (and
// the other volume plugins).
func ExampleWithObjects() {
	claim := &v1.PersistentVolumeClaim{
		// The annotation is how the volume controller marks a finished binding.
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: "pv-a", AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	volume := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-a", Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			ClaimRef:    &v1.ObjectReference{Namespace: "default", Name: "data"},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	f, err := kubesched.DefaultFramework(framework.WithObjects(claim, volume))
	if err != nil {
		fmt.Println(err)
		return
	}
	node := func(name, zone string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelTopologyZone: zone}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("10")}}}
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"}, Spec: v1.PodSpec{Volumes: []v1.Volume{{
		Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}},
	}}}}
	res, err := f.Schedule(context.Background(), pod, nodeinfo.Build([]*v1.Node{node("n1", "zone-b"), node("n2", "zone-a")}, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost, res.Diagnosis.NodeStatus("n1").Plugin(), res.Diagnosis.NodeStatus("n1").Reasons())
	// Output: n2 VolumeZone [node(s) had no available volume zone]
}

// A scheduler keeps its cluster in a cache and schedules each pod on the
// cache's latest snapshot, which the framework trusts never to change: a
// cycle over it costs nothing for the nodes the pod does not need. Placing
// a pod in the cache (AssumePod) makes the next snapshot see it.
func ExampleFramework_ScheduleSnapshot() {
	f, err := kubesched.DefaultFramework()
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := cache.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"n1", "n2", "n3"} {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("10")}}}
		if _, err := c.AddNode(node); err != nil {
			fmt.Println(err)
			return
		}
	}
	for i := range 4 {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default", UID: types.UID(fmt.Sprint("uid-", i))},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("600m")}}}}}}
		res, err := f.ScheduleSnapshot(context.Background(), pod, c.Snapshot())
		if err != nil {
			fmt.Println(err)
			return
		}
		placed := pod.DeepCopy()
		placed.Spec.NodeName = res.SuggestedHost
		if err := c.AssumePod(placed); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(pod.Name, "scored on", len(res.NodeScores()), "nodes")
	}
	// Output:
	// web-0 scored on 3 nodes
	// web-1 scored on 3 nodes
	// web-2 scored on 3 nodes
	// web-3 scored on 3 nodes
}

// Why a pod fits nowhere, node by node: kube-scheduler's verdict, every
// filter that rejects it beyond the first, and what each found.
func ExampleFramework_Explain() {
	f, err := kubesched.DefaultFramework()
	if err != nil {
		fmt.Println(err)
		return
	}
	node := func(name, cpu string, taints ...v1.Taint) *v1.Node {
		return &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1.NodeSpec{Taints: taints},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse(cpu), v1.ResourcePods: resource.MustParse("110")}},
		}
	}
	gpu := v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}
	nodes := nodeinfo.Build([]*v1.Node{node("small", "1"), node("gpu", "2", gpu)}, nil)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")}}}}},
	}

	e, err := f.Explain(context.Background(), pod, nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Err)
	for _, n := range e.Nodes {
		fmt.Printf("%s: kube-scheduler says %s: %s\n", n.Name, n.Status.Plugin(), n.Status.Message())
		for _, v := range n.Filters {
			for _, d := range v.Details {
				fmt.Printf("  %s: %s\n", v.Plugin, d.Message)
			}
		}
	}
	// Output:
	// 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.
	// small: kube-scheduler says NodeResourcesFit: Insufficient cpu
	//   NodeResourcesFit: cpu: the pod requests 1.5, the node has 1 allocatable of which its pods request 0: 500m short; more than the node's allocatable: no eviction would help
	// gpu: kube-scheduler says TaintToleration: node(s) had untolerated taint(s)
	//   TaintToleration: taint gpu=true:NoSchedule is not tolerated
}

// A framework lists its plugins with their extension points and weights;
// here, the ones that score.
func ExampleFramework_Plugins() {
	f, err := kubesched.DefaultFramework()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range f.Plugins() {
		if p.Weight > 0 {
			fmt.Println(p.Name, p.Points, p.Weight)
		}
	}
	// Output:
	// TaintToleration [PreFilter Filter PreScore Score] 3
	// NodeAffinity [PreFilter Filter PreScore Score] 2
	// NodeResourcesFit [PreFilter Filter PreScore Score] 1
	// VolumeBinding [PreFilter Filter PreScore Score Reserve] 1
	// PodTopologySpread [PreFilter Filter PreScore Score] 2
	// InterPodAffinity [PreFilter Filter PreScore Score] 2
	// DynamicResources [PreEnqueue PreFilter Filter PostFilter Score Reserve] 2
	// NodeResourcesBalancedAllocation [PreScore Score] 1
	// ImageLocality [PreScore Score] 1
}
