package volumebinding

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annBoundByController marks a volume that kube-scheduler's volume
// binding, not its user, bound to its claim.
const annBoundByController = "pv.kubernetes.io/bound-by-controller"

// Assume returns what kube-scheduler's AssumePodVolumes records when the
// pod goes to nodeName with this placement: each volume matched to an
// unbound claim, copied with its claimRef naming the claim (left out when
// it already names it), and each claim to provision, copied with the
// selected-node annotation.
func (p *Placement) Assume(nodeName string) ([]*v1.PersistentVolume, []*v1.PersistentVolumeClaim) {
	var pvs []*v1.PersistentVolume
	for _, b := range p.static {
		if pv, changed := bindVolume(b.pv, b.claim); changed {
			pvs = append(pvs, pv)
		}
	}
	var claims []*v1.PersistentVolumeClaim
	for _, d := range p.dynamic {
		c := d.claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, annSelectedNode, nodeName)
		claims = append(claims, c)
	}
	return pvs, claims
}

// bindVolume returns a copy of pv bound to claim, as the volume binding
// of kube-scheduler binds it: its claimRef set to the claim unless it
// names it already (namespace, name and UID), and, unless pv was bound to
// the claim beforehand (its claimRef naming it, with the claim's UID or
// none), marked as bound by the controller. changed reports whether the
// copy differs from pv.
func bindVolume(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) (_ *v1.PersistentVolume, changed bool) {
	ref := pv.Spec.ClaimRef
	prebound := ref != nil && ref.Name == claim.Name && ref.Namespace == claim.Namespace && (ref.UID == "" || ref.UID == claim.UID)
	c := pv.DeepCopy()
	if ref == nil || ref.Name != claim.Name || ref.Namespace != claim.Namespace || ref.UID != claim.UID {
		c.Spec.ClaimRef = &v1.ObjectReference{
			Kind:            "PersistentVolumeClaim",
			APIVersion:      "v1",
			Namespace:       claim.Namespace,
			Name:            claim.Name,
			UID:             claim.UID,
			ResourceVersion: claim.ResourceVersion,
		}
		changed = true
	}
	if !prebound && !metav1.HasAnnotation(c.ObjectMeta, annBoundByController) {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, annBoundByController, "yes")
		changed = true
	}
	return c, changed
}
