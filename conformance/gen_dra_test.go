package conformance

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// generateWithDRA is [Generate] with the affinity and volume generators as
// configured and the DRA generators on, whatever the switch says.
func generateWithDRA(seed uint64) *Scenario {
	s := generate(seed, generateAffinityAndSpread)
	if generateVolumes {
		addVolumes(s)
	}
	addDRA(s)
	return s
}

// TestUpstreamRunsWithDefaultFeatureGates: the oracle is meant to be
// the release under test as shipped, so the feature gates kubesched's
// Features follow, and those that shape DRA's allocator, must have their
// defaults in the oracle's process: a default that moves in a new release
// shows here.
func TestUpstreamRunsWithDefaultFeatureGates(t *testing.T) {
	t.Parallel()
	want := map[string]bool{
		"StorageCapacityScoring":             tested.Features.StorageCapacityScoring,
		"VolumeLimitScaling":                 tested.Features.VolumeLimitScaling,
		"DRADeviceTaintRules":                tested.Features.DRADeviceTaintRules,
		"TaintTolerationComparisonOperators": tested.Features.TaintTolerationComparisonOperators,
		"DynamicResourceAllocation":          true,
		"DRAPrioritizedList":                 true,
		"DRAAdminAccess":                     true,
		"DRAConsumableCapacity":              true,
		"DRADeviceTaints":                    true,
		"DRAPartitionableDevices":            true,
		"DRADeviceBindingConditions":         true,
		"DRAResourceClaimDeviceStatus":       true,
		"DRAExtendedResource":                true,
		"DRASchedulerFilterTimeout":          true,
		"DRAListTypeAttributes":              false,
		"DRANodeAllocatableResources":        false,
		"DRAWorkloadResourceClaims":          false,
	}
	for _, gate := range gatesAdded[tested.Version] {
		want[gate] = false
	}
	got, err := upstream.Gates(slices.Collect(maps.Keys(want))...)
	if err != nil {
		t.Fatal(err)
	}
	for gate, want := range want {
		if got[gate] != want {
			t.Errorf("kube-scheduler %s runs with feature gate %s %v, want %v", tested.Version, gate, got[gate], want)
		}
	}
}

// gatesAdded are the gates a release added that shape DRA's allocator,
// all off by default, by release.
var gatesAdded = map[string][]string{
	"v1.37.2": {"DRADeviceCompatibilityGroups", "DRAFractionalCapacityRange", "DRADerivedAttributes", "DRAOptionalNodeOperations"},
}

// draNames matches what varies between scenarios in DynamicResources'
// reasons and errors: object names, generated suffixes, node counts.
var draNames = regexp.MustCompile(`"[^"]*"|[a-z0-9-]+/[a-z0-9.-]+|incoming-claim-[0-9](-[a-z0-9]{5})?`)

// TestDRAScenariosCoverDynamicResources guards the DRA generators against
// drifting into scenarios that test little. It runs only the oracle, over
// a few hundred DRA scenarios whatever KUBESCHED_GEN_DRA says: upstream
// must refuse pods in DynamicResources' PreEnqueue or PreFilter and nodes in its
// Filter, place pods with claims, score prioritized lists, hand extended
// resources to DRA on nodes without them, and fail on bad input, though
// not often; and, for a release that reads DeviceTaintRules, decide
// otherwise without the scenario's rules now and then. A pod whose claim is missing is not tried at all (upstream's
// PreEnqueue), which counts with the PreFilter rejections. The scenarios have no pod affinity, spreading or volumes,
// which leave no node for two pods in three whatever their claims, so
// that DynamicResources decides most outcomes.
func TestDRAScenariosCoverDynamicResources(t *testing.T) {
	t.Parallel()
	const seeds = 300
	counts, reasons := map[string]int{}, map[string]int{}
	for seed := range uint64(seeds) {
		s := generate(seed, false)
		addDRA(s)
		for _, kind := range draOutcomes(t, s, reasons) {
			counts[kind]++
		}
	}
	t.Logf("of %d DRA scenarios: %v", seeds, counts)
	for _, r := range slices.Sorted(maps.Keys(reasons)) {
		t.Logf("  %4d  %s", reasons[r], r)
	}
	mins := map[string]int{
		"with claims": seeds / 4, "placed with claims": seeds / 15, "not tried or rejected in PreFilter": seeds / 20,
		"with nodes rejected in Filter": seeds / 10, "with a nonzero score": seeds / 60,
		"with extended resources from DRA": seeds / 20, "errors": 2,
	}
	if generateTaintRules {
		mins["with DeviceTaintRules"] = seeds / 5
		mins["decided otherwise without their DeviceTaintRules"] = seeds / 50
	}
	for kind, min := range mins {
		if counts[kind] < min {
			t.Errorf("%d scenarios %s, want at least %d", counts[kind], kind, min)
		}
	}
	if counts["errors"] > seeds/20 {
		t.Errorf("%d of %d scenarios end in a plugin error, want at most %d", counts["errors"], seeds, seeds/20)
	}
}

// draOutcomes runs s through the oracle and returns the kinds of DRA
// outcome it has (see [TestDRAScenariosCoverDynamicResources]), counting
// DynamicResources' reasons and the plugin errors, without the names in
// them, in reasons.
func draOutcomes(t *testing.T, s *Scenario, reasons map[string]int) []string {
	res, err := upstream.RunScenario(context.Background(), s)
	if err != nil {
		t.Fatalf("seed %d: %v", s.Seed, err)
	}
	if len(res.Errors) > 0 {
		for _, e := range res.Errors {
			reasons["error: "+draNames.ReplaceAllString(e, "…")]++
		}
		return []string{"errors"}
	}
	if res.NotTried != nil {
		reasons["not tried: "+draNames.ReplaceAllString(res.NotTried.Message, "…")]++
		return []string{"with claims", "not tried or rejected in PreFilter"}
	}
	var kinds []string
	if len(s.Pod.Spec.ResourceClaims) > 0 {
		kinds = append(kinds, "with claims")
		if res.FitErrorMessage == "" {
			kinds = append(kinds, "placed with claims")
		}
	}
	seen := map[string]bool{}
	rejected, scored := false, false
	for _, outcome := range res.Nodes {
		if outcome.Plugin == "DynamicResources" {
			rejected = true
			for _, r := range outcome.Reasons {
				seen[draNames.ReplaceAllString(r, "…")] = true
			}
		}
		scored = scored || outcome.Scores["DynamicResources"] > 0
	}
	for r := range seen {
		reasons[r]++
	}
	switch {
	case isPreFilterRejection(res, len(s.Nodes), "DynamicResources"):
		kinds = append(kinds, "not tried or rejected in PreFilter")
	case rejected:
		kinds = append(kinds, "with nodes rejected in Filter")
	}
	if scored {
		kinds = append(kinds, "with a nonzero score")
	}
	if handedToDRA(s, res) {
		kinds = append(kinds, "with extended resources from DRA")
	}
	if without := withoutTaintRules(s); without != s {
		kinds = append(kinds, "with DeviceTaintRules")
		other, err := upstream.RunScenario(context.Background(), without)
		if err != nil {
			t.Fatalf("seed %d without DeviceTaintRules: %v", s.Seed, err)
		}
		if !equality.Semantic.DeepEqual(res, other) {
			kinds = append(kinds, "decided otherwise without their DeviceTaintRules")
		}
	}
	return kinds
}

// withoutTaintRules returns s without its DeviceTaintRules, or s itself
// when it has none.
func withoutTaintRules(s *Scenario) *Scenario {
	objs := slices.DeleteFunc(slices.Clone(s.Objects), func(obj runtime.Object) bool {
		_, rule := obj.(*resourceapi.DeviceTaintRule)
		return rule
	})
	if len(objs) == len(s.Objects) {
		return s
	}
	without := *s
	without.Objects = objs
	return &without
}

// isPreFilterRejection reports whether plugin turned the pod down in
// PreFilter: every node then carries its one reason, and the FitError
// quotes it once instead of counting nodes.
func isPreFilterRejection(res *OracleResult, numNodes int, plugin string) bool {
	var reasons []string
	for _, outcome := range res.Nodes {
		if outcome.Plugin != plugin {
			return false
		}
		reasons = outcome.Reasons
	}
	return len(reasons) == 1 && res.FitErrorMessage == fmt.Sprintf("0/%d nodes are available: %s.", numNodes, reasons[0])
}

// handedToDRA reports whether the incoming pod asks for an extended
// resource a DeviceClass backs, and upstream placed it, or rejected a
// node in DynamicResources, where no device plugin provides it.
func handedToDRA(s *Scenario, res *OracleResult) bool {
	for _, name := range backedRequests(s) {
		for _, n := range s.Nodes {
			if _, plugin := n.Status.Allocatable[name]; plugin {
				continue
			}
			if outcome := res.Nodes[n.Name]; outcome.Feasible || outcome.Plugin == "DynamicResources" {
				return true
			}
		}
	}
	return false
}

// backedRequests returns the extended resources the incoming pod's
// containers ask for that a DeviceClass of s backs, explicitly or by its
// own deviceclass.resource.kubernetes.io name.
func backedRequests(s *Scenario) []v1.ResourceName {
	backed := map[v1.ResourceName]bool{}
	for _, obj := range s.Objects {
		if class, ok := obj.(*resourceapi.DeviceClass); ok {
			backed[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+class.Name)] = true
			if name := class.Spec.ExtendedResourceName; name != nil {
				backed[v1.ResourceName(*name)] = true
			}
		}
	}
	var out []v1.ResourceName
	for _, c := range s.Pod.Spec.Containers {
		for name, q := range c.Resources.Requests {
			if backed[name] && !q.IsZero() {
				out = append(out, name)
			}
		}
	}
	return out
}

// TestDRAGeneratorMakesConsistentObjects: generated DRA objects are ones a
// cluster could hold, and DRA scenarios are deterministic, leave the nodes
// as they were, and (one in ten, as that is slow) survive a YAML round
// trip.
func TestDRAGeneratorMakesConsistentObjects(t *testing.T) {
	t.Parallel()
	for seed := range uint64(60) {
		s := generateWithDRA(seed)
		if again := generateWithDRA(seed); !equality.Semantic.DeepEqual(s, again) {
			t.Fatalf("seed %d: two calls give different scenarios", seed)
		}
		plain := generate(seed, generateAffinityAndSpread)
		if generateVolumes {
			addVolumes(plain)
		}
		if !equality.Semantic.DeepEqual(s.Nodes, plain.Nodes) {
			t.Fatalf("seed %d: the DRA generators changed nodes", seed)
		}
		if err := checkDRAObjects(s); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if seed%10 != 0 {
			continue
		}
		data, err := MarshalScenario(s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		back, err := ParseScenario(data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		back.Seed = s.Seed
		if !equality.Semantic.DeepEqual(s, back) {
			t.Fatalf("seed %d: scenario changed in a YAML round trip", seed)
		}
	}
}

// checkDRAObjects checks that object names are unique; that allocations
// name devices of existing slices, none allocated whole twice; that a
// claim is in the namespace of the pods using it, reserved for the bound
// ones among them, and when generated for a pod, owned by it; and that
// claims with admin access are in namespaces allowing it.
func checkDRAObjects(s *Scenario) error {
	seen := map[objectKey]bool{}
	devices := map[string]bool{}
	claims := map[string]*resourceapi.ResourceClaim{}
	adminNamespaces := map[string]bool{}
	for _, obj := range s.Objects {
		key, err := keyOf(obj)
		if err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("two objects are %s %s/%s", key.kind.Kind, key.namespace, key.name)
		}
		seen[key] = true
		switch o := obj.(type) {
		case *resourceapi.ResourceSlice:
			for _, d := range o.Spec.Devices {
				devices[o.Spec.Driver+"/"+o.Spec.Pool.Name+"/"+d.Name] = true
			}
		case *resourceapi.ResourceClaim:
			claims[o.Namespace+"/"+o.Name] = o
		case *v1.Namespace:
			adminNamespaces[o.Name] = o.Labels[adminAccessLabel] == "true"
		}
	}
	allocated := map[string]string{}
	for _, c := range claims {
		for _, r := range c.Spec.Devices.Requests {
			if r.Exactly != nil && ptr.Deref(r.Exactly.AdminAccess, false) && !adminNamespaces[c.Namespace] {
				return fmt.Errorf("claim %s/%s asks for admin access in namespace %s, which does not allow it", c.Namespace, c.Name, c.Namespace)
			}
		}
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			id := r.Driver + "/" + r.Pool + "/" + r.Device
			if !devices[id] {
				return fmt.Errorf("claim %s/%s holds device %s, which no slice has", c.Namespace, c.Name, id)
			}
			if r.ShareID == nil {
				if other, ok := allocated[id]; ok {
					return fmt.Errorf("claims %s and %s/%s both hold device %s", other, c.Namespace, c.Name, id)
				}
				allocated[id] = c.Namespace + "/" + c.Name
			}
		}
	}
	for _, p := range append(slices.Clone(s.Pods), s.Pod) {
		for _, pc := range p.Spec.ResourceClaims {
			name := ptr.Deref(pc.ResourceClaimName, "")
			for _, st := range p.Status.ResourceClaimStatuses {
				if st.Name == pc.Name && pc.ResourceClaimTemplateName != nil {
					name = ptr.Deref(st.ResourceClaimName, "")
				}
			}
			c, ok := claims[p.Namespace+"/"+name]
			if !ok {
				if p != s.Pod {
					return fmt.Errorf("bound pod %s uses claim %q, which does not exist", p.Name, name)
				}
				continue
			}
			if p == s.Pod {
				continue
			}
			if !slices.ContainsFunc(c.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == p.UID }) {
				return fmt.Errorf("bound pod %s uses claim %s, which is not reserved for it", p.Name, c.Name)
			}
			if pc.ResourceClaimTemplateName != nil && (len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != p.UID) {
				return fmt.Errorf("bound pod %s's claim %s from a template is not its own", p.Name, c.Name)
			}
		}
	}
	return nil
}
