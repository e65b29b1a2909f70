package loader

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
)

// DefaultOptions are what [Cluster.Default] leaves to its caller.
type DefaultOptions struct {
	// Namespace is given to namespaced objects that name none, as
	// kubectl apply -n gives it; "" is "default".
	Namespace string
}

// DefaultReport says what [Cluster.Default] set.
type DefaultReport struct {
	// Objects is the number of objects changed.
	Objects int
	// Counts are the defaults set, each with the number of objects of
	// one kind it was set on, in a fixed order of defaults and then in
	// the order of kinds in the cluster. None is zero.
	Counts []DefaultCount
}

// DefaultCount is the number of objects of one kind one default was set
// on.
type DefaultCount struct {
	// Default says what was set, as String prints it, such as "requests
	// from limits" or "namespace default".
	Default string
	// Kind is the objects' kind, such as "Pod".
	Kind  string
	Count int
}

// String is the report in one line, for people: "defaulted 3 objects
// the API server would have: namespace default (2 pods), requests from
// limits (1 pod), allocatable from capacity (1 node)"; "" when nothing
// was defaulted.
func (r DefaultReport) String() string {
	if r.Objects == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "defaulted %s the API server would have: ", plural(r.Objects, "object", "objects"))
	for i, c := range r.Counts {
		switch {
		case i == 0:
		case c.Default == r.Counts[i-1].Default:
			b.WriteString(", ")
		default:
			b.WriteString("), ")
		}
		if i == 0 || c.Default != r.Counts[i-1].Default {
			b.WriteString(c.Default + " (")
		}
		b.WriteString(kindCount(c.Count, c.Kind))
	}
	b.WriteString(")")
	return b.String()
}

// A defaultKind is one of the defaults Default sets, in the order the
// report lists them.
type defaultKind uint8

const (
	setNamespace defaultKind = iota
	setName
	setRequests
	setPodRequests
	setHostPorts
	setProtocol
	setSchedulerName
	setPriority
	setTolerations
	setAffinityKeys
	setAllocatable
	setVolumeMode
	setStorageClass
	setVolumePhase
	setBindingMode
	setAllocationMode
	setDeviceCount
	setTolerationOperator
	setSelector
	numDefaults
)

// defaultTexts say what each default sets; the namespace's is completed
// with the namespace.
var defaultTexts = [numDefaults]string{
	setNamespace:          "namespace",
	setName:               "name from generateName",
	setRequests:           "requests from limits",
	setPodRequests:        "pod-level requests",
	setHostPorts:          "host ports of the host network",
	setProtocol:           "port protocol TCP",
	setSchedulerName:      "schedulerName " + v1.DefaultSchedulerName,
	setPriority:           "priority of system PriorityClasses",
	setTolerations:        "tolerations of not-ready and unreachable nodes",
	setAffinityKeys:       "pod affinity matchLabelKeys in labelSelector",
	setAllocatable:        "allocatable from capacity",
	setVolumeMode:         "volumeMode Filesystem",
	setStorageClass:       "the default StorageClass",
	setVolumePhase:        "phase Available, as the PV controller sets",
	setBindingMode:        "volumeBindingMode Immediate",
	setAllocationMode:     "allocationMode ExactCount",
	setDeviceCount:        "device count 1",
	setTolerationOperator: "toleration operator Equal",
	setSelector:           "selector from template labels",
}

// applied is a set of defaults set on one object.
type applied uint32

func (a *applied) add(k defaultKind) { *a |= 1 << k }

// addIf adds k when set is true.
func (a *applied) addIf(k defaultKind, set bool) {
	if set {
		a.add(k)
	}
}

// Default sets, on the objects of c that lack them, what the API server
// would have set when it created them and kube-scheduler reads: by its
// defaulting, by the admission plugins it runs by default, and as it
// prepares a new pod (the package documentation lists them). It only
// adds, never changing a value that is there, and leaves alone every
// object that has a metadata.resourceVersion: one read from an API
// server, which has done all this already. So a dump of a live cluster
// comes out untouched, and defaulting twice changes nothing the second
// time.
//
// Default changes c's objects in place; it must not run concurrently
// with anything else reading c.
func (c *Cluster) Default(opts DefaultOptions) DefaultReport {
	namespace := opts.Namespace
	if namespace == "" {
		namespace = v1.NamespaceDefault
	}
	d := newDefaulter(c, namespace)
	objects := c.all()
	set := make([]applied, len(objects))
	for i, o := range objects {
		switch o := o.(type) {
		case *v1.Node:
			set[i] = d.node(o)
		case *v1.Pod:
			set[i] = d.pod(o)
		default:
			set[i] = d.object(o)
		}
	}
	// Once every object has its namespace and every given name is known.
	names := newNames(c)
	for i, o := range objects {
		if m, ok := o.(metav1.Object); ok && m.GetName() == "" && m.GetGenerateName() != "" && !served(m) {
			m.SetName(names.generate(kindName(o), m.GetNamespace(), m.GetGenerateName()))
			set[i].add(setName)
		}
	}
	var t tally
	for i, o := range objects {
		t.add(o, set[i])
	}
	return t.report(namespace)
}

// defaulter sets defaults; what it needs of the cluster is read once.
type defaulter struct {
	// namespace is given to namespaced objects without one; "" leaves
	// them without.
	namespace string
	// storageClass is the name of the default StorageClass, or "".
	storageClass string
}

func newDefaulter(c *Cluster, namespace string) *defaulter {
	return &defaulter{namespace: namespace, storageClass: defaultStorageClass(c.Objects)}
}

// served says whether o was read from an API server, which has set
// every default already.
func served(o metav1.Object) bool {
	return o.GetResourceVersion() != ""
}

// object defaults any object but a node or a pod.
func (d *defaulter) object(o runtime.Object) applied {
	m, ok := o.(metav1.Object)
	if !ok || served(m) {
		return 0
	}
	var a applied
	switch o := o.(type) {
	case *v1.PersistentVolumeClaim:
		a = d.claim(o)
	case *v1.PersistentVolume:
		a.addIf(setVolumeMode, filesystem(&o.Spec.VolumeMode))
		if o.Status.Phase == "" && o.Spec.ClaimRef == nil {
			// The API server makes it Pending and the PV controller,
			// moments later, Available: only then may it be bound.
			o.Status.Phase = v1.VolumeAvailable
			a.add(setVolumePhase)
		}
	case *storagev1.StorageClass:
		if o.VolumeBindingMode == nil {
			mode := storagev1.VolumeBindingImmediate
			o.VolumeBindingMode = &mode
			a.add(setBindingMode)
		}
	case *resourceapi.ResourceClaimTemplate:
		a = defaultClaimSpec(&o.Spec.Spec)
	case *resourceapi.ResourceClaim:
		a = defaultClaimSpec(&o.Spec)
		if o.Status.Allocation != nil {
			for i := range o.Status.Allocation.Devices.Results {
				a.addIf(setTolerationOperator, equalOperators(o.Status.Allocation.Devices.Results[i].Tolerations))
			}
		}
	case *v1.ReplicationController:
		if len(o.Spec.Selector) == 0 && o.Spec.Template != nil && len(o.Spec.Template.Labels) > 0 {
			o.Spec.Selector = maps.Clone(o.Spec.Template.Labels)
			a.add(setSelector)
		}
	}
	if namespaced(o) {
		a.addIf(setNamespace, d.setNamespace(m))
	}
	return a
}

// namespaced says whether o is of a namespaced kind: all that Read
// keeps but nodes and the cluster-scoped kinds below.
func namespaced(o runtime.Object) bool {
	switch o.(type) {
	case *v1.Node, *v1.Namespace, *v1.PersistentVolume,
		*storagev1.StorageClass, *storagev1.CSINode, *storagev1.CSIDriver, *storagev1.VolumeAttachment,
		*resourceapi.ResourceSlice, *resourceapi.DeviceClass, *resourceapi.DeviceTaintRule:
		return false
	}
	return true
}

func (d *defaulter) setNamespace(m metav1.Object) bool {
	if m.GetNamespace() != "" || d.namespace == "" {
		return false
	}
	m.SetNamespace(d.namespace)
	return true
}

// node defaults a node: its allocatable is its capacity when the kubelet
// reports none, as the API server defaults it.
func (d *defaulter) node(n *v1.Node) applied {
	if n == nil || served(n) || n.Status.Allocatable != nil || n.Status.Capacity == nil {
		return 0
	}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	var a applied
	a.add(setAllocatable)
	return a
}

// claim defaults a PersistentVolumeClaim.
func (d *defaulter) claim(c *v1.PersistentVolumeClaim) applied {
	var a applied
	a.addIf(setVolumeMode, filesystem(&c.Spec.VolumeMode))
	// The DefaultStorageClass admission plugin: only a claim that names
	// no class at all, not one that names "" to mean none.
	if c.Spec.StorageClassName == nil && d.storageClass != "" {
		name := d.storageClass
		c.Spec.StorageClassName = &name
		a.add(setStorageClass)
	}
	return a
}

// filesystem sets an absent volume mode to Filesystem.
func filesystem(mode **v1.PersistentVolumeMode) bool {
	if *mode != nil {
		return false
	}
	fs := v1.PersistentVolumeFilesystem
	*mode = &fs
	return true
}

// defaultStorageClass returns the name of the StorageClass the
// DefaultStorageClass admission plugin gives claims without one: of
// those annotated as the default, the newest, then the first by name;
// "" for none.
func defaultStorageClass(objects []runtime.Object) string {
	var best *storagev1.StorageClass
	for _, o := range objects {
		sc, ok := o.(*storagev1.StorageClass)
		if !ok || sc == nil || sc.Annotations[isDefaultClass] != "true" && sc.Annotations[betaIsDefaultClass] != "true" {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name {
			best = sc
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// The annotations that make a StorageClass the default: the older is
// still honoured.
const (
	isDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// defaultClaimSpec defaults the device requests of a ResourceClaim's
// spec, as resource.k8s.io/v1 does.
func defaultClaimSpec(spec *resourceapi.ResourceClaimSpec) applied {
	var a applied
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			a |= exactCount(&e.AllocationMode, &e.Count)
			a.addIf(setTolerationOperator, equalOperators(e.Tolerations))
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			a |= exactCount(&s.AllocationMode, &s.Count)
			a.addIf(setTolerationOperator, equalOperators(s.Tolerations))
		}
	}
	return a
}

// exactCount makes a request without an allocation mode ask for an
// exact count, and one for an exact count of 0 (unset) ask for 1.
func exactCount(mode *resourceapi.DeviceAllocationMode, count *int64) applied {
	var a applied
	if *mode == "" {
		*mode = resourceapi.DeviceAllocationModeExactCount
		a.add(setAllocationMode)
	}
	if *mode == resourceapi.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
		a.add(setDeviceCount)
	}
	return a
}

func equalOperators(tolerations []resourceapi.DeviceToleration) bool {
	set := false
	for i := range tolerations {
		if tolerations[i].Operator == "" {
			tolerations[i].Operator = resourceapi.DeviceTolerationOpEqual
			set = true
		}
	}
	return set
}

// The priorities of the PriorityClasses every API server has, which the
// Priority admission plugin resolves without any object in the input.
const (
	systemClusterCritical         = "system-cluster-critical"
	systemNodeCritical            = "system-node-critical"
	systemClusterCriticalPriority = 2_000_000_000
	systemNodeCriticalPriority    = systemClusterCriticalPriority + 1000
)

// notReadyTolerationSeconds is how long the DefaultTolerationSeconds
// admission plugin lets a pod stay on a node that is not ready or
// unreachable.
const notReadyTolerationSeconds = 300

// pod defaults a pod.
func (d *defaulter) pod(p *v1.Pod) applied {
	if p == nil || served(p) {
		return 0
	}
	var a applied
	a.addIf(setNamespace, d.setNamespace(p))
	spec := &p.Spec
	for _, containers := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			c := &containers[i]
			a.addIf(setRequests, requestsFromLimits(&c.Resources))
			for j := range c.Ports {
				port := &c.Ports[j]
				if port.Protocol == "" {
					port.Protocol = v1.ProtocolTCP
					a.add(setProtocol)
				}
				// A pod on the host's network binds its container
				// ports on the host.
				if spec.HostNetwork && port.HostPort == 0 && port.ContainerPort != 0 {
					port.HostPort = port.ContainerPort
					a.add(setHostPorts)
				}
			}
		}
	}
	// After the containers', from which they are summed.
	a.addIf(setPodRequests, podLevelRequests(p))
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
		a.add(setSchedulerName)
	}
	if spec.Priority == nil {
		var priority int32
		switch spec.PriorityClassName {
		case systemClusterCritical:
			priority = systemClusterCriticalPriority
		case systemNodeCritical:
			priority = systemNodeCriticalPriority
		}
		if priority != 0 {
			spec.Priority = &priority
			a.add(setPriority)
		}
	}
	a.addIf(setTolerations, defaultTolerations(spec))
	a.addIf(setAffinityKeys, mergeAffinityKeys(p))
	return a
}

// requestsFromLimits copies each limit to the requests that lack that
// resource, as the API server does for a pod's containers (not for a
// template's).
func requestsFromLimits(r *v1.ResourceRequirements) bool {
	set := false
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = make(v1.ResourceList, len(r.Limits))
		}
		r.Requests[name] = limit.DeepCopy()
		set = true
	}
	return set
}

// podLevelRequests fills in the pod-level requests of a pod with
// pod-level resources, as the API server does when it creates one:
// hugepages limits from the containers' (then requests from them), cpu
// and memory requests from the containers', then requests from the
// pod-level limits.
func podLevelRequests(p *v1.Pod) bool {
	r := p.Spec.Resources
	if r == nil || len(r.Requests) == 0 && len(r.Limits) == 0 {
		return false
	}
	// The containers alone, not the pod-level resources, are summed.
	containers := &v1.Pod{Spec: v1.PodSpec{InitContainers: p.Spec.InitContainers, Containers: p.Spec.Containers}}
	set := false
	put := func(list *v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = v1.ResourceList{}
		}
		(*list)[name] = q.DeepCopy()
		set = true
	}
	for name, q := range resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{}) {
		_, requested := r.Requests[name]
		_, limited := r.Limits[name]
		if isHugePages(name) && !requested && !limited {
			put(&r.Limits, name, q)
		}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(containers, resourcehelper.PodResourcesOptions{}) {
		// Only cpu and memory: hugepages cannot be overcommitted.
		if _, ok := r.Requests[name]; !ok && (name == v1.ResourceCPU || name == v1.ResourceMemory) {
			put(&r.Requests, name, q)
		}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			put(&r.Requests, name, q)
		}
	}
	return set
}

func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// defaultTolerations adds the DefaultTolerationSeconds admission
// plugin's tolerations of nodes that are not ready or unreachable, for
// five minutes, unless the pod tolerates them already.
func defaultTolerations(spec *v1.PodSpec) bool {
	set := false
	for _, key := range []string{v1.TaintNodeNotReady, v1.TaintNodeUnreachable} {
		if slices.ContainsFunc(spec.Tolerations, func(t v1.Toleration) bool {
			return (t.Key == key || t.Key == "") && (t.Effect == v1.TaintEffectNoExecute || t.Effect == "")
		}) {
			continue
		}
		seconds := int64(notReadyTolerationSeconds)
		spec.Tolerations = append(spec.Tolerations, v1.Toleration{
			Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &seconds,
		})
		set = true
	}
	return set
}

// mergeAffinityKeys adds to the labelSelector of each pod (anti-)affinity
// term a requirement for each of its matchLabelKeys (In) and
// mismatchLabelKeys (NotIn) the pod has a label for, as the API server
// does when it creates the pod: the scheduler reads only the selector.
// A requirement already there is not added again.
func mergeAffinityKeys(p *v1.Pod) bool {
	aff := p.Spec.Affinity
	if aff == nil {
		return false
	}
	set := false
	merge := func(t *v1.PodAffinityTerm) {
		if t.LabelSelector == nil { // matches nothing, merged or not
			return
		}
		for _, k := range []struct {
			keys []string
			op   metav1.LabelSelectorOperator
		}{{t.MatchLabelKeys, metav1.LabelSelectorOpIn}, {t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn}} {
			for _, key := range k.keys {
				value, ok := p.Labels[key]
				if !ok {
					continue
				}
				req := metav1.LabelSelectorRequirement{Key: key, Operator: k.op, Values: []string{value}}
				if slices.ContainsFunc(t.LabelSelector.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
					return r.Key == req.Key && r.Operator == req.Operator && slices.Equal(r.Values, req.Values)
				}) {
					continue
				}
				t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions, req)
				set = true
			}
		}
	}
	if pa := aff.PodAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	if pa := aff.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	return set
}

// tally counts the defaults set, for the report.
type tally struct {
	objects int
	// counts are by default and kind, kinds in the order first seen.
	counts [numDefaults][]DefaultCount
}

func (t *tally) add(o runtime.Object, a applied) {
	if a == 0 {
		return
	}
	t.objects++
	kind := kindName(o)
	for k := range numDefaults {
		if a&(1<<k) == 0 {
			continue
		}
		i := slices.IndexFunc(t.counts[k], func(c DefaultCount) bool { return c.Kind == kind })
		if i < 0 {
			i = len(t.counts[k])
			t.counts[k] = append(t.counts[k], DefaultCount{Default: defaultTexts[k], Kind: kind})
		}
		t.counts[k][i].Count++
	}
}

func (t *tally) report(namespace string) DefaultReport {
	r := DefaultReport{Objects: t.objects}
	for k := range numDefaults {
		for _, c := range t.counts[k] {
			if k == setNamespace {
				c.Default += " " + namespace
			}
			r.Counts = append(r.Counts, c)
		}
	}
	return r
}

// isNil says whether o is a typed nil.
func isNil(o runtime.Object) bool {
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// kindName is the kind of a typed object, whether or not its TypeMeta
// says it.
func kindName(o runtime.Object) string {
	t := reflect.TypeOf(o)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// nouns are the kinds named otherwise than by their Kind, as kubectl
// abbreviates them.
var nouns = map[string][2]string{
	"Pod":                   {"pod", "pods"},
	"Node":                  {"node", "nodes"},
	"PersistentVolumeClaim": {"PVC", "PVCs"},
	"PersistentVolume":      {"PV", "PVs"},
	"PodDisruptionBudget":   {"PDB", "PDBs"},
}

// kindCount is "1 pod", "2 StorageClasses".
func kindCount(n int, kind string) string {
	if noun, ok := nouns[kind]; ok {
		return plural(n, noun[0], noun[1])
	}
	switch {
	case strings.HasSuffix(kind, "s"):
		return plural(n, kind, kind+"es")
	case strings.HasSuffix(kind, "y"):
		return plural(n, kind, kind[:len(kind)-1]+"ies")
	}
	return plural(n, kind, kind+"s")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
