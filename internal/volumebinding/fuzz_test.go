package volumebinding_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/volumebinding"
)

// FuzzClaimsWalkAnySelector builds every selector VolumeBinding parses (a
// volume's node affinity, a claim's selector, a class's allowed
// topologies, a capacity's node topology, a migrated volume's zone label)
// from arbitrary keys, operators, values and sizes. Whatever the input,
// NewClaims and Check must answer with a status, never panic.
func FuzzClaimsWalkAnySelector(f *testing.F) {
	f.Add("topology.kubernetes.io/zone", "In", "zone-1,zone-2", "5Gi", "10Gi")
	f.Add("disk", "Gt", "x", "-1", "1e100")
	f.Add("bad key!", "Near", ",,", "", "1Ei")
	f.Add("", "Exists", "us-east1-a__us-west1-b", "0", "0.5")
	f.Fuzz(func(t *testing.T, key, op, values, request, size string) {
		var vals []string
		if values != "" {
			vals = strings.Split(values, ",")
		}
		req := v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOperator(op), Values: vals}
		sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: vals}}}
		quantity := func(s string) resource.Quantity {
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return resource.Quantity{}
			}
			return q
		}
		topo := class("topo", storagev1.VolumeBindingWaitForFirstConsumer, "csi.example.com",
			v1.TopologySelectorTerm{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: key, Values: vals}}})
		c := claim("c", inClass("topo"), selecting(sel))
		c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: quantity(request)}
		d := claim("d", inClass("topo"))
		d.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: quantity(size)}
		capacity := storageCapacity("cap", "topo", "1Gi", "")
		capacity.Capacity = new(quantity(size))
		capacity.NodeTopology = sel
		bound := volume("bound", "topo", "1Gi", requiring(req), labelled(v1.LabelTopologyZone, values))
		bound.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: "disk"}
		free := volume("free", "topo", "1Gi", requiring(req), labelled(key, values))
		free.Spec.Capacity[v1.ResourceStorage] = quantity(size)
		csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/gce-pd"}}}
		l, err := fwk.NewListers(topo, csiDriver, c, d, claim("b", boundTo("bound")), capacity, bound, free, csiNode)
		if err != nil {
			t.Fatal(err)
		}
		claims, status := volumebinding.NewClaims(l, podUsing("b", "c", "d"))
		if status != nil {
			if status.Code() != fwk.Error && !status.IsRejected() {
				t.Fatalf("NewClaims = %v", status)
			}
			return
		}
		for _, n := range []node{nodeIn("a", "", key, values), nodeIn("b", values)} {
			var pl volumebinding.Placement
			got, status := claims.Check(n.name, n.labels, &pl)
			if status != nil && status.Code() != fwk.Error {
				t.Fatalf("Check = %v", status)
			}
			if again, _ := claims.Check(n.name, n.labels, nil); again != got {
				t.Fatalf("Check = %v with a placement, %v without", got, again)
			}
		}
	})
}
