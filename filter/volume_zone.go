package filter

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrReasonVolumeZoneConflict is VolumeZone's reason, worded as
// kube-scheduler's.
const ErrReasonVolumeZoneConflict = "node(s) had no available volume zone"

var (
	volumeZoneConflict    = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonVolumeZoneConflict).WithPlugin(names.VolumeZone)
	volumeZoneClaimNoName = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name").WithPlugin(names.VolumeZone)
	volumeZoneNoPVNoClass = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name").WithPlugin(names.VolumeZone)
	volumeZonePVNoName    = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "PersistentVolume had no name").WithPlugin(names.VolumeZone)
)

// volumeZoneKey holds the zone and region constraints of the pod's bound
// volumes, found once per cycle.
var volumeZoneKey = fwk.NewStateKey[[]volumeTopology]()

// volumeTopologyLabels are the PersistentVolume labels VolumeZone honours,
// in the order it checks them. A beta key on a volume is also matched by
// the node's GA key, not the other way round.
var volumeTopologyLabels = [...]string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

// volumeTopology is one topology label of one bound volume: the node must
// carry key with one of values.
type volumeTopology struct {
	volume string
	key    string
	values sets.Set[string]
}

// VolumeZone rejects nodes outside the zone or region of a volume the pod
// uses: for each PersistentVolumeClaim the pod mounts that is bound, the
// node must carry each zone and region label of the PersistentVolume
// (topology.kubernetes.io/* or failure-domain.beta.kubernetes.io/*) with
// one of the label's values, which may be a set written "a__b". Nodes
// with none of those labels fit any volume. Claims, volumes and classes
// come from [fwk.CycleState.Listers]. The rejection is
// UnschedulableAndUnresolvable. The zero value is ready to use.
type VolumeZone struct{}

var (
	_ fwk.PreFilterPlugin = &VolumeZone{}
	_ fwk.FilterPlugin    = &VolumeZone{}
)

// Name returns "VolumeZone".
func (*VolumeZone) Name() string { return names.VolumeZone }

// PreFilter looks up the pod's claims and their volumes and records the
// volumes' zone and region labels in state. It returns Skip when there
// are none: the pod mounts no claim, every unbound claim waits for its
// first consumer, or the volumes carry no (well-formed) topology label.
// It returns UnschedulableAndUnresolvable, as kube-scheduler does, when a
// claim has no name, a claim, volume or storage class is missing, an
// unbound claim has no class or its class no volume binding mode, or an
// unbound claim's class binds immediately ("PersistentVolume had no
// name"); Error when a lister fails. It never narrows the nodes.
func (*VolumeZone) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	topologies, status := podVolumeTopologies(state.Listers(), pod)
	if status != nil {
		return nil, status
	}
	if len(topologies) == 0 {
		return nil, skip
	}
	volumeZoneKey.Write(state, topologies)
	return nil, nil
}

// Filter returns nil if the node carries none of the topology labels or
// matches every label of the pod's bound volumes, UnschedulableAndUnresolvable
// with [ErrReasonVolumeZoneConflict] if not, and Error if ni has no node.
// Without PreFilter's result in state (state may be nil) it looks the
// volumes up itself and may return any status PreFilter returns. It
// modifies nothing and is safe for concurrent use.
func (*VolumeZone) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	topologies, ok := volumeZoneKey.Read(state)
	if !ok {
		var status *fwk.Status
		if topologies, status = podVolumeTopologies(state.Listers(), pod); status != nil {
			return status
		}
	}
	nodeLabels := ni.Labels()
	constrained := false
	for _, key := range volumeTopologyLabels {
		if _, ok := nodeLabels[key]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for _, t := range topologies {
		v, ok := nodeLabels[t.key]
		if !ok {
			v, ok = nodeLabels[gaTopologyLabel(t.key)]
		}
		if !ok || !t.values.Has(v) {
			return volumeZoneConflict
		}
	}
	return nil
}

// podVolumeTopologies returns the topology labels of the volumes bound to
// the pod's claims, or the status PreFilter documents. Claims are checked
// in the order the pod lists them, and the first failure wins.
func podVolumeTopologies(l fwk.Listers, pod *v1.Pod) ([]volumeTopology, *fwk.Status) {
	var out []volumeTopology
	for i := range pod.Spec.Volumes {
		src := pod.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		if src.ClaimName == "" {
			return nil, volumeZoneClaimNoName
		}
		claim, status := findClaim(l.PersistentVolumeClaims, pod.Namespace, src.ClaimName)
		if status != nil {
			return nil, status.WithPlugin(names.VolumeZone)
		}
		if claim.Spec.VolumeName == "" {
			// Unbound: fine only if binding waits for the pod's node.
			className := volumebinding.ClaimClass(claim)
			if className == "" {
				return nil, volumeZoneNoPVNoClass
			}
			class, status := findClass(l.StorageClasses, className)
			if status != nil {
				return nil, status.WithPlugin(names.VolumeZone)
			}
			if class.VolumeBindingMode == nil {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
					fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", className)).WithPlugin(names.VolumeZone)
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, volumeZonePVNoName
		}
		pv, status := findVolume(l.PersistentVolumes, claim.Spec.VolumeName)
		if status != nil {
			return nil, status.WithPlugin(names.VolumeZone)
		}
		out = appendVolumeTopologies(out, pv)
	}
	return out, nil
}

// appendVolumeTopologies appends pv's topology labels. A label whose value
// is not a well-formed "__"-separated set is ignored, as kube-scheduler
// ignores it.
func appendVolumeTopologies(out []volumeTopology, pv *v1.PersistentVolume) []volumeTopology {
	for _, key := range volumeTopologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		if zones, ok := parseZoneSet(value); ok {
			out = append(out, volumeTopology{volume: pv.Name, key: key, values: zones})
		}
	}
	return out
}

// parseZoneSet splits a multi-zone label value "a__b" into its trimmed
// zones; it fails if any zone is blank.
func parseZoneSet(value string) (sets.Set[string], bool) {
	zones := sets.New[string]()
	for z := range strings.SplitSeq(value, "__") {
		z = strings.TrimSpace(z)
		if z == "" {
			return nil, false
		}
		zones.Insert(z)
	}
	return zones, true
}

// gaTopologyLabel maps a beta zone or region label key to its GA key.
func gaTopologyLabel(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	}
	return key
}
