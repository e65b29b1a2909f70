package filter

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/dra"
	"github.com/kubesched/kubesched/internal/requeue"
	"github.com/kubesched/kubesched/nodeinfo"
)

// The hints of the plugins that count what a node holds: NodeResourcesFit
// and NodePorts.

// nodeNowFitsResources is NodeResourcesFit's node hint: the pod fits the
// node when it is empty (the node's own pods are not looked at), and the
// node is new or gained pod slots or more of a resource the pod requests.
// Extended resources that a DeviceClass provides count as
// NodeResourcesFit's filter counts them.
func (h clusterHints) nodeNowFitsResources(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	state := fwk.NewCycleState(nil).SetListers(h.listers)
	var fit NodeResourcesFit // no ignored resources, as upstream's hint
	switch st := fit.Filter(context.Background(), state, pod, nodeinfo.New(node)); {
	case st.IsSuccess():
	case st.Code() == fwk.Error:
		return fwk.Queue, st.AsError()
	default:
		return fwk.QueueSkip, nil
	}
	if old == nil {
		return fwk.Queue, nil
	}
	var resolver *dra.Resolver
	if dra.MayUseExtendedResources(pod) {
		if resolver, err = dra.ResolverFor(state); err != nil {
			return fwk.Queue, err
		}
	}
	if requestedResourceGrew(pod, old, node, resolver) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// requestedResourceGrew reports whether the update of a node raised its
// pod capacity or the allocatable amount of a resource the pod requests,
// or left to DynamicResources (through resolver) an extended resource the
// pod requests.
func requestedResourceGrew(pod *v1.Pod, old, node *v1.Node, resolver *dra.Resolver) bool {
	before, after := nodeinfo.NewResource(old.Status.Allocatable), nodeinfo.NewResource(node.Status.Allocatable)
	if after.AllowedPodNumber > before.AllowedPodNumber {
		return true
	}
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		switch name {
		case v1.ResourceCPU:
			if q.MilliValue() > 0 && after.MilliCPU > before.MilliCPU {
				return true
			}
		case v1.ResourceMemory:
			if q.Value() > 0 && after.Memory > before.Memory {
				return true
			}
		case v1.ResourceEphemeralStorage:
			if q.Value() > 0 && after.EphemeralStorage > before.EphemeralStorage {
				return true
			}
		default:
			if !nodeinfo.IsScalarResourceName(name) || q.Value() == 0 {
				continue
			}
			if after.ScalarResources[name] > before.ScalarResources[name] {
				return true
			}
			if after.ScalarResources[name] <= 0 && resolver.Class(name) != nil {
				return true
			}
		}
	}
	return false
}

// resourcesFreedByPod is NodeResourcesFit's pod hint before
// PodEventsByRole, for every pod event: a pod that held a place on a node
// was deleted ([podHeldPlace]), or the pod itself, or a bound pod holding
// some resource the pod requests ([boundPodGaveUpRequest]), scaled down.
func resourcesFreedByPod(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if newObj == nil {
		return podHeldPlace(pod, oldObj, nil)
	}
	return requeue.OwnUpdateOr(requeue.AlwaysQueue, boundPodGaveUpRequest)(pod, oldObj, newObj)
}

// podHeldPlace is NodeResourcesFit's AssignedPod deletion hint: the
// deleted pod was bound or nominated to a node, so it freed room there.
func podHeldPlace(_ *v1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	deleted, _, err := requeue.Objects[*v1.Pod](oldObj, nil)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if requeue.AssignedOrNominated(deleted) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// boundPodGaveUpRequest is NodeResourcesFit's AssignedPod scale-down
// hint: the updated pod is bound and its request of some resource the pod
// requests went down. Requests count resized status, as kube-scheduler's
// with in-place resize on.
func boundPodGaveUpRequest(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, other, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil || other == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if other.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	var before, after nodeinfo.Resource
	setMax(&before, resourcehelper.PodRequests(old, requeue.PodRequestOptions))
	setMax(&after, resourcehelper.PodRequests(other, requeue.PodRequestOptions))
	for name, q := range resourcehelper.PodRequests(pod, requeue.PodRequestOptions) {
		if q.IsZero() {
			continue
		}
		var lower bool
		switch name {
		case v1.ResourceCPU:
			lower = before.MilliCPU > after.MilliCPU
		case v1.ResourceMemory:
			lower = before.Memory > after.Memory
		case v1.ResourceEphemeralStorage:
			lower = before.EphemeralStorage > after.EphemeralStorage
		default:
			lower = nodeinfo.IsScalarResourceName(name) && before.ScalarResources[name] > after.ScalarResources[name]
		}
		if lower {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// setMax raises r's amounts to those of rl where rl's are larger, as
// kube-scheduler reads a pod's requests; amounts it does not account for
// are dropped.
func setMax(r *nodeinfo.Resource, rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU = max(r.MilliCPU, q.MilliValue())
		case v1.ResourceMemory:
			r.Memory = max(r.Memory, q.Value())
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage = max(r.EphemeralStorage, q.Value())
		default:
			if nodeinfo.IsScalarResourceName(name) {
				if r.ScalarResources == nil {
					r.ScalarResources = map[v1.ResourceName]int64{}
				}
				r.ScalarResources[name] = max(r.ScalarResources[name], q.Value())
			}
		}
	}
}

// deviceClassProvidesRequest is NodeResourcesFit's DeviceClass hint: a
// class added whose implicit extended resource name
// (deviceclass.resource.kubernetes.io/<class>) the pod requests, or a
// class added or updated whose spec.extendedResourceName, new or changed,
// the pod requests.
func deviceClassProvidesRequest(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, class, err := requeue.Objects[*resourceapi.DeviceClass](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if class == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	name := func(c *resourceapi.DeviceClass) string {
		if c.Spec.ExtendedResourceName == nil {
			return ""
		}
		return *c.Spec.ExtendedResourceName
	}
	var requests v1.ResourceList
	requested := func(r string) bool {
		if requests == nil {
			requests = resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		}
		_, ok := requests[v1.ResourceName(r)]
		return ok
	}
	if old != nil {
		if name(old) == name(class) {
			return fwk.QueueSkip, nil
		}
	} else if requested(resourceapi.ResourceDeviceClassPrefix + class.Name) {
		return fwk.Queue, nil
	}
	if class.Spec.ExtendedResourceName != nil && requested(*class.Spec.ExtendedResourceName) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// deletedPodFreesPorts is NodePorts' hint: a pod that held a place on a
// node was deleted, and it bound a host port the pod wants.
func deletedPodFreesPorts(pod *v1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	deleted, _, err := requeue.Objects[*v1.Pod](oldObj, nil)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if !requeue.AssignedOrNominated(deleted) {
		return fwk.QueueSkip, nil
	}
	freed := nodeinfo.HostPorts(deleted)
	if len(freed) == 0 {
		return fwk.QueueSkip, nil
	}
	inUse := make(nodeinfo.HostPortInfo, len(freed))
	for _, p := range freed {
		inUse.Add(p.HostIP, string(p.Protocol), p.HostPort)
	}
	for _, p := range nodeinfo.HostPorts(pod) {
		if inUse.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}
