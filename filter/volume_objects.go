package filter

import (
	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
)

// The lookups below stand in for client-go's Get: the listers only List,
// so they scan for namespace and name. A nil lister holds nothing. A
// missing object gives UnschedulableAndUnresolvable carrying the NotFound
// message client-go's listers give (for example `persistentvolumeclaim
// "data" not found`), as kube-scheduler's volume plugins report it; a
// failing List gives Error.

// findClaim returns the claim namespace/name.
func findClaim(l fwk.Lister[*v1.PersistentVolumeClaim], namespace, name string) (*v1.PersistentVolumeClaim, *fwk.Status) {
	if l != nil {
		all, err := l.List(labels.Everything())
		if err != nil {
			return nil, fwk.AsStatus(err)
		}
		for _, c := range all {
			if c.Namespace == namespace && c.Name == name {
				return c, nil
			}
		}
	}
	return nil, notFound(apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name))
}

// findVolume returns the PersistentVolume name.
func findVolume(l fwk.Lister[*v1.PersistentVolume], name string) (*v1.PersistentVolume, *fwk.Status) {
	if l != nil {
		all, err := l.List(labels.Everything())
		if err != nil {
			return nil, fwk.AsStatus(err)
		}
		for _, pv := range all {
			if pv.Name == name {
				return pv, nil
			}
		}
	}
	return nil, notFound(apierrors.NewNotFound(v1.Resource("persistentvolume"), name))
}

// findClass returns the StorageClass name.
func findClass(l fwk.Lister[*storagev1.StorageClass], name string) (*storagev1.StorageClass, *fwk.Status) {
	if l != nil {
		all, err := l.List(labels.Everything())
		if err != nil {
			return nil, fwk.AsStatus(err)
		}
		for _, sc := range all {
			if sc.Name == name {
				return sc, nil
			}
		}
	}
	return nil, notFound(apierrors.NewNotFound(storagev1.Resource("storageclass"), name))
}

func notFound(err error) *fwk.Status {
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
}
