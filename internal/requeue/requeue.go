// Package requeue holds what the default plugins' EventsToRegister
// methods share: the registrations by pod role, the hints every plugin may
// use, and the reading of an event's objects.
package requeue

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
)

// Registrar builds registrations for the release of its features.
type Registrar struct{ fs feature.Features }

// For returns the Registrar of the release of fs.
func For(fs feature.Features) Registrar { return Registrar{fs} }

// Event registers actions a on resource r, with hint (nil: every such
// event helps).
func (Registrar) Event(r fwk.EventResource, a fwk.ActionType, hint fwk.QueueingHintFn) fwk.ClusterEventWithHint {
	return fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: r, ActionType: a}, Hint: hint}
}

// Assigned registers actions on bound pods: AssignedPod events with
// PodEventsByRole, Pod events (every pod) before.
func (g Registrar) Assigned(a fwk.ActionType, hint fwk.QueueingHintFn) fwk.ClusterEventWithHint {
	if g.fs.PodEventsByRole {
		return g.Event(fwk.AssignedPod, a, hint)
	}
	return g.Event(fwk.Pod, a, hint)
}

// Target registers updates of the pending pod itself: TargetPod events
// with PodEventsByRole; before, Pod events, whose hint skips other pods'
// updates ([OwnUpdate]).
func (g Registrar) Target(a fwk.ActionType, hint fwk.QueueingHintFn) fwk.ClusterEventWithHint {
	if g.fs.PodEventsByRole {
		return g.Event(fwk.TargetPod, a, hint)
	}
	return g.Event(fwk.Pod, a, OwnUpdate(hint))
}

// AlwaysQueue is the hint of registrations whose every event may help.
func AlwaysQueue(*v1.Pod, any, any) (fwk.QueueingHint, error) { return fwk.Queue, nil }

// Never is the hint of a registration no event helps.
func Never(*v1.Pod, any, any) (fwk.QueueingHint, error) { return fwk.QueueSkip, nil }

// OwnUpdate returns a hint that asks hint about updates of the pod itself
// and skips every other pod's: the hint of a Pod registration, which
// every pod's update matches, before PodEventsByRole.
func OwnUpdate(hint fwk.QueueingHintFn) fwk.QueueingHintFn {
	return func(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
		_, updated, err := Objects[*v1.Pod](oldObj, newObj)
		if err != nil {
			return fwk.Queue, err
		}
		if updated == nil {
			return fwk.Queue, ErrNoObject
		}
		if updated.UID != pod.UID {
			return fwk.QueueSkip, nil
		}
		return hint(pod, oldObj, newObj)
	}
}

// OwnUpdateOr returns a hint that asks own about updates of the pod
// itself and others about every other event.
func OwnUpdateOr(own, others fwk.QueueingHintFn) fwk.QueueingHintFn {
	return func(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
		old, updated, err := Objects[*v1.Pod](oldObj, newObj)
		if err != nil {
			return fwk.Queue, err
		}
		if old != nil && updated != nil && updated.UID == pod.UID {
			return own(pod, oldObj, newObj)
		}
		return others(pod, oldObj, newObj)
	}
}

// Objects returns an event's objects as T, the zero T for nil (an
// addition has no old object, a deletion no new one), or an error when
// either is of another type, which the queue reads as Queue.
func Objects[T any](oldObj, newObj any) (old, updated T, err error) {
	if newObj != nil {
		var ok bool
		if updated, ok = newObj.(T); !ok {
			return old, updated, fmt.Errorf("expected %T, got %T", updated, newObj)
		}
	}
	if oldObj != nil {
		var ok bool
		if old, ok = oldObj.(T); !ok {
			return old, updated, fmt.Errorf("expected %T, got %T", old, oldObj)
		}
	}
	return old, updated, nil
}

// ErrNoObject is a hint's error for an event without the object the hint
// needs, which only a caller's mistake raises.
var ErrNoObject = errors.New("queueing hint: the event has no object")

// AssignedOrNominated reports whether p holds, or is about to hold, a
// place on a node; an unscheduled pod's coming and going frees nothing.
func AssignedOrNominated(p *v1.Pod) bool {
	return p.Spec.NodeName != "" || p.Status.NominatedNodeName != ""
}

// PodRequestOptions are the supported releases' defaults for comparing
// a pod's requests before and after an update, as kube-scheduler's queue
// and NodeResourcesFit's scale-down hint compare them: status resources
// count (in-place resize is GA) and pod-level resizes are on.
var PodRequestOptions = resourcehelper.PodResourcesOptions{
	UseStatusResources: true,
	InPlacePodLevelResourcesVerticalScalingEnabled: true,
}
