package dra

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
)

// taintRule is a rule called name giving the devices sel selects the
// taint key=name with effect.
func taintRule(name string, sel *resourceapi.DeviceTaintSelector, effect resourceapi.DeviceTaintEffect) *resourceapi.DeviceTaintRule {
	return &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: sel,
			Taint:          resourceapi.DeviceTaint{Key: name, Effect: effect},
		},
	}
}

// selector selects by driver, pool and device; "" leaves one unset.
func selector(driver, pool, device string) *resourceapi.DeviceTaintSelector {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return &resourceapi.DeviceTaintSelector{Driver: opt(driver), Pool: opt(pool), Device: opt(device)}
}

// taintsOf spells out the taints of every device of slices, as
// "pool/device: key key".
func taintsOf(slices []*resourceapi.ResourceSlice) []string {
	var out []string
	for _, s := range slices {
		for _, d := range s.Spec.Devices {
			line := s.Spec.Pool.Name + "/" + d.Name + ":"
			for _, t := range d.Taints {
				line += " " + t.Key
			}
			out = append(out, line)
		}
	}
	return out
}

func TestTaintRulesTaintTheDevicesTheySelect(t *testing.T) {
	t.Parallel()
	untainted := []string{"n1/gpu-0:", "n1/gpu-1:", "n2/gpu-0:"}
	tests := []struct {
		name  string
		rules []*resourceapi.DeviceTaintRule
		// own gives n2's gpu-0 a taint of its own, "own".
		own  bool
		want []string
	}{
		{"a rule without a device selector selects nothing", []*resourceapi.DeviceTaintRule{taintRule("a", nil, resourceapi.DeviceTaintEffectNoSchedule)}, false, untainted},
		{"an empty device selector selects every device", []*resourceapi.DeviceTaintRule{taintRule("a", selector("", "", ""), resourceapi.DeviceTaintEffectNoSchedule)}, false, []string{"n1/gpu-0: a", "n1/gpu-1: a", "n2/gpu-0: a"}},
		{"a rule naming the driver selects its devices", []*resourceapi.DeviceTaintRule{taintRule("a", selector(driver, "", ""), resourceapi.DeviceTaintEffectNoSchedule)}, false, []string{"n1/gpu-0: a", "n1/gpu-1: a", "n2/gpu-0: a"}},
		{"a rule naming another driver selects nothing", []*resourceapi.DeviceTaintRule{taintRule("a", selector("nic.example.com", "", ""), resourceapi.DeviceTaintEffectNoSchedule)}, false, untainted},
		{"a rule naming a pool selects its devices only", []*resourceapi.DeviceTaintRule{taintRule("a", selector("", "n1", ""), resourceapi.DeviceTaintEffectNoSchedule)}, false, []string{"n1/gpu-0: a", "n1/gpu-1: a", "n2/gpu-0:"}},
		{"a rule naming a device selects it in every pool", []*resourceapi.DeviceTaintRule{taintRule("a", selector("", "", "gpu-0"), resourceapi.DeviceTaintEffectNoSchedule)}, false, []string{"n1/gpu-0: a", "n1/gpu-1:", "n2/gpu-0: a"}},
		{"a rule naming driver, pool and device selects that device alone", []*resourceapi.DeviceTaintRule{taintRule("a", selector(driver, "n2", "gpu-0"), resourceapi.DeviceTaintEffectNoSchedule)}, false, []string{"n1/gpu-0:", "n1/gpu-1:", "n2/gpu-0: a"}},
		{"a rule naming a device the pool does not have selects nothing", []*resourceapi.DeviceTaintRule{taintRule("a", selector(driver, "n2", "gpu-1"), resourceapi.DeviceTaintEffectNoSchedule)}, false, untainted},
		{"a rule naming the device and another driver selects nothing", []*resourceapi.DeviceTaintRule{taintRule("a", selector("nic.example.com", "n1", "gpu-0"), resourceapi.DeviceTaintEffectNoSchedule)}, false, untainted},
		{"a rule with effect None still taints", []*resourceapi.DeviceTaintRule{taintRule("a", selector("", "n1", "gpu-1"), resourceapi.DeviceTaintEffectNone)}, false, []string{"n1/gpu-0:", "n1/gpu-1: a", "n2/gpu-0:"}},
		{"rules taint a device after its own taints, in name order whatever the listing order", []*resourceapi.DeviceTaintRule{
			taintRule("b", selector("", "", "gpu-0"), resourceapi.DeviceTaintEffectNoSchedule),
			taintRule("a", selector("", "n1", ""), resourceapi.DeviceTaintEffectNoExecute),
		}, true, []string{"n1/gpu-0: a b", "n1/gpu-1: a", "n2/gpu-0: own b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			all := []*resourceapi.ResourceSlice{gpuSlice("n1", "gpu-0", "gpu-1"), gpuSlice("n2", "gpu-0")}
			if tc.own {
				all[1].Spec.Devices[0].Taints = []resourceapi.DeviceTaint{{Key: "own", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
			}
			before := []*resourceapi.ResourceSlice{all[0].DeepCopy(), all[1].DeepCopy()}
			var m memo
			got, err := m.applyTaintRules(all, listers(t, ruleObjects(tc.rules)...).DeviceTaintRules)
			if err != nil {
				t.Fatal(err)
			}
			if diff := taintsOf(got); !slices.Equal(diff, tc.want) {
				t.Errorf("taints %q, want %q", diff, tc.want)
			}
			if !reflect.DeepEqual(all, before) {
				t.Error("the listed slices were modified")
			}
			for i := range all {
				if got[i] != all[i] && reflect.DeepEqual(taintsOf(got[i:i+1]), taintsOf(all[i:i+1])) {
					t.Errorf("slice %s was copied without a taint to add", all[i].Name)
				}
			}
		})
	}
}

func ruleObjects(rules []*resourceapi.DeviceTaintRule) []kruntime.Object {
	objs := make([]kruntime.Object, len(rules))
	for i, r := range rules {
		objs[i] = r
	}
	return objs
}

type failingRules struct{}

func (failingRules) List(labels.Selector) ([]*resourceapi.DeviceTaintRule, error) {
	return nil, errors.New("rules unavailable")
}

func TestDeviceTaintRulesDecideWhichDevicesAreAllocated(t *testing.T) {
	t.Parallel()
	older, err := feature.ReleaseFor("1.36")
	if err != nil {
		t.Fatal(err)
	}
	tolerating := func(key string) func(*resourceapi.ResourceClaim) {
		return func(c *resourceapi.ResourceClaim) {
			c.Spec.Devices.Requests[0].Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: key, Operator: resourceapi.DeviceTolerationOpExists}}
		}
	}
	onGPU0 := selector(driver, "n1", "gpu-0")
	tests := []struct {
		name     string
		devices  []string
		rules    []kruntime.Object
		claim    func(*resourceapi.ResourceClaim)
		features feature.Features
		// want is the device allocated, "" for none.
		want string
	}{
		{"an untolerated NoSchedule taint keeps the device from the claim", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNoSchedule)}, nil, feature.Default(), ""},
		{"an untolerated NoExecute taint keeps the device from the claim", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNoExecute)}, nil, feature.Default(), ""},
		{"a taint with effect None keeps nothing", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNone)}, nil, feature.Default(), "gpu-0"},
		{"a tolerated taint keeps nothing", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNoSchedule)}, tolerating("maintenance"), feature.Default(), "gpu-0"},
		{"a toleration of another key does not help", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNoSchedule)}, tolerating("other"), feature.Default(), ""},
		{"the claim gets the device the rule leaves alone", []string{"gpu-0", "gpu-1"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNoSchedule)}, nil, feature.Default(), "gpu-1"},
		{"a rule without a selector taints nothing", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", nil, resourceapi.DeviceTaintEffectNoSchedule)}, nil, feature.Default(), "gpu-0"},
		{"v1.36, without DRADeviceTaintRules, ignores the rules", []string{"gpu-0"},
			[]kruntime.Object{taintRule("maintenance", onGPU0, resourceapi.DeviceTaintEffectNoSchedule)}, nil, older.Features, "gpu-0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claim := gpuClaim("gpu", "default")
			if tc.claim != nil {
				tc.claim(claim)
			}
			objs := append([]kruntime.Object{claim, gpuClass, gpuSlice("n1", tc.devices...)}, tc.rules...)
			p := New(Args{})
			pod := podUsing("default", "gpu")
			s, st := p.PreFilter(context.Background(), cycle(listers(t, objs...)), pod, tc.features)
			if st != nil {
				t.Fatalf("PreFilter: %v", st)
			}
			st = p.Filter(context.Background(), s, pod, node("n1"))
			got := ""
			if a := s.allocations["n1"].results; len(a) == 1 {
				got = a[0].Devices.Results[0].Device
			}
			if got != tc.want {
				t.Errorf("allocated %q (Filter: %v), want %q", got, st, tc.want)
			}
			if (tc.want == "") != (st.Code() == fwk.UnschedulableAndUnresolvable) {
				t.Errorf("Filter = %v, want it to reject n1 exactly when no device is allocated", st)
			}
		})
	}
}

func TestPreFilterFailsWhenTheRulesCannotBeListed(t *testing.T) {
	t.Parallel()
	l := listers(t, gpuClaim("gpu", "default"), gpuClass, gpuSlice("n1", "gpu-0"))
	l.DeviceTaintRules = failingRules{}
	_, st := New(Args{}).PreFilter(context.Background(), cycle(l), podUsing("default", "gpu"), feature.Default())
	checkStatus(t, "PreFilter", st, fwk.Error, "listing DeviceTaintRules: rules unavailable")
}

// TestTaintedSlicesKeepTheMemo: a tainted slice is copied again only when
// it or its taints change, so the memo keeps answering for the nodes
// whose pools nothing changed in, and always as a fresh plugin would.
func TestTaintedSlicesKeepTheMemo(t *testing.T) {
	t.Parallel()
	// r0 is in the rack pool, which every node reaches; without it n2
	// cannot have the three devices the claim wants.
	rackRule := taintRule("rack", selector("rack.example.com", "rack", "r0"), resourceapi.DeviceTaintEffectNoSchedule)
	tests := []struct {
		name   string
		change func(w memoWorld)
		hits   int
	}{
		{"nothing changes", func(memoWorld) {}, 3},
		{"the rule is replaced by a copy with a new status", func(w memoWorld) {
			r := rackRule.DeepCopy()
			r.Status.Conditions = []metav1.Condition{{Type: "EvictionInProgress", Status: metav1.ConditionFalse}}
			w.objs["rule/rack"] = r
		}, 3},
		{"a rule selecting no device is added", func(w memoWorld) {
			w.objs["rule/none"] = taintRule("none", selector("nic.example.com", "", ""), resourceapi.DeviceTaintEffectNoSchedule)
		}, 3},
		{"a rule taints a GPU of n2", func(w memoWorld) {
			w.objs["rule/n2"] = taintRule("n2", selector(driver, "n2", "gpu-1"), resourceapi.DeviceTaintEffectNoSchedule)
		}, 2},
		{"the rule goes away", func(w memoWorld) { delete(w.objs, "rule/rack") }, 0},
		{"the rule's effect becomes None", func(w memoWorld) {
			w.objs["rule/rack"] = taintRule("rack", selector("rack.example.com", "rack", "r0"), resourceapi.DeviceTaintEffectNone)
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			untainted := newMemoWorld()
			base := untainted.clone()
			base.objs["rule/rack"] = rackRule
			warm := New(Args{})
			before, _ := base.decide(t, warm)
			if without, _ := untainted.decide(t, New(Args{})); reflect.DeepEqual(before, without) {
				t.Fatalf("the rule changes no decision (%v); the test would prove nothing", before)
			}
			changed := base.clone()
			tc.change(changed)
			changed.decideAsAFreshPlugin(t, warm, before, tc.hits)
			runtime.KeepAlive(base)
		})
	}
}

// BenchmarkApplyTaintRules measures a cycle's patching of 5000 slices of
// 8 devices, when rules select none of them and when one rule selects a
// device on every tenth node, the copies being reused.
func BenchmarkApplyTaintRules(b *testing.B) {
	var all []*resourceapi.ResourceSlice
	for i := range 5000 {
		all = append(all, gpuSlice(fmt.Sprint("node-", i), "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"))
	}
	var some []kruntime.Object
	for i := 0; i < 5000; i += 10 {
		some = append(some, taintRule(fmt.Sprint("rule-", i), selector(driver, fmt.Sprint("node-", i), "gpu-0"), resourceapi.DeviceTaintEffectNoSchedule))
	}
	for _, bc := range []struct {
		name    string
		rules   []kruntime.Object
		patched int
	}{
		{"5000slices/0rules", nil, 0},
		{"5000slices/1ruleSelectingNothing", []kruntime.Object{taintRule("other", selector("nic.example.com", "", ""), resourceapi.DeviceTaintEffectNoSchedule)}, 0},
		{"5000slices/500rules", some, 500},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lister := listers(b, bc.rules...).DeviceTaintRules
			var m memo
			got, err := m.applyTaintRules(all, lister)
			if err != nil {
				b.Fatal(err)
			}
			patched := 0
			for i := range got {
				if got[i] != all[i] {
					patched++
				}
			}
			if patched != bc.patched {
				b.Fatalf("setup: %d slices patched, want %d", patched, bc.patched)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.applyTaintRules(all, lister); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
