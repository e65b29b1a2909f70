package conformance

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// generateWithVolumes is [Generate] with the affinity generators as
// configured and the volume generators on, whatever the switch says.
func generateWithVolumes(seed uint64) *Scenario {
	s := generate(seed, generateAffinityAndSpread)
	addVolumes(s)
	return s
}

// quoted matches the object names in reasons, which vary by scenario.
var quoted = regexp.MustCompile(`"[^"]*"`)

// volumePlugins are the plugins volume scenarios exist for.
var volumePlugins = []string{"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}

// TestVolumeScenariosCoverEveryVolumePlugin guards the volume generators
// against drifting into scenarios that test little: across a few hundred
// seeds, upstream must see each volume plugin reject a node in a share of
// the scenarios, and still place the pod in many.
func TestVolumeScenariosCoverEveryVolumePlugin(t *testing.T) {
	t.Parallel()
	const seeds = 300
	var placed, placedWithout int
	rejected := map[string]int{}
	reasons := map[string]int{}
	for seed := range uint64(seeds) {
		without, err := upstream.RunScenario(context.Background(), generate(seed, generateAffinityAndSpread))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if without.FitErrorMessage == "" {
			placedWithout++
		}
		s := generateWithVolumes(seed)
		res, err := upstream.RunScenario(context.Background(), s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.FitErrorMessage == "" {
			placed++
		}
		by := map[string]bool{}
		for _, outcome := range res.Nodes {
			if !outcome.Feasible && slices.Contains(volumePlugins, outcome.Plugin) {
				by[outcome.Plugin] = true
				for _, r := range outcome.Reasons {
					by[outcome.Plugin+": "+quoted.ReplaceAllString(r, `"…"`)] = true
				}
			}
		}
		for k := range by {
			if slices.Contains(volumePlugins, k) {
				rejected[k]++
			} else {
				reasons[k]++
			}
		}
	}
	t.Logf("of %d volume scenarios, %d placed (%d without volumes); scenarios where a plugin rejected a node: %v", seeds, placed, placedWithout, rejected)
	for _, r := range slices.Sorted(maps.Keys(reasons)) {
		t.Logf("  %4d  %s", reasons[r], r)
	}
	if placed < seeds*3/10 {
		t.Errorf("only %d of %d scenarios placed the pod", placed, seeds)
	}
	for _, plugin := range volumePlugins {
		if rejected[plugin] < seeds/25 {
			t.Errorf("%s rejected a node in %d scenarios, want at least %d", plugin, rejected[plugin], seeds/25)
		}
	}
}

// TestVolumeGeneratorMakesConsistentObjects: generated storage objects
// are ones a cluster could hold. Names are unique per kind and objects
// have UIDs; a claim bound by the controller to an existing volume is
// named back by that volume's claimRef, with its UID, and both are in
// phase Bound; ReadWriteOncePod comes alone; every CSINode has its node;
// pods name their volumes uniquely, and a bound pod's ephemeral claim,
// when it exists, is its own. Volume scenarios are also deterministic,
// and leave the nodes' other labels and the pods' other fields as they
// were.
func TestVolumeGeneratorMakesConsistentObjects(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		s := generateWithVolumes(seed)
		if again := generateWithVolumes(seed); !equality.Semantic.DeepEqual(s, again) {
			t.Fatalf("seed %d: two calls give different scenarios", seed)
		}
		plain := generate(seed, generateAffinityAndSpread)
		if err := sameApartFromVolumes(plain, s); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := checkStorageObjects(s); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// sameApartFromVolumes checks that with volumes only node labels were
// added, pods only gained volumes, and objects were only appended.
func sameApartFromVolumes(plain, s *Scenario) error {
	for i, n := range s.Nodes {
		for k, v := range plain.Nodes[i].Labels {
			if n.Labels[k] != v {
				return fmt.Errorf("node %s: label %s=%q became %q", n.Name, k, v, n.Labels[k])
			}
		}
		withoutLabels := n.DeepCopy()
		withoutLabels.Labels = plain.Nodes[i].Labels
		if !equality.Semantic.DeepEqual(withoutLabels, plain.Nodes[i]) {
			return fmt.Errorf("node %s changed besides its labels", n.Name)
		}
	}
	for i, p := range append(slices.Clone(s.Pods), s.Pod) {
		want := append(slices.Clone(plain.Pods), plain.Pod)[i]
		withoutVolumes := p.DeepCopy()
		withoutVolumes.Spec.Volumes = nil
		if !equality.Semantic.DeepEqual(withoutVolumes, want) {
			return fmt.Errorf("pod %s changed besides its volumes", p.Name)
		}
	}
	if !equality.Semantic.DeepEqual(s.Objects[:len(plain.Objects)], plain.Objects) {
		return fmt.Errorf("the objects without volumes changed")
	}
	return nil
}

func checkStorageObjects(s *Scenario) error {
	seen := map[objectKey]bool{}
	claims := map[string]*v1.PersistentVolumeClaim{}
	volumes := map[string]*v1.PersistentVolume{}
	var accessModes [][]v1.PersistentVolumeAccessMode
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
		case *v1.PersistentVolumeClaim:
			claims[o.Namespace+"/"+o.Name] = o
			accessModes = append(accessModes, o.Spec.AccessModes)
		case *v1.PersistentVolume:
			volumes[o.Name] = o
			accessModes = append(accessModes, o.Spec.AccessModes)
		case *storagev1.CSINode:
			if !slices.ContainsFunc(s.Nodes, func(n *v1.Node) bool { return n.Name == o.Name }) {
				return fmt.Errorf("CSINode %s has no node", o.Name)
			}
		}
		if m, _ := meta.Accessor(obj); m.GetUID() == "" {
			return fmt.Errorf("%s %s has no UID", key.kind.Kind, key.name)
		}
	}
	for _, modes := range accessModes {
		if len(modes) > 1 && slices.Contains(modes, v1.ReadWriteOncePod) {
			return fmt.Errorf("access modes %v: ReadWriteOncePod must come alone", modes)
		}
	}
	for _, c := range claims {
		pv, ok := volumes[c.Spec.VolumeName]
		if !ok || c.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" {
			continue
		}
		if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != c.Namespace || ref.Name != c.Name || ref.UID != c.UID {
			return fmt.Errorf("claim %s/%s is bound to %s, which is not bound to it", c.Namespace, c.Name, pv.Name)
		}
		if pv.Status.Phase != v1.VolumeBound || c.Status.Phase != v1.ClaimBound {
			return fmt.Errorf("claim %s/%s and volume %s are bound in phases %s and %s", c.Namespace, c.Name, pv.Name, c.Status.Phase, pv.Status.Phase)
		}
	}
	for _, p := range append(slices.Clone(s.Pods), s.Pod) {
		names := map[string]bool{}
		for _, vol := range p.Spec.Volumes {
			if names[vol.Name] {
				return fmt.Errorf("pod %s has two volumes named %s", p.Name, vol.Name)
			}
			names[vol.Name] = true
			if vol.Ephemeral == nil {
				continue
			}
			c, ok := claims[p.Namespace+"/"+p.Name+"-"+vol.Name]
			if ok && p != s.Pod && !metav1.IsControlledBy(c, p) {
				return fmt.Errorf("bound pod %s's ephemeral claim %s is not its own", p.Name, c.Name)
			}
		}
	}
	return nil
}
