package csimigration_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/csimigration"
)

func pv(labels map[string]string, src v1.PersistentVolumeSource) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: labels}, Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: src}}
}

func gcePV(zoneLabel, value string) *v1.PersistentVolume {
	var labels map[string]string
	if zoneLabel != "" {
		labels = map[string]string{zoneLabel: value}
	}
	return pv(labels, v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "disk"}})
}

func ebsPV(id string) *v1.PersistentVolume {
	return pv(nil, v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}})
}

func azurePV(kind *v1.AzureDataDiskKind) *v1.PersistentVolume {
	return pv(nil, v1.PersistentVolumeSource{AzureDisk: &v1.AzureDiskVolumeSource{DataDiskURI: "uri", Kind: kind}})
}

func TestPVHandle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		pv         *v1.PersistentVolume
		wantDriver string
		want       string
		wantErr    string
	}{
		{name: "a GCE disk without zone labels has an unspecified zone", pv: gcePV("", ""), wantDriver: "pd.csi.storage.gke.io", want: "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk"},
		{name: "a GCE disk in one zone is zonal", pv: gcePV(v1.LabelTopologyZone, "us-central1-a"), wantDriver: "pd.csi.storage.gke.io", want: "projects/UNSPECIFIED/zones/us-central1-a/disks/disk"},
		{name: "a GCE disk prefers the beta zone label", pv: pv(map[string]string{v1.LabelFailureDomainBetaZone: "beta", v1.LabelTopologyZone: "ga"}, gcePV("", "").Spec.PersistentVolumeSource), wantDriver: "pd.csi.storage.gke.io", want: "projects/UNSPECIFIED/zones/beta/disks/disk"},
		{name: "a GCE disk in zones of one region is regional", pv: gcePV(v1.LabelTopologyZone, "us-central1-a__us-central1-b"), wantDriver: "pd.csi.storage.gke.io", want: "projects/UNSPECIFIED/regions/us-central1/disks/disk"},
		{name: "a GCE disk in zones of two regions fails", pv: gcePV(v1.LabelTopologyZone, "us-central1-a__europe-west1-b"), wantErr: "failed to get region from zones: multiple or no regions gotten from zones, got: map[europe-west1:{} us-central1:{}]"},
		{name: "a GCE disk in a malformed zone list fails", pv: gcePV(v1.LabelTopologyZone, "us-central1-a__"), wantErr: "failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: "},
		{name: "an EBS volume ID is kept", pv: ebsPV("vol-1"), wantDriver: "ebs.csi.aws.com", want: "vol-1"},
		{name: "an EBS ID that is not an aws URL is kept as it is", pv: ebsPV("anything/else"), wantDriver: "ebs.csi.aws.com", want: "anything/else"},
		{name: "an EBS URL gives its volume ID", pv: ebsPV("aws://us-east-1a/vol-2"), wantDriver: "ebs.csi.aws.com", want: "vol-2"},
		{name: "an EBS URL without a volume ID fails", pv: ebsPV("aws://vol-2"), wantErr: "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://vol-2)"},
		{name: "an EBS URL that does not parse fails", pv: ebsPV("aws://%zz/vol-1"), wantErr: `failed to translate Kubernetes ID to EBS Volume ID Invalid disk name (aws://%zz/vol-1): parse "aws://%zz/vol-1": invalid URL escape "%zz"`},
		{name: "a managed Azure disk is its URI", pv: azurePV(new(v1.AzureManagedDisk)), wantDriver: "disk.csi.azure.com", want: "uri"},
		{name: "an Azure disk of no kind is its URI", pv: azurePV(nil), wantDriver: "disk.csi.azure.com", want: "uri"},
		{name: "a shared Azure disk does not migrate", pv: azurePV(new(v1.AzureSharedBlobDisk)), wantErr: "kind(Shared) is not supported in csi migration"},
		{name: "a Cinder volume is its ID", pv: pv(nil, v1.PersistentVolumeSource{Cinder: &v1.CinderPersistentVolumeSource{VolumeID: "c"}}), wantDriver: "cinder.csi.openstack.org", want: "c"},
		{name: "a Portworx volume is its ID", pv: pv(nil, v1.PersistentVolumeSource{PortworxVolume: &v1.PortworxVolumeSource{VolumeID: "p"}}), wantDriver: "pxd.portworx.com", want: "p"},
		{name: "an Azure file share is known but not translated", pv: pv(nil, v1.PersistentVolumeSource{AzureFile: &v1.AzureFilePersistentVolumeSource{}}), wantErr: `csimigration: kubernetes.io/azure-file does not translate persistent volume "pv"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := csimigration.ForPV(tt.pv)
			if p == nil {
				t.Fatal("ForPV = nil")
			}
			got, err := p.PVHandle(tt.pv)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("PVHandle = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || p.Driver != tt.wantDriver || !p.Migrated() {
				t.Errorf("PVHandle = %q, %v, driver %q, migrated %v; want %q of %q", got, err, p.Driver, p.Migrated(), tt.want, tt.wantDriver)
			}
		})
	}
}

func TestInlineHandle(t *testing.T) {
	t.Parallel()
	vol := func(src v1.VolumeSource) *v1.Volume { return &v1.Volume{Name: "v", VolumeSource: src} }
	tests := []struct {
		name    string
		vol     *v1.Volume
		want    string
		wantErr string
	}{
		{name: "an inline GCE disk never names its zone", vol: vol(v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "d"}}), want: "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"},
		{name: "an inline EBS URL gives its volume ID", vol: vol(v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws:///vol-3"}}), want: "vol-3"},
		{name: "an inline EBS URL with a path fails", vol: vol(v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://z/vol-3/x"}}), wantErr: "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://z/vol-3/x)"},
		{name: "an inline dedicated Azure disk does not migrate", vol: vol(v1.VolumeSource{AzureDisk: &v1.AzureDiskVolumeSource{Kind: new(v1.AzureDedicatedBlobDisk)}}), wantErr: "kind(Dedicated) is not supported in csi migration"},
		{name: "an inline managed Azure disk of any case is its URI", vol: vol(v1.VolumeSource{AzureDisk: &v1.AzureDiskVolumeSource{DataDiskURI: "u", Kind: new(v1.AzureDataDiskKind("managed"))}}), want: "u"},
		{name: "an inline Cinder volume is its ID", vol: vol(v1.VolumeSource{Cinder: &v1.CinderVolumeSource{VolumeID: "c"}}), want: "c"},
		{name: "an inline Portworx volume is its ID", vol: vol(v1.VolumeSource{PortworxVolume: &v1.PortworxVolumeSource{VolumeID: "p"}}), want: "p"},
		{name: "an inline vSphere volume is known but not translated", vol: vol(v1.VolumeSource{VsphereVolume: &v1.VsphereVirtualDiskVolumeSource{}}), wantErr: `csimigration: kubernetes.io/vsphere-volume does not translate volume "v"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := csimigration.ForInline(tt.vol)
			if p == nil {
				t.Fatal("ForInline = nil")
			}
			got, err := p.InlineHandle(tt.vol)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("InlineHandle = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("InlineHandle = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLookups(t *testing.T) {
	t.Parallel()
	if p := csimigration.ForPV(pv(nil, v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{}})); p != nil {
		t.Errorf("ForPV(CSI volume) = %v, want nil", p.InTreeName)
	}
	if p := csimigration.ForPV(nil); p != nil {
		t.Errorf("ForPV(nil) = %v, want nil", p.InTreeName)
	}
	if p := csimigration.ForInline(&v1.Volume{VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}); p != nil {
		t.Errorf("ForInline(emptyDir) = %v, want nil", p.InTreeName)
	}
	for name, want := range map[string]string{
		"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
		"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
		"kubernetes.io/cinder":          "cinder.csi.openstack.org",
		"kubernetes.io/azure-disk":      "disk.csi.azure.com",
		"kubernetes.io/azure-file":      "file.csi.azure.com",
		"kubernetes.io/vsphere-volume":  "csi.vsphere.vmware.com",
		"kubernetes.io/portworx-volume": "pxd.portworx.com",
	} {
		p := csimigration.ByInTreeName(name)
		if p == nil || p.Driver != want {
			t.Errorf("ByInTreeName(%q) = %v, want driver %q", name, p, want)
		}
	}
	if p := csimigration.ByInTreeName("ebs.csi.aws.com"); p != nil {
		t.Errorf("ByInTreeName(a CSI driver) = %v, want nil", p.InTreeName)
	}
	for name, want := range map[string]bool{"kubernetes.io/azure-file": false, "kubernetes.io/vsphere-volume": false, "kubernetes.io/portworx-volume": true} {
		if got := csimigration.ByInTreeName(name).Migrated(); got != want {
			t.Errorf("%s: Migrated = %v, want %v", name, got, want)
		}
	}
}
