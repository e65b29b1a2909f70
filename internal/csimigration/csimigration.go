// Package csimigration knows which in-tree volume plugins CSI migration
// hands to a CSI driver, and the CSI volume handle an in-tree volume gets:
// the part of k8s.io/csi-translation-lib v0.36.3 that kube-scheduler's
// NodeVolumeLimits reads, so that kubesched need not depend on that module.
//
// Handles are translated only for the plugins kube-scheduler
// counts as migrated ([Plugin.Migrated]); the others are known by name and
// source only, which is all the scheduler asks of them.
package csimigration

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Plugin is an in-tree volume plugin that a CSI driver replaces. Its
// fields are read only.
type Plugin struct {
	// InTreeName is the plugin's name, as a StorageClass provisioner
	// spells it, for example "kubernetes.io/aws-ebs".
	InTreeName string
	// Driver is the CSI driver that replaces it, for example
	// "ebs.csi.aws.com".
	Driver string

	// hasPV and hasInline report whether a source is of this plugin.
	hasPV     func(*v1.PersistentVolumeSource) bool
	hasInline func(*v1.VolumeSource) bool
	// pvHandle and inlineHandle translate a volume of this plugin into
	// its CSI volume handle; nil unless the plugin counts as migrated.
	pvHandle     func(*v1.PersistentVolume) (string, error)
	inlineHandle func(*v1.VolumeSource) (string, error)
}

// The plugins csi-translation-lib v0.36.3 translates. When a volume has
// sources of several plugins, which API validation forbids, the first in
// this order wins; csi-translation-lib picks one at random.
var plugins = [...]*Plugin{
	{
		InTreeName: "kubernetes.io/gce-pd",
		Driver:     "pd.csi.storage.gke.io",
		hasPV:      func(s *v1.PersistentVolumeSource) bool { return s.GCEPersistentDisk != nil },
		hasInline:  func(s *v1.VolumeSource) bool { return s.GCEPersistentDisk != nil },
		pvHandle:   gcePDHandle,
		inlineHandle: func(s *v1.VolumeSource) (string, error) {
			return gceZonalHandle(unspecified, s.GCEPersistentDisk.PDName), nil
		},
	},
	{
		InTreeName:   "kubernetes.io/aws-ebs",
		Driver:       "ebs.csi.aws.com",
		hasPV:        func(s *v1.PersistentVolumeSource) bool { return s.AWSElasticBlockStore != nil },
		hasInline:    func(s *v1.VolumeSource) bool { return s.AWSElasticBlockStore != nil },
		pvHandle:     func(pv *v1.PersistentVolume) (string, error) { return ebsHandle(pv.Spec.AWSElasticBlockStore.VolumeID) },
		inlineHandle: func(s *v1.VolumeSource) (string, error) { return ebsHandle(s.AWSElasticBlockStore.VolumeID) },
	},
	{
		InTreeName:   "kubernetes.io/cinder",
		Driver:       "cinder.csi.openstack.org",
		hasPV:        func(s *v1.PersistentVolumeSource) bool { return s.Cinder != nil },
		hasInline:    func(s *v1.VolumeSource) bool { return s.Cinder != nil },
		pvHandle:     func(pv *v1.PersistentVolume) (string, error) { return pv.Spec.Cinder.VolumeID, nil },
		inlineHandle: func(s *v1.VolumeSource) (string, error) { return s.Cinder.VolumeID, nil },
	},
	{
		InTreeName:   "kubernetes.io/azure-disk",
		Driver:       "disk.csi.azure.com",
		hasPV:        func(s *v1.PersistentVolumeSource) bool { return s.AzureDisk != nil },
		hasInline:    func(s *v1.VolumeSource) bool { return s.AzureDisk != nil },
		pvHandle:     func(pv *v1.PersistentVolume) (string, error) { return azureDiskHandle(pv.Spec.AzureDisk) },
		inlineHandle: func(s *v1.VolumeSource) (string, error) { return azureDiskHandle(s.AzureDisk) },
	},
	{
		InTreeName: "kubernetes.io/azure-file",
		Driver:     "file.csi.azure.com",
		hasPV:      func(s *v1.PersistentVolumeSource) bool { return s.AzureFile != nil },
		hasInline:  func(s *v1.VolumeSource) bool { return s.AzureFile != nil },
	},
	{
		InTreeName: "kubernetes.io/vsphere-volume",
		Driver:     "csi.vsphere.vmware.com",
		hasPV:      func(s *v1.PersistentVolumeSource) bool { return s.VsphereVolume != nil },
		hasInline:  func(s *v1.VolumeSource) bool { return s.VsphereVolume != nil },
	},
	{
		InTreeName:   "kubernetes.io/portworx-volume",
		Driver:       "pxd.portworx.com",
		hasPV:        func(s *v1.PersistentVolumeSource) bool { return s.PortworxVolume != nil },
		hasInline:    func(s *v1.VolumeSource) bool { return s.PortworxVolume != nil },
		pvHandle:     func(pv *v1.PersistentVolume) (string, error) { return pv.Spec.PortworxVolume.VolumeID, nil },
		inlineHandle: func(s *v1.VolumeSource) (string, error) { return s.PortworxVolume.VolumeID, nil },
	},
}

// ForPV returns the plugin of an in-tree PersistentVolume, or nil if pv
// is nil or of no plugin CSI migration covers (a CSI volume, NFS, ...).
func ForPV(pv *v1.PersistentVolume) *Plugin {
	if pv == nil {
		return nil
	}
	for _, p := range plugins {
		if p.hasPV(&pv.Spec.PersistentVolumeSource) {
			return p
		}
	}
	return nil
}

// ForInline returns the plugin of a pod's inline in-tree volume, or nil
// if vol is nil or of no plugin CSI migration covers.
func ForInline(vol *v1.Volume) *Plugin {
	if vol == nil {
		return nil
	}
	for _, p := range plugins {
		if p.hasInline(&vol.VolumeSource) {
			return p
		}
	}
	return nil
}

// ByInTreeName returns the plugin named name ("kubernetes.io/gce-pd"), or
// nil.
func ByInTreeName(name string) *Plugin {
	for _, p := range plugins {
		if p.InTreeName == name {
			return p
		}
	}
	return nil
}

// Migrated reports whether kube-scheduler counts the plugin's
// volumes as its CSI driver's on every node that has a CSINode: AWS EBS,
// GCE PD, Azure Disk, Cinder and Portworx. Azure File and vSphere are
// known but never counted.
func (p *Plugin) Migrated() bool { return p.pvHandle != nil }

// PVHandle returns the CSI volume handle of pv, a volume of p, as
// csi-translation-lib's TranslateInTreePVToCSI sets it; an error where
// that translation fails or p is not [Plugin.Migrated].
func (p *Plugin) PVHandle(pv *v1.PersistentVolume) (string, error) {
	if p.pvHandle == nil || !p.hasPV(&pv.Spec.PersistentVolumeSource) {
		return "", fmt.Errorf("csimigration: %s does not translate persistent volume %q", p.InTreeName, pv.Name)
	}
	return p.pvHandle(pv)
}

// InlineHandle returns the CSI volume handle of vol, an inline volume of
// p, as csi-translation-lib's TranslateInTreeInlineVolumeToCSI sets it;
// on failure, an error worded as that function's.
func (p *Plugin) InlineHandle(vol *v1.Volume) (string, error) {
	if p.inlineHandle == nil || !p.hasInline(&vol.VolumeSource) {
		return "", fmt.Errorf("csimigration: %s does not translate volume %q", p.InTreeName, vol.Name)
	}
	return p.inlineHandle(&vol.VolumeSource)
}

// unspecified stands for a GCE project or zone the handle does not name.
const unspecified = "UNSPECIFIED"

func gceZonalHandle(zone, disk string) string {
	return "projects/" + unspecified + "/zones/" + zone + "/disks/" + disk
}

// gcePDHandle names the disk by the zone or zones of the volume's zone
// label (beta first): one zone gives a zonal handle, several a regional
// one, none a zonal one with the zone unspecified.
func gcePDHandle(pv *v1.PersistentVolume) (string, error) {
	label := pv.Labels[v1.LabelFailureDomainBetaZone]
	if label == "" {
		label = pv.Labels[v1.LabelTopologyZone]
	}
	disk := pv.Spec.GCEPersistentDisk.PDName
	zones := strings.Split(label, "__")
	switch {
	case len(zones) > 1:
		region, err := gceRegion(zones)
		if err != nil {
			return "", fmt.Errorf("failed to get region from zones: %v", err)
		}
		return "projects/" + unspecified + "/regions/" + region + "/disks/" + disk, nil
	case zones[0] != "":
		return gceZonalHandle(zones[0], disk), nil
	}
	return gceZonalHandle(unspecified, disk), nil
}

// gceRegion returns the one region ("us-central1") of zones
// ("us-central1-a"), each of which must have exactly three dash-separated
// parts.
func gceRegion(zones []string) (string, error) {
	var region string
	regions := map[string]struct{}{}
	for _, zone := range zones {
		parts := strings.Split(zone, "-")
		if len(parts) != 3 {
			return "", fmt.Errorf("zone in unexpected format, expected: {locale}-{region}-{zone}, got: %v", zone)
		}
		region = parts[0] + "-" + parts[1]
		regions[region] = struct{}{}
	}
	if len(regions) != 1 {
		return "", fmt.Errorf("multiple or no regions gotten from zones, got: %v", regions)
	}
	return region, nil
}

var ebsVolumeID = regexp.MustCompile(`^vol-[^/]*$`)

// ebsHandle turns a Kubernetes EBS volume ID, either "vol-..." or
// "aws://<zone>/vol-...", into the EBS volume ID. IDs not starting with
// "aws://" are taken as they are.
func ebsHandle(id string) (string, error) {
	if !strings.HasPrefix(id, "aws://") {
		return id, nil
	}
	u, err := url.Parse(id)
	if err != nil {
		return "", fmt.Errorf("failed to translate Kubernetes ID to EBS Volume ID Invalid disk name (%s): %v", id, err)
	}
	// The scheme is "aws": url.Parse keeps it as the prefix has it.
	handle := strings.Trim(u.Path, "/")
	if !ebsVolumeID.MatchString(handle) {
		return "", fmt.Errorf("failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (%s)", id)
	}
	return handle, nil
}

// azureDiskHandle is the disk's URI; only managed disks migrate.
func azureDiskHandle(s *v1.AzureDiskVolumeSource) (string, error) {
	if s.Kind != nil && !strings.EqualFold(string(*s.Kind), string(v1.AzureManagedDisk)) {
		return "", fmt.Errorf("kind(%v) is not supported in csi migration", *s.Kind)
	}
	return s.DataDiskURI, nil
}
