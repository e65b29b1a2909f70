package conformance

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Scenario is one scheduling problem: a cluster and the pod to place in it.
type Scenario struct {
	// Seed is the value Generate was called with; zero for hand-built or
	// minimised scenarios that no seed reproduces.
	Seed uint64
	// Nodes are the cluster's nodes, with unique names.
	Nodes []*v1.Node
	// Pods are already running: each has spec.nodeName set to one of
	// Nodes. A pod without spec.nodeName but with
	// status.nominatedNodeName is pending, nominated to that node by an
	// earlier preemption: only the [PreemptionOracle] sees it (as
	// kube-scheduler's queue would); [Oracle] and kubesched ignore it.
	Pods []*v1.Pod
	// Pod is the pod being scheduled.
	Pod *v1.Pod
	// Objects are the other cluster objects plugins read: Namespaces,
	// Services, ReplicaSets, StatefulSets, ReplicationControllers, the
	// storage kinds, the DRA kinds and PodDisruptionBudgets (see
	// [objectKinds]), as pointers, with unique kinds and names.
	Objects []runtime.Object
}

// Label keys and values are drawn from small sets so that selectors,
// affinities, tolerations and host ports collide often enough to matter.
var (
	zones        = []string{"zone-a", "zone-b", "zone-c"}
	regions      = []string{"region-1", "region-2"}
	diskTypes    = []string{"ssd", "hdd"}
	teams        = []string{"red", "blue", "green"}
	taintKeys    = []string{"dedicated", "gpu", "spot", "maintenance"}
	taintValues  = []string{"", "a", "b"}
	taintEffects = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}
	hostPorts    = []int32{80, 443, 8080}
	hostIPs      = []string{"", "0.0.0.0", "127.0.0.1", "10.0.0.1"}
	protocols    = []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP}
)

// Numeric labels exercise the Gt and Lt operators; "tier" is occasionally
// non-numeric, which Gt and Lt must treat as not matching.
const (
	labelDisk = "disktype"
	labelTeam = "team"
	labelTier = "tier"
	labelGPUs = "gpu-count"
	gpu       = v1.ResourceName("example.com/gpu")
	hugepages = v1.ResourceName("hugepages-2Mi")
)

// labelKeys are the keys a generated selector may ask about, including one
// no node carries.
var labelKeys = []string{v1.LabelHostname, v1.LabelTopologyZone, v1.LabelTopologyRegion, labelDisk, labelTeam, labelTier, labelGPUs, "absent"}

// imageNames groups the names one image may be reported under, the way a
// container runtime lists both the short and the fully qualified name.
// Names without a tag are matched by ImageLocality as ":latest".
var imageNames = [][]string{
	{"docker.io/library/nginx:1.25", "nginx:1.25"},
	{"docker.io/library/busybox:latest"},
	{"busybox:latest"},
	{"registry.k8s.io/pause:3.9"},
	{"gcr.io/project/app:v1", "gcr.io/project/app:stable"},
	{"redis"},
	{"quay.io/prometheus/prometheus:v2.50.0"},
	{"localhost:5000/tools:latest"},
	{"docker.io/library/alpine@sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1"},
}

// containerImages are what pods ask for: mostly names some node has, in
// every spelling, and one no node has.
var containerImages = []string{
	"nginx:1.25", "docker.io/library/nginx:1.25", "busybox", "busybox:latest",
	"docker.io/library/busybox", "registry.k8s.io/pause:3.9", "gcr.io/project/app:v1",
	"redis", "redis:latest", "quay.io/prometheus/prometheus:v2.50.0", "example.com/never-pulled:1",
	// A registry port is not a tag: this one is matched as ":latest".
	"localhost:5000/tools",
	"docker.io/library/alpine@sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1",
}

// generator draws scenario pieces from one seeded source, so a seed fully
// determines its scenario.
type generator struct {
	r *rand.Rand
}

// Generate returns the scenario for seed: 1 to 30 nodes, up to twice as
// many bound pods as nodes, and an incoming pod. Equal seeds give equal
// scenarios. Every object is one the API server would accept and default,
// apart from a few volume zone labels (see [addVolumes]).
//
// Unless KUBESCHED_CONFORMANCE_AFFINITY=0 is in the environment, the pods
// also get labels, namespaces, owners, pod (anti-)affinity and topology spread
// constraints, and the scenario gets Namespaces, Services and controllers;
// see [generateAffinityAndSpread].
//
// Unless KUBESCHED_CONFORMANCE_VOLUMES=0 (see [generateVolumes]), pods
// also get volumes, and the scenario gets the storage objects they use:
// StorageClasses, PersistentVolumes and claims, CSINodes, CSIDrivers,
// CSIStorageCapacities and VolumeAttachments; see [addVolumes]. Its
// randomness comes from a stream of its own, so the seed's nodes and pods
// are those it gives without volumes, plus some node labels and the pods'
// volumes.
//
// Unless KUBESCHED_GEN_DRA=0 (see [generateDRA]), pods also get ResourceClaims, and the scenario gets the DeviceClasses,
// ResourceSlices and claims they use; see [addDRA]. Those too come from a
// stream of their own, and only add to the pods (claims, and requests of
// extended resources that devices back) and to the objects (a Namespace
// may gain a label).
//
// Unless KUBESCHED_GEN_PREEMPTION=0 (see [generatePreemption]), pods also
// get priorities, start times and app labels, some nodes are filled with
// lower-priority pods, and the scenario may get PodDisruptionBudgets and
// a pending pod nominated to a node; see [addPreemption].
func Generate(seed uint64) *Scenario {
	s := generate(seed, generateAffinityAndSpread)
	addObjectGenerators(s)
	return s
}

// addObjectGenerators adds to s what the volume and DRA generators add,
// as their switches say.
func addObjectGenerators(s *Scenario) {
	if generateVolumes {
		addVolumes(s)
	}
	if generateDRA {
		addDRA(s)
	}
	if generatePreemption {
		addPreemption(s)
	}
}

// generate is [Generate] with the affinity and spreading generators on or
// off. Their randomness is drawn after everything else, so a seed's nodes
// and resources are the same either way.
func generate(seed uint64, affinityAndSpread bool) *Scenario {
	return generateSized(seed, affinityAndSpread, 0)
}

// GenerateLarge is [Generate] with numNodes nodes (and up to twice as many
// bound pods): clusters large enough that kubesched's plugins count over
// several workers and merge what they counted, which the small clusters
// of Generate never make them do.
//
// Only one seed in ten gets DRA objects: DynamicResources decides each
// node on its own, with nothing counted across workers, and a ResourceSlice
// per node with claims for the bound pods make a 600-node scenario about
// ten times slower to run through the oracle.
func GenerateLarge(seed uint64, numNodes int) *Scenario {
	s := generateSized(seed, generateAffinityAndSpread, numNodes)
	if generateVolumes {
		addVolumes(s)
	}
	if generateDRA && seed%10 == 0 {
		addDRA(s)
	}
	if generatePreemption {
		addPreemption(s)
	}
	return s
}

// generateSized is generate with numNodes nodes, or 1 to 30 when it is 0.
func generateSized(seed uint64, affinityAndSpread bool, numNodes int) *Scenario {
	g := &generator{r: rand.New(rand.NewPCG(seed, 0x6b75626573636864))}
	s := &Scenario{Seed: seed}
	drawn := 1 + g.r.IntN(30)
	if numNodes <= 0 {
		numNodes = drawn
	}
	for i := range numNodes {
		s.Nodes = append(s.Nodes, g.node(i))
	}
	numPods := g.r.IntN(2*numNodes + 1)
	for i := range numPods {
		p := g.pod(fmt.Sprintf("running-%d", i), 0.01)
		p.Spec.NodeName = g.pick(s.Nodes).Name
		s.Pods = append(s.Pods, p)
	}
	s.Pod = g.incomingPod(s.Nodes)
	if affinityAndSpread {
		g.affinityAndSpread(s)
	}
	return s
}

func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *generator, from []T) T { return from[g.r.IntN(len(from))] }

func (g *generator) pick(nodes []*v1.Node) *v1.Node { return pick(g, nodes) }

func (g *generator) node(i int) *v1.Node {
	name := fmt.Sprintf("node-%d", i)
	n := &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1.LabelHostname: name}},
	}
	labels := n.Labels
	if g.chance(0.8) {
		labels[v1.LabelTopologyZone] = pick(g, zones)
	}
	if g.chance(0.7) {
		labels[v1.LabelTopologyRegion] = pick(g, regions)
	}
	if g.chance(0.5) {
		labels[labelDisk] = pick(g, diskTypes)
	}
	if g.chance(0.3) {
		labels[labelTeam] = pick(g, teams)
	}
	if g.chance(0.5) {
		labels[labelTier] = strconv.Itoa(g.r.IntN(10))
		switch {
		case g.chance(0.1):
			labels[labelTier] = "gold"
		case g.chance(0.05):
			// Still a number to Gt and Lt.
			labels[labelTier] = "0" + labels[labelTier]
		}
	}
	if g.chance(0.3) {
		labels[labelGPUs] = strconv.Itoa(g.r.IntN(9))
	}

	if g.chance(0.3) {
		for range 1 + g.r.IntN(2) {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: pick(g, taintKeys), Value: pick(g, taintValues), Effect: pick(g, taintEffects)})
		}
	}
	if g.chance(0.07) {
		n.Spec.Unschedulable = true
		// The node lifecycle controller adds this taint to cordoned nodes,
		// but not always before the scheduler sees them.
		if g.chance(0.5) {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
		}
	}

	n.Status.Allocatable = g.allocatable()
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()

	for _, names := range imageNames {
		if g.chance(0.3) {
			n.Status.Images = append(n.Status.Images, v1.ContainerImage{
				Names:     names,
				SizeBytes: (1 + g.r.Int64N(3000)) * 1000 * 1000,
			})
		}
	}
	if g.chance(0.6) {
		n.Status.DeclaredFeatures = g.declaredFeatures()
	}
	return n
}

// declaredFeatures returns some of the features nodes declare, sorted as
// the API server keeps them, sometimes with names kube-scheduler does not
// know.
func (g *generator) declaredFeatures() []string {
	var out []string
	for _, f := range []string{"AnUnknownFeature", "ExtendWebSocketsToKubelet", "RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "ZUnknownToo"} {
		if g.chance(0.5) {
			out = append(out, f)
		}
	}
	return out
}

// allocatable is usually a realistic node, sometimes a tiny or empty one,
// so that both fitting and every insufficient-resource reason occur.
func (g *generator) allocatable() v1.ResourceList {
	if g.chance(0.05) {
		return nil
	}
	list := v1.ResourceList{}
	// Zero and missing quantities are rare: they reject nearly every pod.
	if g.chance(0.97) {
		list[v1.ResourceCPU] = *resource.NewMilliQuantity(pick(g, []int64{500, 1000, 2000, 4000, 4000, 8000, 16000}), resource.DecimalSI)
		if g.chance(0.02) {
			list[v1.ResourceCPU] = resource.MustParse("0")
		}
	}
	if g.chance(0.97) {
		list[v1.ResourceMemory] = *resource.NewQuantity(pick(g, []int64{512, 1024, 4096, 16384, 16384, 65536})*1024*1024, resource.BinarySI)
		if g.chance(0.02) {
			list[v1.ResourceMemory] = resource.MustParse("0")
		}
	}
	if g.chance(0.95) {
		list[v1.ResourcePods] = *resource.NewQuantity(pick(g, []int64{0, 1, 3, 10, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110}), resource.DecimalSI)
	}
	if g.chance(0.8) {
		list[v1.ResourceEphemeralStorage] = *resource.NewQuantity(pick(g, []int64{1, 10, 100})*1024*1024*1024, resource.BinarySI)
	}
	if g.chance(0.3) {
		list[gpu] = *resource.NewQuantity(g.r.Int64N(5), resource.DecimalSI)
	}
	if g.chance(0.2) {
		list[hugepages] = *resource.NewQuantity(g.r.Int64N(5)*2*1024*1024, resource.BinarySI)
	}
	return list
}

// pod returns a pod with random containers; the caller decides whether it
// is bound or incoming. bigChance is the probability of each container
// asking for more than most nodes have.
func (g *generator) pod(name string, bigChance float64) *v1.Pod {
	p := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
	}
	for i := range 1 + g.r.IntN(3) {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", i), g.requests(0.8, false, bigChance)))
	}
	if g.chance(0.2) {
		for i := range 1 + g.r.IntN(2) {
			c := g.container(fmt.Sprintf("init%d", i), g.requests(0.8, true, bigChance))
			// Restartable init containers are sidecars: their requests add
			// to the regular containers' instead of overlapping them.
			if g.chance(0.4) {
				always := v1.ContainerRestartPolicyAlways
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
	}
	if g.chance(0.1) {
		p.Spec.Overhead = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(pick(g, []int64{10, 100, 250}), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(pick(g, []int64{16, 128})*1024*1024, resource.BinarySI),
		}
	}
	if g.chance(0.2) {
		c := &p.Spec.Containers[g.r.IntN(len(p.Spec.Containers))]
		for range 1 + g.r.IntN(2) {
			c.Ports = append(c.Ports, g.hostPort())
		}
	}
	if g.chance(0.05) {
		g.podLevelRequests(p)
	}
	return p
}

// podLevelRequests sets spec.resources, which (with the PodLevelResources
// feature, on by default) replaces the containers' cpu and memory in the
// pod's requests. The API server requires it to cover the containers'.
func (g *generator) podLevelRequests(p *v1.Pod) {
	requests := v1.ResourceList{}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		if !g.chance(0.7) {
			continue
		}
		total := resource.Quantity{}
		for _, c := range p.Spec.Containers {
			if q, ok := c.Resources.Requests[name]; ok {
				total.Add(q)
			}
		}
		extra := *resource.NewMilliQuantity(pick(g, []int64{0, 100, 500, 2000}), resource.DecimalSI)
		if name == v1.ResourceMemory {
			extra = *resource.NewQuantity(pick(g, []int64{0, 64, 512})*1024*1024, resource.BinarySI)
		}
		total.Add(extra)
		requests[name] = total
	}
	if len(requests) > 0 {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: requests}
	}
}

func (g *generator) container(name string, requests v1.ResourceList) v1.Container {
	c := v1.Container{Name: name, Image: pick(g, containerImages)}
	if requests != nil {
		c.Resources.Requests = requests
		// Limits don't affect placement, but real pods carry them, and the
		// API server insists on them for extended resources and hugepages.
		_, hasGPU := requests[gpu]
		_, hasHugepages := requests[hugepages]
		if hasGPU || hasHugepages || g.chance(0.3) {
			c.Resources.Limits = requests.DeepCopy()
		}
	}
	return c
}

// requests returns random container requests, or nil with probability
// 1-pRequests; big ones with probability bigChance.
func (g *generator) requests(pRequests float64, init bool, bigChance float64) v1.ResourceList {
	if !g.chance(pRequests) {
		return nil
	}
	list := v1.ResourceList{}
	big := g.chance(bigChance)
	if g.chance(0.9) {
		m := pick(g, []int64{0, 10, 100, 250, 500, 1000})
		if big {
			m = pick(g, []int64{4000, 12000, 32000})
		}
		list[v1.ResourceCPU] = *resource.NewMilliQuantity(m, resource.DecimalSI)
	}
	if g.chance(0.8) {
		mi := pick(g, []int64{0, 64, 200, 512, 1024})
		if big {
			mi = pick(g, []int64{8192, 40000, 100000})
		}
		list[v1.ResourceMemory] = *resource.NewQuantity(mi*1024*1024, resource.BinarySI)
	}
	if g.chance(0.05) {
		list[v1.ResourceEphemeralStorage] = *resource.NewQuantity(pick(g, []int64{1, 5, 50})*1024*1024*1024, resource.BinarySI)
	}
	if !init && g.chance(0.04) {
		list[gpu] = *resource.NewQuantity(1+g.r.Int64N(3), resource.DecimalSI)
	}
	if g.chance(0.02) {
		list[hugepages] = *resource.NewQuantity(2*1024*1024, resource.BinarySI)
	}
	return list
}

func (g *generator) hostPort() v1.ContainerPort {
	port := pick(g, hostPorts)
	cp := v1.ContainerPort{
		ContainerPort: port,
		HostPort:      port,
		HostIP:        pick(g, hostIPs),
		Protocol:      pick(g, protocols),
	}
	// The API server defaults the protocol to TCP, but objects built in Go
	// may leave it empty, and both schedulers must read that as TCP.
	if g.chance(0.03) {
		cp.Protocol = ""
	}
	return cp
}

// incomingPod returns the pod to schedule, with node constraints, and
// sometimes a nominated node. Without [generator.affinityAndSpread] it has
// no ownerReferences or labels that services could select, so default
// topology spreading does not apply.
func (g *generator) incomingPod(nodes []*v1.Node) *v1.Pod {
	p := g.pod("incoming", 0.05)
	if g.chance(0.1) {
		// A pod asking for nothing is scored with default non-zero requests.
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Resources = v1.ResourceRequirements{}
		}
	}
	if g.chance(0.2) {
		p.Spec.NodeSelector = map[string]string{}
		for range 1 + g.r.IntN(2) {
			key, value := g.labelPair(nodes)
			p.Spec.NodeSelector[key] = value
		}
	}
	if g.chance(0.25) {
		ensureNodeAffinity(p).RequiredDuringSchedulingIgnoredDuringExecution = g.requiredAffinity(nodes)
	}
	if g.chance(0.3) {
		na := ensureNodeAffinity(p)
		for range 1 + g.r.IntN(3) {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: 1 + g.r.Int32N(100), Preference: g.selectorTerm(nodes, false)})
		}
	}
	if g.chance(0.5) {
		for range 1 + g.r.IntN(3) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, g.toleration())
		}
	}
	if g.chance(0.05) {
		// Set by an earlier preemption; the node may have gone since.
		p.Status.NominatedNodeName = g.pick(nodes).Name
		if g.chance(0.2) {
			p.Status.NominatedNodeName = "node-that-went-away"
		}
	}
	if g.chance(0.03) {
		p.Spec.NodeName = g.pick(nodes).Name
		if g.chance(0.3) {
			p.Spec.NodeName = "node-that-does-not-exist"
		}
	}
	// Pods that need a node to declare a feature (NodeDeclaredFeatures).
	if g.chance(0.06) {
		p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}
	}
	if g.chance(0.05) {
		hostUsers := g.chance(0.5)
		p.Spec.HostNetwork, p.Spec.HostUsers = true, &hostUsers
	}
	return p
}

func ensureAffinity(p *v1.Pod) *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

func ensureNodeAffinity(p *v1.Pod) *v1.NodeAffinity {
	a := ensureAffinity(p)
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	return a.NodeAffinity
}

// labelPair returns a label some node has, or occasionally a key or value
// no node has.
func (g *generator) labelPair(nodes []*v1.Node) (string, string) {
	if g.chance(0.1) {
		return pick(g, labelKeys), "nowhere"
	}
	n := g.pick(nodes)
	keys := slices.Sorted(maps.Keys(n.Labels))
	key := pick(g, keys)
	return key, n.Labels[key]
}

func (g *generator) requiredAffinity(nodes []*v1.Node) *v1.NodeSelector {
	sel := &v1.NodeSelector{}
	for range 1 + g.r.IntN(2) {
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, g.selectorTerm(nodes, true))
	}
	return sel
}

// selectorTerm returns a term of one or two expressions, sometimes with
// matchFields, which in required terms lets NodeAffinity's PreFilter narrow
// the nodes. Rarely the term is empty, which matches no node.
func (g *generator) selectorTerm(nodes []*v1.Node, required bool) v1.NodeSelectorTerm {
	var term v1.NodeSelectorTerm
	if g.chance(0.03) {
		return term
	}
	if (required && g.chance(0.15)) || g.chance(0.05) {
		op := pick(g, []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn})
		term.MatchFields = append(term.MatchFields, v1.NodeSelectorRequirement{
			Key: metav1.ObjectNameField, Operator: op, Values: []string{g.pick(nodes).Name},
		})
		if g.chance(0.5) {
			return term
		}
	}
	for range 1 + g.r.IntN(2) {
		term.MatchExpressions = append(term.MatchExpressions, g.requirement(nodes))
	}
	return term
}

func (g *generator) requirement(nodes []*v1.Node) v1.NodeSelectorRequirement {
	ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt}
	req := v1.NodeSelectorRequirement{Operator: pick(g, ops)}
	switch req.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		key, value := g.labelPair(nodes)
		req.Key, req.Values = key, []string{value}
		if g.chance(0.3) {
			_, other := g.labelPair(nodes)
			req.Values = append(req.Values, other)
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		req.Key = pick(g, labelKeys)
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		req.Key = pick(g, []string{labelTier, labelGPUs, labelTier, labelGPUs, v1.LabelTopologyZone})
		req.Values = []string{strconv.Itoa(g.r.IntN(10))}
	}
	return req
}

func (g *generator) toleration() v1.Toleration {
	t := v1.Toleration{Operator: pick(g, []v1.TolerationOperator{v1.TolerationOpEqual, v1.TolerationOpExists})}
	if t.Operator == v1.TolerationOpExists && g.chance(0.15) {
		// An empty key with Exists tolerates every taint.
		t.Key = ""
	} else {
		t.Key = pick(g, append([]string{v1.TaintNodeUnschedulable}, taintKeys...))
	}
	if t.Operator == v1.TolerationOpEqual {
		t.Value = pick(g, taintValues)
	}
	if g.chance(0.6) {
		t.Effect = pick(g, taintEffects)
	}
	if t.Effect == v1.TaintEffectNoExecute && g.chance(0.3) {
		seconds := int64(300)
		t.TolerationSeconds = &seconds
	}
	return t
}
