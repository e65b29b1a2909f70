package dra

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// DRA-backed extended resources (the DRAExtendedResource gate, on by
// default in both supported releases): a pod asking for an extended resource that a
// DeviceClass provides, by its spec.extendedResourceName or by the implicit
// name deviceclass.resource.kubernetes.io/<class>, has it allocated as
// devices of that class on a node that does not offer the resource in its
// allocatable. NodeResourcesFit leaves such a resource to DynamicResources,
// which allocates it through one claim the scheduler makes for the pod.

// ExtendedClaimName is the name the claim for a pod's DRA-backed extended
// resources carries while it is only in the scheduler's memory. It is not a
// valid object name, so it clashes with no real claim.
const ExtendedClaimName = "<extended-resources>"

// Reasons DynamicResources gives for DRA-backed extended resources.
const (
	// ReasonStaleExtendedClaim: the pod's extended-resource claim from an
	// earlier attempt still exists with its requests; kube-scheduler
	// deletes it in PostFilter and tries again.
	ReasonStaleExtendedClaim = "cannot schedule extended resource claim"
	// ReasonCannotFitResource: the node neither offers an extended
	// resource the pod asks for nor can have it from a DeviceClass.
	ReasonCannotFitResource = "cannot fit resource"
)

// Resolver maps extended resource names to the DeviceClass that provides
// them. Its zero value, and a nil one, resolve nothing.
type Resolver struct {
	byName map[v1.ResourceName]*resourceapi.DeviceClass
}

// NewResolver resolves names as kube-scheduler does after starting
// with classes (its informer lists them in name order, and each class
// added maps its implicit name and its spec.extendedResourceName). When
// two classes name the same extended resource, the one created later wins
// and, created at the same time, the one whose name sorts first; the
// class that loses maps no name at all, not even its implicit one, as
// kube-scheduler's cache skips it whole.
func NewResolver(classes []*resourceapi.DeviceClass) *Resolver {
	if len(classes) == 0 {
		return &Resolver{}
	}
	sorted := slices.DeleteFunc(slices.Clone(classes), func(c *resourceapi.DeviceClass) bool { return c == nil })
	slices.SortStableFunc(sorted, func(a, b *resourceapi.DeviceClass) int { return strings.Compare(a.Name, b.Name) })
	r := &Resolver{byName: make(map[v1.ResourceName]*resourceapi.DeviceClass, 2*len(sorted))}
	for _, c := range sorted {
		if c.Spec.ExtendedResourceName != nil {
			if other := r.byName[v1.ResourceName(*c.Spec.ExtendedResourceName)]; other != nil {
				switch cmp.Compare(c.CreationTimestamp.UnixNano(), other.CreationTimestamp.UnixNano()) {
				case -1:
					continue
				case 0:
					if c.Name >= other.Name {
						continue
					}
				}
			}
			r.byName[v1.ResourceName(*c.Spec.ExtendedResourceName)] = c
		}
		r.byName[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+c.Name)] = c
	}
	return r
}

// Class returns the class providing the extended resource name, or nil.
func (r *Resolver) Class(name v1.ResourceName) *resourceapi.DeviceClass {
	if r == nil {
		return nil
	}
	return r.byName[name]
}

// IsExtendedResourceName reports whether a DeviceClass could provide the
// resource: an extended resource name, or an implicit class name.
func IsExtendedResourceName(name v1.ResourceName) bool {
	return nodeinfo.IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

var resolverKey = fwk.NewStateKey[*Resolver]()

// ResolverFor returns the cycle's resolver, built from the DeviceClasses
// in state's listers the first time a plugin asks and kept in state for
// the others. A nil state builds one that is not kept.
func ResolverFor(state *fwk.CycleState) (*Resolver, error) {
	if r, ok := resolverKey.Read(state); ok {
		return r, nil
	}
	classes, err := listClasses(state.Listers().DeviceClasses)
	if err != nil {
		return nil, err
	}
	r := NewResolver(classes.list)
	if state != nil {
		resolverKey.Write(state, r)
	}
	return r, nil
}

// MayUseExtendedResources reports whether the pod requests any resource a
// DeviceClass could provide, which is when [ResolverFor] is worth calling.
func MayUseExtendedResources(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for name, q := range cs[i].Resources.Requests {
				if !q.IsZero() && IsExtendedResourceName(name) {
					return true
				}
			}
		}
	}
	for name, q := range pod.Spec.Overhead {
		if !q.IsZero() && IsExtendedResourceName(name) {
			return true
		}
	}
	if pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Requests {
			if !q.IsZero() && IsExtendedResourceName(name) {
				return true
			}
		}
	}
	return false
}

// extendedRequests returns the pod's requests (as the scheduler's resource
// vector holds them: whole units, rounded up) when one of them is a
// DRA-backed extended resource, and nil otherwise.
func extendedRequests(pod *v1.Pod, r *Resolver) map[v1.ResourceName]int64 {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	backed := false
	for name, q := range reqs {
		if !q.IsZero() && IsExtendedResourceName(name) && r.Class(name) != nil {
			backed = true
			break
		}
	}
	if !backed {
		return nil
	}
	scalars := make(map[v1.ResourceName]int64)
	for name, q := range reqs {
		if nodeinfo.IsScalarResourceName(name) {
			scalars[name] = q.Value()
		}
	}
	return scalars
}

// findExtendedClaim returns the claim made for the pod's extended
// resources in an earlier attempt: annotated as such and controlled by the
// pod (by name and UID, in any namespace, as kube-scheduler looks).
func findExtendedClaim(pod *v1.Pod, claims []*resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
	for _, c := range claims {
		if c == nil || c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
			continue
		}
		for _, o := range c.OwnerReferences {
			if o.Name == pod.Name && o.Controller != nil && *o.Controller && o.UID == pod.UID {
				return c
			}
		}
	}
	return nil
}

// newExtendedClaim is the in-memory claim for a pod's extended resources,
// without requests: Filter gives each node its own copy with the requests
// that node needs.
func newExtendedClaim(pod *v1.Pod) *resourceapi.ResourceClaim {
	controller := true
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    pod.Namespace,
			Name:         ExtendedClaimName,
			UID:          types.UID("extended-resources-" + string(pod.UID)),
			GenerateName: pod.Name + "-extended-resources-",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1",
				Kind:       "Pod",
				Name:       pod.Name,
				UID:        pod.UID,
				Controller: &controller,
			}},
			Annotations: map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
		},
	}
}

// generatedName is the name the API server could give the claim made from
// a pod's extended resources: its generateName cut to 58 characters, then
// five characters from its alphabet, here derived from the pod's
// namespace, name and UID so that a run is reproducible.
func generatedName(pod *v1.Pod) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	base := pod.Name + "-extended-resources-"
	if len(base) > 58 {
		base = base[:58]
	}
	h := fnv.New64a()
	h.Write([]byte(pod.Namespace + "/" + pod.Name + "/" + string(pod.UID)))
	sum := h.Sum64()
	var suffix [5]byte
	for i := range suffix {
		suffix[i] = alphabet[sum%uint64(len(alphabet))]
		sum /= uint64(len(alphabet))
	}
	return base + string(suffix[:])
}

// extendedForNode returns the pod's extended-resource claim as the node
// needs it (requests for the DRA-backed resources the node does not offer
// in its allocatable) with kube-scheduler's container-to-request
// mappings, nil when the node offers them all, or a rejection.
func (s *State) extendedForNode(pod *v1.Pod, ni *nodeinfo.NodeInfo) (*resourceapi.ResourceClaim, []v1.ContainerExtendedResourceRequest, *fwk.Status) {
	ext := s.extendedIndex()
	if ext < 0 {
		return nil, nil, nil
	}
	claim := s.claims[ext]
	if claim.Spec.Devices.Requests != nil {
		return nil, nil, unresolvable(ReasonStaleExtendedClaim)
	}
	var viaDRA map[v1.ResourceName]int64
	for name, q := range s.scalars {
		if q == 0 || !IsExtendedResourceName(name) {
			continue
		}
		allocatable, offered := ni.Allocatable().ScalarResources[name]
		if s.resolver.Class(name) != nil && allocatable == 0 {
			if viaDRA == nil {
				viaDRA = make(map[v1.ResourceName]int64)
			}
			viaDRA[name] = q
		} else if !offered {
			return nil, nil, unresolvable(ReasonCannotFitResource)
		}
	}
	// Upstream's order: nothing to do when the pod has no other claim and
	// the node offers every resource; an allocated claim is not touched.
	if viaDRA == nil && ext == 0 || claim.Status.Allocation != nil {
		return nil, nil, nil
	}
	nodeClaim := claim.DeepCopy()
	reqs, mappings := requestsAndMappings(pod, viaDRA, s.resolver)
	nodeClaim.Spec.Devices.Requests = reqs
	return nodeClaim, mappings, nil
}

// requestsAndMappings turns the extended resources a node must provide
// through DRA into device requests, one per container (regular
// containers, sidecars and init containers, indexed together in that
// order: init containers first) asking for a whole number of a resource,
// named "container-<index>-request-<position of the resource among the
// container's sorted request names>". An init container that runs to
// completion first uses the requests of the containers from its own index
// on and asks only for what they lack; of those init-container requests
// only the largest is kept and every such init container maps to it.
// Requests come sorted by name, the mappings in resource order, long-lived
// containers before init containers.
func requestsAndMappings(pod *v1.Pod, resources map[v1.ResourceName]int64, r *Resolver) ([]resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	containers := make([]*v1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	var longLived, shortLived []int
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			longLived = append(longLived, len(containers))
		} else {
			shortLived = append(shortLived, len(containers))
		}
		containers = append(containers, c)
	}
	for i := range pod.Spec.Containers {
		longLived = append(longLived, len(containers))
		containers = append(containers, &pod.Spec.Containers[i])
	}

	var requests []resourceapi.DeviceRequest
	var mappings []v1.ContainerExtendedResourceRequest
	for _, name := range slices.Sorted(maps.Keys(resources)) {
		class := r.Class(name)
		if class == nil {
			continue
		}
		perContainer := make([]*resourceapi.DeviceRequest, len(containers))
		var longMappings, shortMappings []v1.ContainerExtendedResourceRequest
		for _, i := range longLived {
			req, m := containerRequest(i, containers[i], name, class.Name, nil)
			perContainer[i] = req
			longMappings = append(longMappings, m...)
		}
		var largest *resourceapi.DeviceRequest
		shortNames := sets.New[string]()
		for _, i := range shortLived {
			req, m := containerRequest(i, containers[i], name, class.Name, perContainer[i:])
			if req != nil {
				shortNames.Insert(req.Name)
				if largest == nil || largest.Exactly.Count < req.Exactly.Count {
					largest = req
				}
			}
			shortMappings = append(shortMappings, m...)
		}
		if largest != nil && shortNames.Len() > 1 {
			shortNames.Delete(largest.Name)
			for i := range shortMappings {
				if shortNames.Has(shortMappings[i].RequestName) {
					shortMappings[i].RequestName = largest.Name
				}
			}
		}
		if largest != nil {
			requests = append(requests, *largest)
		}
		for _, req := range perContainer {
			if req != nil {
				requests = append(requests, *req)
			}
		}
		mappings = append(mappings, longMappings...)
		mappings = append(mappings, shortMappings...)
	}
	slices.SortFunc(requests, func(a, b resourceapi.DeviceRequest) int { return strings.Compare(a.Name, b.Name) })
	return requests, mappings
}

// containerRequest is one container's request for the resource: first the
// reusable requests (of containers running alongside), then a new request
// for what they do not cover, if anything. A request that is not a whole
// number asks for nothing.
func containerRequest(index int, c *v1.Container, name v1.ResourceName, className string, reusable []*resourceapi.DeviceRequest) (*resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil, nil
	}
	want, ok := q.AsInt64()
	if !ok || want == 0 {
		return nil, nil
	}
	var mappings []v1.ContainerExtendedResourceRequest
	var have int64
	for _, req := range reusable {
		if req == nil {
			continue
		}
		have += req.Exactly.Count
		mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: req.Name})
		if have >= want {
			return nil, mappings
		}
	}
	position := 0
	for _, other := range slices.Sorted(maps.Keys(c.Resources.Requests)) {
		if other == name {
			break
		}
		position++
	}
	req := &resourceapi.DeviceRequest{
		Name: fmt.Sprintf("container-%d-request-%d", index, position),
		Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: className,
			AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
			Count:           want - have,
		},
	}
	return req, append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: req.Name})
}
