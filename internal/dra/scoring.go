package dra

import (
	"context"
	"fmt"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// scoreCEL compiles the class selectors the resource scorers evaluate; as
// kube-scheduler's NodeResourcesFit, it keeps the ten most recent.
var scoreCEL = cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})

// Totals counts, per node, the devices behind DRA-backed extended
// resources, as kube-scheduler's NodeResourcesFit and
// BalancedAllocation scorers count them for a node that does not offer the
// resource itself: every device of every slice that reaches the node (by
// name, all nodes, or node selector; per device with per-device node
// selection) which the resource's DeviceClass selects, and how many of
// those are allocated (whole, or shared through consumable capacity).
//
// Like upstream, it does not look at pool generations or completeness, so
// an obsolete slice still counts, and a slice with no node name, no
// all-nodes flag and no selector reaches every node.
type Totals struct {
	classes   map[v1.ResourceName]*resourceapi.DeviceClass
	allocated *structured.AllocatedState
	slices    []*resourceapi.ResourceSlice
	features  structured.Features
}

// NewTotals returns the totals for resources, or nil when no DeviceClass
// provides any of them (then the scorers read node allocatable only).
func NewTotals(state *fwk.CycleState, resources []v1.ResourceName) (*Totals, error) {
	var t *Totals
	for _, name := range resources {
		if !IsExtendedResourceName(name) {
			continue
		}
		r, err := ResolverFor(state)
		if err != nil {
			return nil, err
		}
		class := r.Class(name)
		if class == nil {
			continue
		}
		if t == nil {
			t = &Totals{classes: map[v1.ResourceName]*resourceapi.DeviceClass{}, features: allocatorFeatures}
		}
		t.classes[name] = class
	}
	if t == nil {
		return nil, nil
	}
	listers := state.Listers()
	var claims []*resourceapi.ResourceClaim
	if listers.ResourceClaims != nil {
		var err error
		if claims, err = listers.ResourceClaims.List(labels.Everything()); err != nil {
			return nil, fmt.Errorf("listing ResourceClaims: %w", err)
		}
	}
	t.allocated = allocatedState(claims, t.features.ConsumableCapacity)
	// Upstream lists them with DeviceTaintRules applied; the counts read
	// no taint, so the slices as listed count the same.
	var err error
	if t.slices, err = listSlices(listers.ResourceSlices); err != nil {
		return nil, err
	}
	return t, nil
}

// Of returns how many devices of the class providing name reach node, and
// how many of them are allocated; 0, 0 when no class provides it or, as
// upstream logs and moves on, when a selector cannot be evaluated. t may
// be nil.
func (t *Totals) Of(ctx context.Context, node *v1.Node, name v1.ResourceName) (capacity, allocated int64) {
	if t == nil {
		return 0, 0
	}
	class := t.classes[name]
	if class == nil {
		return 0, 0
	}
	capacity, allocated, err := t.count(ctx, node, class)
	if err != nil {
		return 0, 0
	}
	return capacity, allocated
}

func (t *Totals) count(ctx context.Context, node *v1.Node, class *resourceapi.DeviceClass) (capacity, allocated int64, err error) {
	for _, s := range t.slices {
		var devices []resourceapi.Device
		if s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection {
			for _, d := range s.Spec.Devices {
				name, all := deref(d.NodeName), d.AllNodes != nil && *d.AllNodes
				if all || name != "" && name == node.Name {
					devices = append(devices, d)
					continue
				}
				if d.NodeSelector != nil {
					ok, err := structured.NodeMatches(t.features, node, name, all, d.NodeSelector)
					if err != nil {
						return 0, 0, err
					}
					if ok {
						devices = append(devices, d)
					}
				}
			}
		} else {
			name, all := deref(s.Spec.NodeName), s.Spec.AllNodes != nil && *s.Spec.AllNodes
			switch {
			case !all && name != node.Name && s.Spec.NodeSelector != nil:
				ok, err := structured.NodeMatches(t.features, node, name, all, s.Spec.NodeSelector)
				if err != nil {
					return 0, 0, err
				}
				if !ok {
					continue
				}
			case !all && name != "" && name != node.Name:
				continue
			}
			devices = s.Spec.Devices
		}
		for _, d := range devices {
			ok, err := classSelects(ctx, class, s.Spec.Driver, d)
			if err != nil {
				return 0, 0, err
			}
			if !ok {
				continue
			}
			capacity++
			if structured.IsDeviceAllocated(structured.MakeDeviceID(s.Spec.Driver, s.Spec.Pool.Name, d.Name), t.allocated) {
				allocated++
			}
		}
	}
	return capacity, allocated, nil
}

// classSelects reports whether every CEL selector of class selects the
// device; a class without selectors selects every device.
func classSelects(ctx context.Context, class *resourceapi.DeviceClass, driver string, d resourceapi.Device) (bool, error) {
	for _, sel := range class.Spec.Selectors {
		if sel.CEL == nil {
			continue
		}
		compiled := scoreCEL.GetOrCompile(sel.CEL.Expression)
		if compiled.Error != nil {
			return false, compiled.Error
		}
		ok, _, err := compiled.DeviceMatches(ctx, cel.Device{Driver: driver, Attributes: d.Attributes, Capacity: d.Capacity})
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
