package conformance

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// draByDefault is whether [Generate] gives scenarios Dynamic Resource
// Allocation objects when KUBESCHED_GEN_DRA is unset: on, since
// DynamicResources is in kubesched's default profile.
const draByDefault = true

// generateDRA turns on, for [Generate], the generators of this file:
// KUBESCHED_GEN_DRA=1 turns them on, =0 off, and otherwise [draByDefault]
// decides.
var generateDRA = envSwitch("KUBESCHED_GEN_DRA", draByDefault)

// draStream is the second word of the DRA generators' random source, so
// that a seed's nodes, pods, affinities and volumes are the same with DRA
// objects as without.
const draStream = 0x647261

// taintRuleStream is the second word of the random source of the
// DeviceTaintRules [addDRA] makes, so that a seed's other DRA objects are
// the same with rules as without.
const taintRuleStream = 0x72756c6573

// generateTaintRules has [addDRA] make DeviceTaintRules (see
// [draGenerator.taintRules]), for a build whose release reads them. The
// tests turn it off when the release under test does not: v1.36.3, whose
// API types have no DeviceTaintRule, could not even decode them.
var generateTaintRules = true

// DRA drivers: GPUs are local to a node, NICs are network-attached and
// reachable from a zone's nodes or from every node.
const (
	driverGPU = "gpu.example.com"
	driverNIC = "nic.example.com"
)

// Names the API defines or controllers use.
const (
	// adminAccessLabel marks the namespaces whose claims may ask for admin
	// access to devices.
	adminAccessLabel = "resource.kubernetes.io/admin-access"
	// podClaimNameAnnotation is set by the ResourceClaim controller on a
	// claim it generates from a template, naming the pod's claim entry.
	podClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name"
	// nicResource is the extended resource NIC classes may back; no node
	// has it as allocatable, so only DRA can provide it.
	nicResource = v1.ResourceName("example.com/nic")
	// missingDeviceClass is a class claims name and no scenario has.
	missingDeviceClass = "tpu"
	// claimTemplate is the ResourceClaimTemplate pods name; the scheduler
	// never reads templates, only the claims made from them.
	claimTemplate = "devices"
)

// deviceClasses are the classes a scenario may have. The last three are
// bad input: a selector that does not compile, one that selects nothing,
// and one that fails at runtime on every device (a misspelt attribute).
var deviceClasses = []struct{ name, expression string }{
	{"gpu", `device.driver == "gpu.example.com"`},
	{"gpu-a100", `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"`},
	{"gpu-large", `device.driver == "gpu.example.com" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`},
	{"gpu-partition", `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].partition`},
	{"nic", `device.driver == "nic.example.com"`},
	{"broken", `device.driver ==`},
	{"nothing", `device.driver == "none.example.com"`},
	{"gpu-misspelt", `device.attributes["gpu.example.com"].modle == "a100"`},
}

// badClasses counts the bad classes at the end of [deviceClasses].
const badClasses = 3

// Device properties are drawn from small sets so that class and request
// selectors, and matchAttribute constraints, split devices often.
var (
	gpuModels      = []string{"a100", "h100", "t4"}
	gpuMemoryGi    = []int64{16, 40, 80}
	driverVersions = []string{"1.2.0", "2.0.1"}
	deviceTaints   = []string{"example.com/unhealthy", "example.com/maintenance"}
	deviceEffects  = []resourceapi.DeviceTaintEffect{resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute, resourceapi.DeviceTaintEffectNone}
	nicBandwidths  = []int64{10, 25, 100}
	// classCreation is when the first class was created; the API server
	// sets creationTimestamp, and the newest of two classes naming one
	// extended resource backs it.
	classCreation = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Partitionable GPUs: a counter set of partitionMemoryGi shared by a
// whole-GPU device and its halves and quarters.
const (
	partitionMemoryGi = 80
	partitionCounters = "gpu-counters"
)

// shareGi is the bandwidth a share of a NIC takes when its claim asks for
// none: the NICs' default.
const shareGi = 5

// draDevice is a device a generated allocation may hold.
type draDevice struct {
	driver, pool, name string
	// class is the DeviceClass a claim for this device names.
	class string
	// node is the node a node-local device is on; zone the zone whose
	// nodes reach a network-attached one, or "" when every node does.
	node, zone string
	// shared devices allow multiple allocations, each consuming some of
	// their bandwidthGi.
	shared      bool
	bandwidthGi int64
	// memoryGi is what a GPU partition takes from its pool's counters.
	memoryGi int64
}

func (d *draDevice) id() string { return d.driver + "/" + d.pool + "/" + d.name }

// reachableFrom reports whether an allocation of d can be used on node.
func (d *draDevice) reachableFrom(node *v1.Node) bool {
	switch {
	case d.node != "":
		return d.node == node.Name
	case d.zone != "":
		return node.Labels[v1.LabelTopologyZone] == d.zone
	}
	return true
}

// allocationSelector is the node selector kube-scheduler writes into an
// allocation of d.
func (d *draDevice) allocationSelector() *v1.NodeSelector {
	switch {
	case d.node != "":
		return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{d.node}},
		}}}}
	case d.zone != "":
		return zoneSelector(d.zone)
	}
	return nil
}

func zoneSelector(zone string) *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}},
	}}}}
}

// draGenerator builds the DRA objects of one scenario and keeps what
// allocations may take.
type draGenerator struct {
	*generator
	s *Scenario
	// classes are the scenario's DeviceClasses by name.
	classes map[string]*resourceapi.DeviceClass
	// slices and claims are the scenario's, in creation order.
	slices []*resourceapi.ResourceSlice
	claims []*resourceapi.ResourceClaim
	// devices are those an allocation may take: of complete, valid pools
	// at their newest generation.
	devices []*draDevice
	// taken are the ids of devices allocated whole.
	taken map[string]bool
	// partitionsUsed is the memory, in GiB, allocated partitions take from
	// each pool's counters; bandwidthUsed the bandwidth, in GiB, shares
	// take from each shared device.
	partitionsUsed map[string]int64
	bandwidthUsed  map[string]int64
	// shares counts the share IDs given out.
	shares int
	// allocated are the allocated claims, which pods may share.
	allocated []*resourceapi.ResourceClaim
	// bad is the scenario's bad DeviceClass, if it has one.
	bad string
}

// addDRA gives s Dynamic Resource Allocation objects, drawn from a random
// stream of their own (see [draStream]): DeviceClasses with CEL selectors
// over device attributes and capacity, some backing extended resources,
// and a few bad ones; ResourceSlices of GPUs on nodes (pools split in two,
// at an old generation beside a newer one, incomplete, with duplicate
// device names, tainted devices, partitionable GPUs sharing counters) and
// of NICs reached from a zone or from every node (some shared between
// claims by bandwidth). Bound pods get allocated ResourceClaims, made
// directly, from templates or for their extended resources, so devices
// run out. The incoming pod, in four scenarios in ten, gets claims
// of every kind (exact counts, all devices, prioritized lists, admin
// access, matchAttribute constraints, tolerations, capacity requests,
// claims shared with bound pods or already allocated for it, and claims
// missing, being deleted, or not its own) or asks for extended resources
// that DeviceClasses back. With [generateTaintRules], some scenarios get
// DeviceTaintRules too, last.
func addDRA(s *Scenario) {
	g := &draGenerator{
		generator:      &generator{r: rand.New(rand.NewPCG(s.Seed, draStream))},
		s:              s,
		classes:        map[string]*resourceapi.DeviceClass{},
		taken:          map[string]bool{},
		partitionsUsed: map[string]int64{},
		bandwidthUsed:  map[string]int64{},
	}
	g.deviceClasses()
	for _, n := range s.Nodes {
		if g.chance(0.85) {
			g.nodeGPUs(n)
		}
		if g.chance(0.3) {
			g.partitionableGPU(n)
		}
	}
	if g.chance(0.85) {
		g.networkNICs()
	}
	for _, p := range s.Pods {
		if g.chance(0.4) {
			g.boundPodClaim(p)
		}
		if g.chance(0.05) {
			g.boundPodExtendedResources(p)
		}
	}
	if g.chance(0.1) {
		g.leftoverAllocation()
	}
	if g.chance(0.4) {
		g.incomingPodClaims()
	}
	if g.chance(0.12) {
		g.incomingPodExtendedResources()
	}

	// In name order, as a scheduler starting up gets them.
	for _, name := range slices.Sorted(maps.Keys(g.classes)) {
		s.Objects = append(s.Objects, g.classes[name])
	}
	for _, slice := range g.slices {
		s.Objects = append(s.Objects, slice)
	}
	for _, claim := range g.claims {
		s.Objects = append(s.Objects, claim)
	}
	if generateTaintRules {
		g.taintRules()
	}
}

// deviceClasses makes nearly every good class and, in a few scenarios,
// one bad one. The gpu class usually backs example.com/gpu, which some
// nodes also have from a device plugin; gpu-a100 sometimes backs it too,
// created later, earlier or at the same time; nic sometimes backs
// example.com/nic.
func (g *draGenerator) deviceClasses() {
	bad := -1
	if g.chance(0.1) {
		bad = len(deviceClasses) - badClasses + g.r.IntN(badClasses)
	}
	for i, c := range deviceClasses {
		good := i < len(deviceClasses)-badClasses
		if good && !g.chance(0.95) || !good && i != bad {
			continue
		}
		class := &resourceapi.DeviceClass{
			TypeMeta: metav1.TypeMeta{APIVersion: resourceapi.SchemeGroupVersion.String(), Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              c.name,
				UID:               types.UID("uid-deviceclass-" + c.name),
				CreationTimestamp: metav1.NewTime(classCreation.Add(time.Duration(g.r.IntN(3)) * time.Hour)),
			},
			Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: c.expression}}}},
		}
		switch {
		case c.name == "gpu" && g.chance(0.6), c.name == "gpu-a100" && g.chance(0.2):
			class.Spec.ExtendedResourceName = ptr.To(string(gpu))
		case c.name == "nic" && g.chance(0.4):
			class.Spec.ExtendedResourceName = ptr.To(string(nicResource))
		}
		g.classes[c.name] = class
		if i == bad {
			g.bad = c.name
		}
	}
}

// slice returns a ResourceSlice of driver's pool, to be completed by the
// caller, and adds it to the scenario.
func (g *draGenerator) slice(name, driver, pool string, generation, count int64) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: resourceapi.SchemeGroupVersion.String(), Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-resourceslice-" + name)},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: driver,
			Pool:   resourceapi.ResourcePool{Name: pool, Generation: generation, ResourceSliceCount: count},
		},
	}
	g.slices = append(g.slices, s)
	return s
}

// gpuDevice returns a whole GPU, sometimes tainted.
func (g *draGenerator) gpuDevice(name string) resourceapi.Device {
	d := resourceapi.Device{
		Name: name,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"model":         {StringValue: ptr.To(pick(g.generator, gpuModels))},
			"partition":     {BoolValue: ptr.To(false)},
			"numa":          {IntValue: ptr.To(int64(g.r.IntN(2)))},
			"driverVersion": {VersionValue: ptr.To(pick(g.generator, driverVersions))},
		},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			"memory": {Value: *resource.NewQuantity(pick(g.generator, gpuMemoryGi)<<30, resource.BinarySI)},
		},
	}
	if g.chance(0.1) {
		d.Taints = []resourceapi.DeviceTaint{{Key: pick(g.generator, deviceTaints), Effect: pick(g.generator, deviceEffects)}}
	}
	return d
}

// nodeGPUs publishes 2 to 4 GPUs local to n, in a pool named after it:
// in one slice or split over two, sometimes with a slice of the pool's
// older generation left beside them, and rarely incomplete (a slice
// missing) or invalid (a device name twice).
func (g *draGenerator) nodeGPUs(n *v1.Node) {
	pool := n.Name
	generation := int64(1)
	if g.chance(0.15) {
		old := g.slice(n.Name+"-gpu-old", driverGPU, pool, generation, 1)
		old.Spec.NodeName = ptr.To(n.Name)
		for i := range 2 {
			old.Spec.Devices = append(old.Spec.Devices, g.gpuDevice(fmt.Sprintf("gpu-%d", i)))
		}
		generation++
	}
	var devices []resourceapi.Device
	for i := range 2 + g.r.IntN(3) {
		devices = append(devices, g.gpuDevice(fmt.Sprintf("gpu-%d", i)))
	}
	parts := [][]resourceapi.Device{devices}
	if len(devices) > 1 && g.chance(0.3) {
		half := len(devices) / 2
		parts = [][]resourceapi.Device{devices[:half], devices[half:]}
	}
	count := int64(len(parts))
	incomplete := g.chance(0.07)
	if incomplete {
		count++
	}
	invalid := len(parts) == 2 && g.chance(0.05)
	if invalid {
		duplicate := parts[0][0]
		duplicate.Attributes = map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To("t4")}}
		parts[1] = append(slices.Clone(parts[1]), duplicate)
	}
	for i, part := range parts {
		s := g.slice(fmt.Sprintf("%s-gpu-%d", n.Name, i), driverGPU, pool, generation, count)
		s.Spec.NodeName = ptr.To(n.Name)
		s.Spec.Devices = part
	}
	if incomplete || invalid {
		return
	}
	for _, d := range devices {
		class := "gpu"
		if *d.Attributes["model"].StringValue == "a100" && g.chance(0.5) {
			class = "gpu-a100"
		}
		g.devices = append(g.devices, &draDevice{driver: driverGPU, pool: pool, name: d.Name, class: class, node: n.Name})
	}
}

// partitionableGPU publishes one GPU of n that can be allocated whole, as
// two halves or as four quarters: a slice with the counter set, and one
// with the devices consuming it.
func (g *draGenerator) partitionableGPU(n *v1.Node) {
	pool := n.Name + "-partitions"
	counters := g.slice(n.Name+"-gpu-counters", driverGPU, pool, 1, 2)
	counters.Spec.NodeName = ptr.To(n.Name)
	counters.Spec.SharedCounters = []resourceapi.CounterSet{{
		Name:     partitionCounters,
		Counters: map[string]resourceapi.Counter{"memory": {Value: *resource.NewQuantity(partitionMemoryGi<<30, resource.BinarySI)}},
	}}
	devices := g.slice(n.Name+"-gpu-partitions", driverGPU, pool, 1, 2)
	devices.Spec.NodeName = ptr.To(n.Name)
	numa := int64(g.r.IntN(2))
	driverVersion := pick(g.generator, driverVersions)
	for _, part := range []struct {
		name     string
		memoryGi int64
	}{{"whole", 80}, {"half-0", 40}, {"half-1", 40}, {"quarter-0", 20}, {"quarter-1", 20}, {"quarter-2", 20}, {"quarter-3", 20}} {
		memory := *resource.NewQuantity(part.memoryGi<<30, resource.BinarySI)
		devices.Spec.Devices = append(devices.Spec.Devices, resourceapi.Device{
			Name: part.name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"model":         {StringValue: ptr.To("a100")},
				"partition":     {BoolValue: ptr.To(true)},
				"numa":          {IntValue: ptr.To(numa)},
				"driverVersion": {VersionValue: ptr.To(driverVersion)},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: memory}},
			ConsumesCounters: []resourceapi.DeviceCounterConsumption{{
				CounterSet: partitionCounters,
				Counters:   map[string]resourceapi.Counter{"memory": {Value: memory}},
			}},
		})
		g.devices = append(g.devices, &draDevice{driver: driverGPU, pool: pool, name: part.name, class: "gpu-partition", node: n.Name, memoryGi: part.memoryGi})
	}
}

// networkNICs publishes one or two pools of NICs: one reached from a
// zone's nodes, or from every node. Some NICs allow multiple
// allocations, each taking some of their bandwidth.
func (g *draGenerator) networkNICs() {
	for i := range 1 + g.r.IntN(2) {
		zone := ""
		if g.chance(0.4) {
			zone = pick(g.generator, zones)
		}
		pool := fmt.Sprintf("nic-%d", i)
		s := g.slice(pool, driverNIC, pool, 1, 1)
		if zone == "" {
			s.Spec.AllNodes = ptr.To(true)
		} else {
			s.Spec.NodeSelector = zoneSelector(zone)
		}
		for j := range 1 + g.r.IntN(3) {
			bandwidth := pick(g.generator, nicBandwidths)
			d := resourceapi.Device{
				Name:       fmt.Sprintf("nic-%d", j),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"bandwidth": {IntValue: ptr.To(bandwidth)}},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					"bandwidth": {Value: *resource.NewQuantity(bandwidth<<30, resource.BinarySI)},
				},
			}
			shared := g.chance(0.4)
			if shared {
				d.AllowMultipleAllocations = ptr.To(true)
				d.Capacity["bandwidth"] = resourceapi.DeviceCapacity{
					Value: d.Capacity["bandwidth"].Value,
					RequestPolicy: &resourceapi.CapacityRequestPolicy{
						Default:    resource.NewQuantity(shareGi<<30, resource.BinarySI),
						ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: resource.NewQuantity(1<<30, resource.BinarySI), Step: resource.NewQuantity(1<<30, resource.BinarySI)},
					},
				}
			}
			s.Spec.Devices = append(s.Spec.Devices, d)
			g.devices = append(g.devices, &draDevice{driver: driverNIC, pool: pool, name: d.Name, class: "nic", zone: zone, shared: shared, bandwidthGi: bandwidth})
		}
	}
}

// free returns the devices an allocation usable on node may still take.
func (g *draGenerator) free(node *v1.Node) []*draDevice {
	var out []*draDevice
	for _, d := range g.devices {
		if !d.reachableFrom(node) || g.taken[d.id()] {
			continue
		}
		if d.memoryGi > 0 && g.partitionsUsed[d.pool]+d.memoryGi > partitionMemoryGi {
			continue
		}
		if d.shared && g.bandwidthUsed[d.id()]+shareGi > d.bandwidthGi {
			continue
		}
		out = append(out, d)
	}
	return out
}

// take records d as allocated and returns its allocation result for
// request. A shared device gives a share of its bandwidth.
func (g *draGenerator) take(d *draDevice, request string) resourceapi.DeviceRequestAllocationResult {
	result := resourceapi.DeviceRequestAllocationResult{Request: request, Driver: d.driver, Pool: d.pool, Device: d.name}
	switch {
	case d.shared:
		g.shares++
		g.bandwidthUsed[d.id()] += shareGi
		result.ShareID = ptr.To(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", g.shares)))
		result.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{"bandwidth": *resource.NewQuantity(shareGi<<30, resource.BinarySI)}
	case d.memoryGi > 0:
		g.partitionsUsed[d.pool] += d.memoryGi
		g.taken[d.id()] = true
	default:
		g.taken[d.id()] = true
	}
	return result
}

// claim returns a ResourceClaim in namespace with the finalizer that
// protects allocated claims, and adds it to the scenario.
func (g *draGenerator) claim(namespace, name string, spec resourceapi.ResourceClaimSpec) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: resourceapi.SchemeGroupVersion.String(), Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-resourceclaim-" + namespace + "-" + name)},
		Spec:       spec,
	}
	g.claims = append(g.claims, c)
	return c
}

// allocate allocates claim, with results, usable where devices' node
// selectors (all alike) allow, and reserves it for pods.
func (g *draGenerator) allocate(claim *resourceapi.ResourceClaim, selector *v1.NodeSelector, results []resourceapi.DeviceRequestAllocationResult, pods ...*v1.Pod) {
	claim.Finalizers = []string{resourceapi.Finalizer}
	claim.Status.Allocation = &resourceapi.AllocationResult{
		Devices:      resourceapi.DeviceAllocationResult{Results: results},
		NodeSelector: selector,
	}
	for _, p := range pods {
		reserveFor(claim, p)
	}
	g.allocated = append(g.allocated, claim)
}

func reserveFor(claim *resourceapi.ResourceClaim, p *v1.Pod) {
	claim.Status.ReservedFor = append(claim.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID})
}

// exactRequest asks for count devices of class.
func exactRequest(name, class string, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count,
	}}
}

// boundPodClaim gives bound pod p a claim allocated with devices its node
// reaches, or has it share another pod's allocated claim usable there.
// The claim is the pod's own, generated from a template, half of the time.
func (g *draGenerator) boundPodClaim(p *v1.Pod) {
	node := g.nodeOf(p)
	if g.chance(0.15) {
		for _, c := range g.shareable(p) {
			if len(c.Status.ReservedFor) > 0 && g.usableOn(c, node) {
				reserveFor(c, p)
				addPodClaim(p, "shared", c.Name, "")
				return
			}
		}
	}
	free := g.free(node)
	if len(free) == 0 {
		return
	}
	first := pick(g.generator, free)
	devices := []*draDevice{first}
	// A second device of the same class and place, when there is one.
	if g.chance(0.3) {
		for _, d := range free {
			if d != first && d.class == first.class && d.node == first.node && d.zone == first.zone && !d.shared && !first.shared && d.memoryGi == 0 {
				devices = append(devices, d)
				break
			}
		}
	}
	var results []resourceapi.DeviceRequestAllocationResult
	for _, d := range devices {
		results = append(results, g.take(d, "devices"))
	}
	spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest("devices", first.class, int64(len(devices)))}}}
	claim := g.podClaim(p, first.class, spec, g.chance(0.5))
	g.allocate(claim, first.allocationSelector(), results, p)
}

// podClaim makes p's claim named podClaim, directly or, when generated, as
// the ResourceClaim controller makes it from a template: named after the
// pod with a random suffix, owned by the pod, and recorded in the pod's
// status.
func (g *draGenerator) podClaim(p *v1.Pod, podClaim string, spec resourceapi.ResourceClaimSpec, generated bool) *resourceapi.ResourceClaim {
	if !generated {
		c := g.claim(p.Namespace, p.Name+"-"+podClaim, spec)
		addPodClaim(p, podClaim, c.Name, "")
		return c
	}
	c := g.claim(p.Namespace, fmt.Sprintf("%s-%s-%s", p.Name, podClaim, g.suffix()), spec)
	c.Annotations = map[string]string{podClaimNameAnnotation: podClaim}
	c.OwnerReferences = []metav1.OwnerReference{podOwner(p)}
	addPodClaim(p, podClaim, "", claimTemplate)
	p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: podClaim, ResourceClaimName: ptr.To(c.Name)})
	return c
}

func podOwner(p *v1.Pod) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// suffix is the five random characters generated names end with.
func (g *draGenerator) suffix() string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}
	return string(b)
}

// addPodClaim adds a pod claim entry naming claim or template, and lets
// the first container use it.
func addPodClaim(p *v1.Pod, name, claim, template string) {
	pc := v1.PodResourceClaim{Name: name}
	if claim != "" {
		pc.ResourceClaimName = ptr.To(claim)
	}
	if template != "" {
		pc.ResourceClaimTemplateName = ptr.To(template)
	}
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, pc)
	c := &p.Spec.Containers[0]
	c.Resources.Claims = append(c.Resources.Claims, v1.ResourceClaim{Name: name})
}

func (g *draGenerator) nodeOf(p *v1.Pod) *v1.Node {
	for _, n := range g.s.Nodes {
		if n.Name == p.Spec.NodeName {
			return n
		}
	}
	return &v1.Node{}
}

// usableOn reports whether an allocated claim's node selector admits node.
func (g *draGenerator) usableOn(c *resourceapi.ResourceClaim, node *v1.Node) bool {
	sel := c.Status.Allocation.NodeSelector
	if sel == nil {
		return true
	}
	for _, r := range sel.NodeSelectorTerms[0].MatchFields {
		if !slices.Contains(r.Values, node.Name) {
			return false
		}
	}
	for _, r := range sel.NodeSelectorTerms[0].MatchExpressions {
		if !slices.Contains(r.Values, node.Labels[r.Key]) {
			return false
		}
	}
	return true
}

// boundPodExtendedResources gives bound pod p, on a node without
// example.com/gpu from a device plugin, what kube-scheduler writes for a
// pod asking for it when a DeviceClass backs it: a request in its first
// container, and a claim for the pod's extended resources, allocated with
// a GPU of the node.
func (g *draGenerator) boundPodExtendedResources(p *v1.Pod) {
	node := g.nodeOf(p)
	if _, ok := node.Status.Allocatable[gpu]; ok {
		return
	}
	var free []*draDevice
	for _, d := range g.free(node) {
		if d.driver == driverGPU && d.memoryGi == 0 {
			free = append(free, d)
		}
	}
	if len(free) == 0 {
		return
	}
	c := &p.Spec.Containers[0]
	one := *resource.NewQuantity(1, resource.DecimalSI)
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	if c.Resources.Limits == nil {
		c.Resources.Limits = v1.ResourceList{}
	}
	c.Resources.Requests[gpu], c.Resources.Limits[gpu] = one, one
	// Requests are named after the container's index and the resource's
	// index among its sorted requests.
	names := make([]string, 0, len(c.Resources.Requests))
	for name := range c.Resources.Requests {
		names = append(names, string(name))
	}
	slices.Sort(names)
	request := fmt.Sprintf("container-%d-request-%d", len(p.Spec.InitContainers), slices.Index(names, string(gpu)))
	spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest(request, "gpu", 1)}}}
	claim := g.claim(p.Namespace, fmt.Sprintf("%s-extended-resources-%s", p.Name, g.suffix()), spec)
	claim.Annotations = map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"}
	claim.OwnerReferences = []metav1.OwnerReference{podOwner(p)}
	d := pick(g.generator, free)
	g.allocate(claim, d.allocationSelector(), []resourceapi.DeviceRequestAllocationResult{g.take(d, request)}, p)
	p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{
		ResourceClaimName: claim.Name,
		RequestMappings:   []v1.ContainerExtendedResourceRequest{{ContainerName: c.Name, ResourceName: string(gpu), RequestName: request}},
	}
}

// leftoverAllocation allocates a claim no pod uses any more: its devices
// stay taken until the claim is deallocated.
func (g *draGenerator) leftoverAllocation() {
	if len(g.s.Nodes) == 0 {
		return
	}
	node := g.pick(g.s.Nodes)
	free := g.free(node)
	if len(free) == 0 {
		return
	}
	d := pick(g.generator, free)
	spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest("devices", d.class, 1)}}}
	claim := g.claim(metav1.NamespaceDefault, "leftover", spec)
	g.allocate(claim, d.allocationSelector(), []resourceapi.DeviceRequestAllocationResult{g.take(d, "devices")})
}

// incomingPodClaims gives the incoming pod one to three claims, each of a
// kind drawn by weight.
func (g *draGenerator) incomingPodClaims() {
	p := g.s.Pod
	numClaims := 1
	if g.chance(0.3) {
		numClaims = 2
		if g.chance(0.15) {
			numClaims = 3
		}
	}
	for i := range numClaims {
		name := fmt.Sprintf("claim-%d", i)
		switch r := g.r.Float64(); {
		case r < 0.45:
			g.podClaim(p, name, g.claimSpec(p), false)
		case r < 0.65:
			g.podClaim(p, name, g.claimSpec(p), true)
		case r < 0.74:
			if !g.shareAllocatedClaim(p, name) {
				g.podClaim(p, name, g.claimSpec(p), false)
			}
		case r < 0.80:
			g.allocatedForIncoming(p, name)
		case r < 0.85:
			// Missing: never created, or already deleted.
			addPodClaim(p, name, p.Name+"-"+name, "")
		case r < 0.89:
			c := g.podClaim(p, name, g.claimSpec(p), false)
			c.Finalizers = []string{resourceapi.Finalizer}
			c.DeletionTimestamp = new(deletionTime)
			c.DeletionGracePeriodSeconds = new(int64(0))
		case r < 0.92:
			// The controller has not made the claim yet.
			addPodClaim(p, name, "", claimTemplate)
		case r < 0.94:
			// The controller decided that no claim is needed.
			addPodClaim(p, name, "", claimTemplate)
			p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: name})
		case r < 0.97:
			// Generated for another pod of the same name, since deleted.
			c := g.podClaim(p, name, g.claimSpec(p), true)
			c.OwnerReferences[0].UID = "uid-an-earlier-incoming"
		default:
			spec := g.claimSpec(p)
			spec.Devices.Requests[0] = exactRequest(spec.Devices.Requests[0].Name, missingDeviceClass, 1)
			g.podClaim(p, name, spec, false)
		}
	}
}

// shareAllocatedClaim has p use an allocated claim of its namespace that
// bound pods use, as pods sharing a claim do. It returns false when there
// is none.
func (g *draGenerator) shareAllocatedClaim(p *v1.Pod, name string) bool {
	candidates := g.shareable(p)
	if len(candidates) == 0 {
		return false
	}
	addPodClaim(p, name, pick(g.generator, candidates).Name, "")
	return true
}

// shareable returns the allocated claims p may use besides its own: those
// of its namespace that no pod owns and p does not use yet.
func (g *draGenerator) shareable(p *v1.Pod) []*resourceapi.ResourceClaim {
	var out []*resourceapi.ResourceClaim
	for _, c := range g.allocated {
		used := slices.ContainsFunc(p.Spec.ResourceClaims, func(pc v1.PodResourceClaim) bool {
			return ptr.Deref(pc.ResourceClaimName, "") == c.Name
		})
		if c.Namespace == p.Namespace && len(c.OwnerReferences) == 0 && !used {
			out = append(out, c)
		}
	}
	return out
}

// allocatedForIncoming makes a claim already allocated for p, and
// reserved for it, as after an earlier scheduling attempt of p that
// allocated the claim but failed to bind: only the nodes the allocation
// allows remain.
func (g *draGenerator) allocatedForIncoming(p *v1.Pod, name string) {
	node := g.pick(g.s.Nodes)
	free := g.free(node)
	if len(free) == 0 {
		addPodClaim(p, name, p.Name+"-"+name, "")
		return
	}
	d := pick(g.generator, free)
	spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest("devices", d.class, 1)}}}
	claim := g.podClaim(p, name, spec, g.chance(0.5))
	g.allocate(claim, d.allocationSelector(), []resourceapi.DeviceRequestAllocationResult{g.take(d, "devices")})
	if g.chance(0.7) {
		reserveFor(claim, p)
	}
}

// goodClasses are the classes claims usually ask for, by weight.
var goodClasses = []string{"gpu", "gpu", "gpu", "gpu-a100", "gpu-a100", "gpu-large", "gpu-large", "gpu-partition", "nic", "nic"}

// claimSpec returns what a new claim of p asks for: one or two requests,
// each an exact count, all devices of a class, a prioritized list, admin
// access, or a NIC's bandwidth; sometimes a constraint that two requests'
// devices share an attribute.
func (g *draGenerator) claimSpec(p *v1.Pod) resourceapi.ResourceClaimSpec {
	var spec resourceapi.ResourceClaimSpec
	numRequests := 1
	if g.chance(0.2) {
		numRequests = 2
	}
	gpusOnly := true
	for i := range numRequests {
		name := fmt.Sprintf("req-%d", i)
		var req resourceapi.DeviceRequest
		switch r := g.r.Float64(); {
		case r < 0.5:
			class := pick(g.generator, goodClasses)
			if g.bad != "" && g.chance(0.4) {
				class = g.bad
			}
			req = exactRequest(name, class, pick(g.generator, []int64{1, 1, 1, 1, 2, 2, 3}))
			g.selectorsAndTolerations(req.Exactly, class)
		case r < 0.8:
			req = resourceapi.DeviceRequest{Name: name, FirstAvailable: g.prioritizedList()}
		case r < 0.86:
			class := pick(g.generator, []string{"gpu-a100", "gpu", "nic", "gpu-partition"})
			req = resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeAll}}
			g.selectorsAndTolerations(req.Exactly, class)
		case r < 0.92:
			req = exactRequest(name, pick(g.generator, []string{"gpu", "nic"}), 1)
			req.Exactly.AdminAccess = ptr.To(true)
			g.allowAdminAccess(p.Namespace)
		default:
			req = exactRequest(name, "nic", 1)
			req.Exactly.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
				"bandwidth": *resource.NewQuantity(pick(g.generator, []int64{2, 8, 20, 60})<<30, resource.BinarySI),
			}}
		}
		if req.Exactly != nil && !strings.HasPrefix(req.Exactly.DeviceClassName, "gpu") {
			gpusOnly = false
		}
		spec.Devices.Requests = append(spec.Devices.Requests, req)
	}
	// Only GPUs have these attributes.
	if numRequests == 2 && gpusOnly && g.chance(0.5) {
		attr := resourceapi.FullyQualifiedName(driverGPU + "/" + pick(g.generator, []string{"numa", "model"}))
		c := resourceapi.DeviceConstraint{MatchAttribute: &attr}
		if g.chance(0.5) {
			c.Requests = []string{"req-0", "req-1"}
		}
		spec.Devices.Constraints = []resourceapi.DeviceConstraint{c}
	}
	return spec
}

// selectorsAndTolerations sometimes narrows a request for class with a
// selector of its own, and lets it tolerate tainted devices.
func (g *draGenerator) selectorsAndTolerations(req *resourceapi.ExactDeviceRequest, class string) {
	gpuClass := class == "gpu" || class == "gpu-a100" || class == "gpu-large" || class == "gpu-partition"
	if (gpuClass || class == "nic") && g.chance(0.2) {
		expression := `device.attributes["nic.example.com"].bandwidth >= 25`
		if gpuClass {
			expression = pick(g.generator, []string{
				`device.attributes["gpu.example.com"].numa == 1`,
				`device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.5.0"))`,
				`device.capacity["gpu.example.com"].memory.compareTo(quantity("20Gi")) <= 0`,
			})
		}
		req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expression}}}
	}
	if gpuClass && g.chance(0.3) {
		t := resourceapi.DeviceToleration{Key: pick(g.generator, deviceTaints), Operator: resourceapi.DeviceTolerationOpExists}
		if g.chance(0.5) {
			t.Effect = pick(g.generator, deviceEffects[:2])
		}
		req.Tolerations = []resourceapi.DeviceToleration{t}
	}
}

// prioritizedList returns two or three alternatives, best first: a large
// or A100 GPU, two GPUs, any GPU, a partition.
func (g *draGenerator) prioritizedList() []resourceapi.DeviceSubRequest {
	alternatives := []resourceapi.DeviceSubRequest{
		{Name: "large", DeviceClassName: "gpu-large", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		{Name: "a100", DeviceClassName: "gpu-a100", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		{Name: "two", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2},
		{Name: "one", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		{Name: "partition", DeviceClassName: "gpu-partition", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
	}
	g.r.Shuffle(len(alternatives), func(i, j int) { alternatives[i], alternatives[j] = alternatives[j], alternatives[i] })
	return alternatives[:2+g.r.IntN(2)]
}

// allowAdminAccess labels namespace for admin access, adding the
// Namespace when the scenario has none of that name.
func (g *draGenerator) allowAdminAccess(namespace string) {
	for _, obj := range g.s.Objects {
		if ns, ok := obj.(*v1.Namespace); ok && ns.Name == namespace {
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[adminAccessLabel] = "true"
			return
		}
	}
	g.s.Objects = append(g.s.Objects, &v1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: namespace, UID: types.UID("uid-namespace-" + namespace), Labels: map[string]string{v1.LabelMetadataName: namespace, adminAccessLabel: "true"}},
	})
}

// incomingPodExtendedResources has the incoming pod's first container ask
// for an extended resource DeviceClasses may back: example.com/gpu (which
// some nodes have from a device plugin), example.com/nic (which none
// has), or a class's own deviceclass.resource.kubernetes.io name; in
// three pods in ten, init containers (some of them sidecars) ask for it
// too.
// Rarely, the pod already has a claim for its extended resources from an
// earlier attempt, which kube-scheduler deletes before trying again.
func (g *draGenerator) incomingPodExtendedResources() {
	p := g.s.Pod
	c := &p.Spec.Containers[0]
	name := pick(g.generator, []v1.ResourceName{gpu, gpu, nicResource, v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + "gpu-a100"), v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + "nic")})
	quantity := *resource.NewQuantity(1+g.r.Int64N(2), resource.DecimalSI)
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	if c.Resources.Limits == nil {
		c.Resources.Limits = v1.ResourceList{}
	}
	c.Resources.Requests[name], c.Resources.Limits[name] = quantity, quantity
	// Init containers and sidecars asking for it too: an init container
	// uses what the containers after it ask for and requests the rest, and
	// only the largest init-container request is kept.
	if g.chance(0.3) {
		restart := v1.ContainerRestartPolicyAlways
		for i := range 1 + g.r.IntN(2) {
			q := *resource.NewQuantity(1+g.r.Int64N(3), resource.DecimalSI)
			ic := v1.Container{
				Name:      fmt.Sprintf("ext-init-%d", i),
				Image:     "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{name: q}, Limits: v1.ResourceList{name: q}},
			}
			if g.chance(0.3) {
				ic.RestartPolicy = &restart
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
		}
	}
	if g.chance(0.1) {
		spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{exactRequest("container-0-request-0", "gpu", 1)}}}
		claim := g.claim(p.Namespace, fmt.Sprintf("%s-extended-resources-%s", p.Name, g.suffix()), spec)
		claim.Annotations = map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"}
		claim.OwnerReferences = []metav1.OwnerReference{podOwner(p)}
	}
}
