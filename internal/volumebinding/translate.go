package volumebinding

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/csimigration"
)

// CSI migration. A bound volume of an in-tree kind whose migration to CSI
// kube-scheduler honours ([csimigration.Plugin.Migrated]; Azure File and
// vSphere volumes are never translated) is, on a node whose CSINode lists
// the plugin in its migrated-plugins annotation, read as the CSI volume
// it translates to (k8s.io/csi-translation-lib): for GCE PD, AWS EBS and
// Cinder that moves the zone constraint to the CSI driver's topology key,
// so the node needs that label instead. Only what changes the decision is
// modelled: the node affinity and the translation's errors.

// csiZoneKeys are the zone topology keys of the CSI drivers whose
// translation moves a volume's zone constraint; the other migrated
// plugins keep the volume's node affinity as it is.
var csiZoneKeys = map[string]string{
	"kubernetes.io/gce-pd":  "topology.gke.io/zone",
	"kubernetes.io/aws-ebs": "topology.ebs.csi.aws.com/zone",
	"kubernetes.io/cinder":  "topology.cinder.csi.openstack.org/zone",
}

// multiZoneSeparator joins zones in one zone label value.
const multiZoneSeparator = "__"

// csiNodeAffinity returns the node affinity of pv, a volume of the
// migrated plugin p, once translated to CSI, or the translation's error.
// pv is not modified.
func csiNodeAffinity(pv *v1.PersistentVolume, p *csimigration.Plugin) (*v1.VolumeNodeAffinity, error) {
	// The translation fails exactly where the volume handle cannot be made.
	if _, err := p.PVHandle(pv); err != nil {
		return nil, err
	}
	if key, ok := csiZoneKeys[p.InTreeName]; ok {
		return zoneToCSI(pv, key), nil
	}
	return pv.Spec.NodeAffinity, nil
}

// zoneToCSI returns pv's node affinity with its zone constraint under
// csiKey: the zone key's expressions renamed if any has values, else one
// expression built from the volume's zone label added to every term. A
// beta region key with values becomes the GA key.
func zoneToCSI(pv *v1.PersistentVolume, csiKey string) *v1.VolumeNodeAffinity {
	affinity := pv.Spec.NodeAffinity.DeepCopy()
	zoneKey, regionKey := v1.LabelTopologyZone, v1.LabelTopologyRegion
	switch {
	case hasKey(affinity, v1.LabelTopologyZone):
	case hasKey(affinity, v1.LabelFailureDomainBetaZone):
		zoneKey, regionKey = v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion
	default:
		if _, ga := pv.Labels[v1.LabelTopologyZone]; !ga {
			if _, beta := pv.Labels[v1.LabelFailureDomainBetaZone]; beta {
				zoneKey, regionKey = v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion
			}
		}
	}
	if hasValues(affinity, zoneKey) {
		renameKey(affinity, zoneKey, csiKey)
	} else if label, ok := pv.Labels[zoneKey]; ok {
		affinity = withZones(affinity, csiKey, strings.Split(label, multiZoneSeparator))
	}
	if regionKey == v1.LabelFailureDomainBetaRegion && hasValues(affinity, regionKey) {
		renameKey(affinity, regionKey, v1.LabelTopologyRegion)
	}
	return affinity
}

// terms returns the affinity's required terms, nil if there are none.
func terms(a *v1.VolumeNodeAffinity) []v1.NodeSelectorTerm {
	if a == nil || a.Required == nil {
		return nil
	}
	return a.Required.NodeSelectorTerms
}

// hasKey reports whether an expression of some term uses key.
func hasKey(a *v1.VolumeNodeAffinity, key string) bool {
	for _, t := range terms(a) {
		for _, e := range t.MatchExpressions {
			if e.Key == key {
				return true
			}
		}
	}
	return false
}

// hasValues reports whether an expression on key has a value.
func hasValues(a *v1.VolumeNodeAffinity, key string) bool {
	for _, t := range terms(a) {
		for _, e := range t.MatchExpressions {
			if e.Key == key && len(e.Values) > 0 {
				return true
			}
		}
	}
	return false
}

// renameKey renames key to to in every expression, in place.
func renameKey(a *v1.VolumeNodeAffinity, key, to string) {
	for _, t := range terms(a) {
		for i := range t.MatchExpressions {
			if t.MatchExpressions[i].Key == key {
				t.MatchExpressions[i].Key = to
			}
		}
	}
}

// withZones adds "key In zones" to every term of a (creating one term if
// there is none), with the zones trimmed, deduplicated and sorted. Blank
// zones are dropped; with none left, a is returned as it was. a may be
// modified.
func withZones(a *v1.VolumeNodeAffinity, key string, zones []string) *v1.VolumeNodeAffinity {
	var clean []string
	for _, z := range zones {
		if z = strings.TrimSpace(z); z != "" {
			clean = append(clean, z)
		}
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	if len(clean) == 0 {
		return a
	}
	if a == nil {
		a = &v1.VolumeNodeAffinity{}
	}
	if a.Required == nil {
		a.Required = &v1.NodeSelector{}
	}
	if len(a.Required.NodeSelectorTerms) == 0 {
		a.Required.NodeSelectorTerms = make([]v1.NodeSelectorTerm, 1)
	}
	for i := range a.Required.NodeSelectorTerms {
		t := &a.Required.NodeSelectorTerms[i]
		t.MatchExpressions = append(t.MatchExpressions, v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: clean})
	}
	return a
}
