package dra

import (
	"cmp"
	"fmt"
	"slices"
	"weak"

	"github.com/kubesched/kubesched/fwk"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// With DRADeviceTaintRules on, kube-scheduler lists slices through a
// ResourceSlice tracker that hands out each slice with the taints of the
// DeviceTaintRules selecting its devices appended, on a copy: a rule
// without a device selector selects nothing; otherwise its driver, pool
// and device, each when set, must be the slice's driver, the slice's pool
// and the device's name. The allocator then weighs those taints as the
// slice's own.
//
// Copying every tainted slice each cycle would cost the copies, and give
// the memo new objects to key on every cycle, so that it never answered.
// The memo keeps instead, per slice object, the taints applied and the
// copy made, and hands the same copy out while the slice object and those
// taints stay the same: a rule's status changing, or a rule selecting
// nothing new, copies nothing.

// taintedSlice is a slice's copy with rules' taints appended.
type taintedSlice struct {
	applied []appliedTaint
	copy    *resourceapi.ResourceSlice
}

// appliedTaint is a taint appended to the device at index device.
type appliedTaint struct {
	device int
	taint  resourceapi.DeviceTaint
}

func (a appliedTaint) equal(b appliedTaint) bool {
	// The fields the tracker compares taints by; TimeAdded's Equal takes nil.
	return a.device == b.device && a.taint.Key == b.taint.Key && a.taint.Value == b.taint.Value &&
		a.taint.Effect == b.taint.Effect && a.taint.TimeAdded.Equal(b.taint.TimeAdded)
}

// applyTaintRules returns all with the taints of the rules lister lists
// applied, as the tracker applies them: all itself when no rule selects a
// device, otherwise a new list in which each slice some rule selects
// devices of is replaced by a tainted copy, the same copy as last cycle's
// when the slice and its taints are the same. Neither all nor the slices
// are modified; the copies must not be either.
func (m *memo) applyTaintRules(all []*resourceapi.ResourceSlice, lister fwk.Lister[*resourceapi.DeviceTaintRule]) ([]*resourceapi.ResourceSlice, error) {
	if lister == nil {
		return all, nil
	}
	listed, err := lister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing DeviceTaintRules: %w", err)
	}
	rules := newRuleIndex(listed)
	if len(rules.rules) == 0 {
		m.mu.Lock()
		m.tainted = nil
		m.mu.Unlock()
		return all, nil
	}

	m.mu.Lock()
	last := m.tainted
	m.mu.Unlock()
	var (
		out     []*resourceapi.ResourceSlice
		tainted map[weak.Pointer[resourceapi.ResourceSlice]]*taintedSlice
		applied []appliedTaint
	)
	for i, s := range all {
		applied = rules.appendTaints(applied[:0], s)
		if len(applied) == 0 {
			continue
		}
		key := weak.Make(s)
		t := last[key]
		if t == nil || !slices.EqualFunc(t.applied, applied, appliedTaint.equal) {
			// Copies of the taints: the rules are not kept alive.
			t = &taintedSlice{applied: make([]appliedTaint, len(applied)), copy: s.DeepCopy()}
			for j, a := range applied {
				t.applied[j] = appliedTaint{device: a.device, taint: *a.taint.DeepCopy()}
				d := &t.copy.Spec.Devices[a.device]
				d.Taints = append(d.Taints, t.applied[j].taint)
			}
		}
		if out == nil {
			out = slices.Clone(all)
			tainted = make(map[weak.Pointer[resourceapi.ResourceSlice]]*taintedSlice, len(last))
		}
		out[i] = t.copy
		tainted[key] = t
	}
	m.mu.Lock()
	m.tainted = tainted
	m.mu.Unlock()
	if out == nil {
		return all, nil
	}
	return out, nil
}

// ruleIndex holds the rules that select devices, by name, and finds
// those that may select a slice's without trying each on every slice: a
// rule naming a pool is looked up by it.
type ruleIndex struct {
	rules []*resourceapi.DeviceTaintRule
	// byPool and anyPool are indices into rules, ascending.
	byPool  map[string][]int
	anyPool []int
}

func newRuleIndex(listed []*resourceapi.DeviceTaintRule) ruleIndex {
	var x ruleIndex
	for _, r := range listed {
		if r.Spec.DeviceSelector != nil {
			x.rules = append(x.rules, r)
		}
	}
	// Listers list in any order, and a device's taints would come in it;
	// by name, they come the same way every cycle, and the copies stay.
	slices.SortStableFunc(x.rules, func(a, b *resourceapi.DeviceTaintRule) int { return cmp.Compare(a.Name, b.Name) })
	for i, r := range x.rules {
		if pool := r.Spec.DeviceSelector.Pool; pool != nil {
			if x.byPool == nil {
				x.byPool = make(map[string][]int)
			}
			x.byPool[*pool] = append(x.byPool[*pool], i)
		} else {
			x.anyPool = append(x.anyPool, i)
		}
	}
	return x
}

// appendTaints appends to applied the taints the rules give the devices
// of s, rule by rule in name order.
func (x *ruleIndex) appendTaints(applied []appliedTaint, s *resourceapi.ResourceSlice) []appliedTaint {
	pooled, unpooled := x.byPool[s.Spec.Pool.Name], x.anyPool
	for len(pooled) > 0 || len(unpooled) > 0 {
		// Both ascend: merged, the rules come in name order.
		var i int
		if len(unpooled) == 0 || len(pooled) > 0 && pooled[0] < unpooled[0] {
			i, pooled = pooled[0], pooled[1:]
		} else {
			i, unpooled = unpooled[0], unpooled[1:]
		}
		r := x.rules[i]
		sel := r.Spec.DeviceSelector
		if sel.Driver != nil && *sel.Driver != s.Spec.Driver || sel.Pool != nil && *sel.Pool != s.Spec.Pool.Name {
			continue
		}
		for d := range s.Spec.Devices {
			if sel.Device == nil || *sel.Device == s.Spec.Devices[d].Name {
				applied = append(applied, appliedTaint{device: d, taint: r.Spec.Taint})
			}
		}
	}
	return applied
}
