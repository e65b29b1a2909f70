package filter

import (
	"context"
	"reflect"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/csimigration"
	"github.com/kubesched/kubesched/internal/requeue"
	"github.com/kubesched/kubesched/nodeinfo"
)

// The hints of the volume plugins: VolumeRestrictions, NodeVolumeLimits,
// VolumeBinding and VolumeZone.

// claimOfPod is VolumeRestrictions' and VolumeZone's claim hint: a claim
// in the pod's namespace that a persistentVolumeClaim volume of the pod
// names. Generic ephemeral volumes' claims do not count, as upstream's.
func claimOfPod(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	_, claim, err := requeue.Objects[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if claim == nil || claim.Namespace != pod.Namespace {
		return fwk.QueueSkip, nil
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == claim.Name {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// claimOfPodOrEphemeral is NodeVolumeLimits' and VolumeBinding's claim
// hint: a claim in the pod's namespace that a volume of the pod uses,
// generic ephemeral volumes' ("<pod>-<volume>") included.
func claimOfPodOrEphemeral(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	_, claim, err := requeue.Objects[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if claim == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if claim.Namespace != pod.Namespace {
		return fwk.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var name string
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, vol)
		default:
			continue
		}
		if name == claim.Name {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// deletedPodFreesVolumes is VolumeRestrictions' pod hint: a pod of the
// same namespace was deleted that mounted a disk the pod's volumes clash
// with, or that used one of the pod's claims (which may be
// ReadWriteOncePod).
func deletedPodFreesVolumes(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	deleted, _, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if deleted.Namespace != pod.Namespace {
		return fwk.QueueSkip, nil
	}
	// The filter on a node holding only the deleted pod finds the disk
	// conflicts first; it names no node, so any node will do.
	holder := nodeinfo.New(&v1.Node{}, deleted)
	if st := (&VolumeRestrictions{}).Filter(context.Background(), nil, pod, holder); st != nil && st.Reasons()[0] == ErrReasonDiskConflict {
		return fwk.Queue, nil
	}
	claims := sets.New[string]()
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil {
			claims.Insert(vol.PersistentVolumeClaim.ClaimName)
		}
	}
	for _, vol := range deleted.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil && claims.Has(vol.PersistentVolumeClaim.ClaimName) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// deletedPodFreesAttachments is NodeVolumeLimits' pod hint: a pod that
// held a place on a node was deleted, and it had a volume that counts
// against a node's limits (a claim, a generic ephemeral volume, or an
// inline in-tree volume CSI migration covers).
func deletedPodFreesAttachments(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	deleted, _, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if len(deleted.Spec.Volumes) == 0 || !requeue.AssignedOrNominated(deleted) {
		return fwk.QueueSkip, nil
	}
	for i := range deleted.Spec.Volumes {
		vol := &deleted.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil || csimigration.ForInline(vol) != nil {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// volumeAttachmentDeleted is NodeVolumeLimits' VolumeAttachment hint: the
// pod uses a claim (whose volume may have been the one detached), or an
// inline in-tree volume whose CSI driver is the attachment's attacher.
func volumeAttachmentDeleted(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	deleted, _, err := requeue.Objects[*storagev1.VolumeAttachment](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil {
			return fwk.Queue, nil
		}
		p := csimigration.ForInline(vol)
		if p == nil {
			continue
		}
		if p.Migrated() {
			// Upstream translates the volume first; where that fails, the
			// hint fails.
			if _, err := p.InlineHandle(vol); err != nil {
				return fwk.Queue, err
			}
		}
		if p.Driver == deleted.Spec.Attacher {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// csiNodeLimitRaised is NodeVolumeLimits' CSINode update hint: some
// driver's allocatable volume count went up (a driver new to the CSINode
// counts from 0, an unset count is 0).
func csiNodeLimitRaised(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, csiNode, err := requeue.Objects[*storagev1.CSINode](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil || csiNode == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	count := func(d *storagev1.CSINodeDriver) int32 {
		if d.Allocatable == nil || d.Allocatable.Count == nil {
			return 0
		}
		return *d.Allocatable.Count
	}
	before := make(map[string]int32, len(old.Spec.Drivers))
	for i := range old.Spec.Drivers {
		before[old.Spec.Drivers[i].Name] = count(&old.Spec.Drivers[i])
	}
	for i := range csiNode.Spec.Drivers {
		if count(&csiNode.Spec.Drivers[i]) > before[csiNode.Spec.Drivers[i].Name] {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// storageClassTopologyChanged is VolumeBinding's StorageClass hint: a
// class added, or one whose allowedTopologies changed.
func storageClassTopologyChanged(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, class, err := requeue.Objects[*storagev1.StorageClass](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if class == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if old == nil || !equality.Semantic.DeepEqual(class.AllowedTopologies, old.AllowedTopologies) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// csiNodeMigrationChanged is VolumeBinding's CSINode hint: a CSINode
// added, or one whose storage.alpha.kubernetes.io/migrated-plugins
// annotation changed.
func csiNodeMigrationChanged(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if oldObj == nil {
		return fwk.Queue, nil
	}
	old, csiNode, err := requeue.Objects[*storagev1.CSINode](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil || csiNode == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if old.Annotations[v1.MigratedPluginsAnnotationKey] != csiNode.Annotations[v1.MigratedPluginsAnnotationKey] {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// csiDriverCapacityDisabled is VolumeBinding's CSIDriver hint: a driver
// that a CSI inline volume of the pod uses stopped tracking storage
// capacity.
func csiDriverCapacityDisabled(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, driver, err := requeue.Objects[*storagev1.CSIDriver](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil || driver == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	tracked := func(d *storagev1.CSIDriver) bool { return d.Spec.StorageCapacity != nil && *d.Spec.StorageCapacity }
	for _, vol := range pod.Spec.Volumes {
		if vol.CSI != nil && vol.CSI.Driver == driver.Name && tracked(old) && !tracked(driver) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// storageCapacityGrew is VolumeBinding's CSIStorageCapacity hint: a
// capacity added, or one whose limit (maximumVolumeSize, or capacity when
// unset) appeared or went up.
func storageCapacityGrew(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, capacity, err := requeue.Objects[*storagev1.CSIStorageCapacity](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if capacity == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if old == nil {
		return fwk.Queue, nil
	}
	limit := func(c *storagev1.CSIStorageCapacity) int64 {
		if c.MaximumVolumeSize != nil {
			return c.MaximumVolumeSize.Value()
		}
		if c.Capacity != nil {
			return c.Capacity.Value()
		}
		return -1
	}
	if after := limit(capacity); after >= 0 && after > limit(old) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// storageClassWaitsForConsumer is VolumeZone's StorageClass hint: a class
// added whose volumes are bound only once a pod uses them
// (WaitForFirstConsumer).
func storageClassWaitsForConsumer(_ *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	_, class, err := requeue.Objects[*storagev1.StorageClass](nil, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if class == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// volumeTopologyChanged is VolumeZone's PersistentVolume hint: a volume
// added, or one whose zone and region labels changed (values read as
// "__"-separated sets; a label with a blank zone is ignored).
func volumeTopologyChanged(_ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, pv, err := requeue.Objects[*v1.PersistentVolume](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if pv == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if old == nil || !reflect.DeepEqual(appendVolumeTopologies(nil, old), appendVolumeTopologies(nil, pv)) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}
