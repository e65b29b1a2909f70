package loader

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxClaimPrefix is how long the resource claim controller lets a
// generated claim's prefix be, "<pod>-<claim>-", so that five characters
// and a hyphen more make 63.
const maxClaimPrefix = 57

// claimsFromTemplates creates, for each pending pod of c, the
// ResourceClaims the resource claim controller would create from its
// claims' ResourceClaimTemplates, and records them in the pod's
// status.resourceClaimStatuses, as the controller does before
// kube-scheduler can try the pod. A pod whose status already names a
// claim for one of its claims (a pod of a live cluster) is left as it
// is, and so is a claim whose template c lacks: kube-scheduler then does
// not try the pod, and says why. It returns the claims, in pod order.
func (x *expander) claimsFromTemplates() []*resourceapi.ResourceClaim {
	templates := map[[2]string]*resourceapi.ResourceClaimTemplate{}
	for _, o := range x.c.Workloads {
		if t, ok := o.(*resourceapi.ResourceClaimTemplate); ok && t != nil {
			key := [2]string{t.Namespace, t.Name}
			if _, dup := templates[key]; !dup {
				templates[key] = t
			}
		}
	}
	if len(templates) == 0 {
		return nil
	}
	var claims []*resourceapi.ResourceClaim
	for _, pod := range x.c.Pods {
		if pod == nil || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			continue
		}
		for i := range pod.Spec.ResourceClaims {
			pc := &pod.Spec.ResourceClaims[i]
			if pc.ResourceClaimTemplateName == nil || hasClaimStatus(pod, pc.Name) {
				continue
			}
			t := templates[[2]string{pod.Namespace, *pc.ResourceClaimTemplateName}]
			if t == nil {
				continue
			}
			claim := x.claimFor(pod, pc.Name, t)
			claims = append(claims, claim)
			pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
				v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &claim.Name})
		}
	}
	return claims
}

func hasClaimStatus(pod *v1.Pod, name string) bool {
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == name {
			return true
		}
	}
	return false
}

// claimFor is the claim the resource claim controller creates for pod's
// claim called name from t: named "<pod>-<name>-" and five characters
// (both parts cut in proportion when that is too long), owned by the
// pod, with the template's labels and annotations, the annotation that
// names the pod's claim, and the template's spec.
func (x *expander) claimFor(pod *v1.Pod, name string, t *resourceapi.ResourceClaimTemplate) *resourceapi.ResourceClaim {
	prefix := pod.Name + "-" + name + "-"
	if n := len(prefix); n > maxClaimPrefix {
		prefix = pod.Name[:len(pod.Name)*maxClaimPrefix/n] + "-" + name[:len(name)*maxClaimPrefix/n]
	}
	annotations := maps.Clone(t.Spec.ObjectMeta.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[resourceapi.PodResourceClaimAnnotation] = name
	yes := true
	claim := &resourceapi.ResourceClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: resourceapi.SchemeGroupVersion.String(), Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:         x.names.generate("ResourceClaim", pod.Namespace, prefix),
			GenerateName: prefix,
			Namespace:    pod.Namespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &yes,
			}},
			Labels:      maps.Clone(t.Spec.ObjectMeta.Labels),
			Annotations: annotations,
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	}
	claim.UID = madeUpUID("ResourceClaim", claim.Namespace, claim.Name)
	return claim
}
