package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// localVolume is a 1Gi local volume of class on node, as the local
// static provisioner makes them.
func localVolume(name, class, node string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:              class,
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disks/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
}

// TestVolumeBindingAgrees gives each scheduler, on a fresh control plane
// with kube-controller-manager's PV binder, three local volumes on two
// of three nodes, a WaitForFirstConsumer class, and four pods each with
// a claim of that class, created at once. Each scheduler must bind three
// pods, each to the node of the volume its claim ends up bound to, with
// no volume bound twice, and report the fourth unschedulable with the
// same message; both must nominate the pods before binding them alike
// (NominatedNodeNameForExpectation: VolumeBinding's PreBind has work).
func TestVolumeBindingAgrees(t *testing.T) {
	const class = "local-wffc"
	volumes := map[string]string{"disk-0a": "node-0", "disk-0b": "node-0", "disk-1a": "node-1"}
	type outcome struct{ message, nominations string }
	outcomes := map[string]outcome{}
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		t.Run(scheduler, func(t *testing.T) {
			ctx := context.Background()
			cp, client := startControlPlaneOpts(t, ctx, false)
			if err := cp.StartControllerManager(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("kube-controller-manager log ends:\n%s", cp.Log("kube-controller-manager", 3000))
				}
			})
			for i := range 3 {
				if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "4", "8Gi", nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			wait := storagev1.VolumeBindingWaitForFirstConsumer
			sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wait}
			if _, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for name, n := range volumes {
				if _, err := client.CoreV1().PersistentVolumes().Create(ctx, localVolume(name, class, n), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			claims := client.CoreV1().PersistentVolumeClaims(metav1.NamespaceDefault)
			pods := client.CoreV1().Pods(metav1.NamespaceDefault)
			for i := range 4 {
				claim := &v1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-%d", i)},
					Spec: v1.PersistentVolumeClaimSpec{
						StorageClassName: new(class),
						AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
						Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
					},
				}
				if _, err := claims.Create(ctx, claim, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// The claims wait for their first consumer: the PV binder
			// leaves them pending.
			eventually(t, time.Minute, "the claims are pending", func() (bool, error) {
				list, err := claims.List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				for _, c := range list.Items {
					if c.Status.Phase != v1.ClaimPending {
						return false, fmt.Errorf("claim %s is %s before any pod uses it", c.Name, c.Status.Phase)
					}
				}
				return len(list.Items) == 4, nil
			})
			for i := range 4 {
				p := pod(fmt.Sprintf("db-%d", i), scheduler, "100m", "64Mi")
				p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
					PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("data-%d", i)},
				}}}
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Every change of the pods, to see what happened before each
			// was bound.
			w, err := pods.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			// nominatedFirst: the pods seen nominated before bound;
			// claimAtBinding: each bound pod's claim when its binding was
			// seen, "bound" when bound as VolumeBinding's PreBind waits
			// for it: a volume named and the PV controller's
			// bind-completed annotation. The claim's status phase comes
			// in a later write of the PV controller, which a binding may
			// precede.
			// The watch may deliver a binding after a List shows it:
			// seenBindings counts the bindings it delivered so far.
			nominatedFirst, claimAtBinding := map[string]bool{}, map[string]string{}
			var seenBindings atomic.Int32
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				for e := range w.ResultChan() {
					p, ok := e.Object.(*v1.Pod)
					switch {
					case !ok:
					case p.Spec.NodeName == "" && p.Status.NominatedNodeName != "":
						nominatedFirst[p.Name] = true
					case p.Spec.NodeName != "" && claimAtBinding[p.Name] == "":
						c, err := claims.Get(ctx, p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
						switch {
						case err != nil:
							claimAtBinding[p.Name] = err.Error()
						case c.Spec.VolumeName != "" && metav1.HasAnnotation(c.ObjectMeta, "pv.kubernetes.io/bind-completed"):
							claimAtBinding[p.Name] = "bound"
						default:
							claimAtBinding[p.Name] = fmt.Sprintf("phase %q, volume %q, annotations %v", c.Status.Phase, c.Spec.VolumeName, c.Annotations)
						}
						seenBindings.Add(1)
					}
				}
			}()
			if scheduler == v1.DefaultSchedulerName {
				if err := cp.StartScheduler(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false")
			}

			// Three pods bound, the fourth reported unschedulable.
			var left string
			eventually(t, 2*time.Minute, "three pods are bound and the fourth is reported unschedulable", func() (bool, error) {
				list, err := pods.List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				bound, reported := 0, ""
				for i := range list.Items {
					p := &list.Items[i]
					if p.Spec.NodeName != "" {
						bound++
					} else if c := scheduledCondition(p); c != nil && c.Reason == v1.PodReasonUnschedulable {
						reported, left = c.Reason+": "+c.Message, p.Name
					}
				}
				if bound > 3 {
					return false, fmt.Errorf("%d pods bound with three volumes", bound)
				}
				outcomes[scheduler] = outcome{message: reported}
				return bound == 3 && reported != "", nil
			})

			eventually(t, 30*time.Second, "the watch delivers the three bindings", func() (bool, error) {
				return seenBindings.Load() >= 3, nil
			})
			w.Stop()
			<-watched

			// Each bound pod's claim is bound to a volume of its node, and
			// no volume to two claims.
			holders := map[string]string{}
			nominated := 0
			for i := range 4 {
				name := fmt.Sprintf("db-%d", i)
				if name == left {
					continue
				}
				var claim *v1.PersistentVolumeClaim
				eventually(t, time.Minute, "the claim of "+name+" is bound", func() (bool, error) {
					c, err := claims.Get(ctx, fmt.Sprintf("data-%d", i), metav1.GetOptions{})
					claim = c
					return err == nil && c.Status.Phase == v1.ClaimBound, err
				})
				p, err := pods.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if n := volumes[claim.Spec.VolumeName]; n != p.Spec.NodeName {
					t.Errorf("%s runs on %s, its claim is bound to %s on %q", name, p.Spec.NodeName, claim.Spec.VolumeName, n)
				}
				if other, dup := holders[claim.Spec.VolumeName]; dup {
					t.Errorf("volume %s bound to the claims of %s and %s", claim.Spec.VolumeName, other, name)
				}
				holders[claim.Spec.VolumeName] = name
				pv, err := client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != claim.Name || ref.UID != claim.UID || pv.Status.Phase != v1.VolumeBound {
					t.Errorf("volume %s is %s with claimRef %+v, want bound to %s", pv.Name, pv.Status.Phase, ref, claim.Name)
				}
				if nominatedFirst[name] {
					nominated++
				}
				if at := claimAtBinding[name]; at != "bound" {
					t.Errorf("%s was bound while its claim was not: %s", name, at)
				}
			}
			// The claim of the pod left over is still waiting.
			c, err := claims.Get(ctx, "data-"+left[len("db-"):], metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Status.Phase != v1.ClaimPending || c.Spec.VolumeName != "" {
				t.Errorf("the claim of %s, left without a volume, is %s with volume %q", left, c.Status.Phase, c.Spec.VolumeName)
			}
			o := outcomes[scheduler]
			o.nominations = fmt.Sprintf("%d of the 3 bound pods nominated before they were bound", nominated)
			outcomes[scheduler] = o
			t.Logf("%s: volumes %v; %s; %s: %s", scheduler, holders, o.nominations, left, o.message)
		})
	}
	if a, b := outcomes[v1.DefaultSchedulerName], outcomes[kubeschedName]; a != b {
		t.Errorf("outcomes differ:\n kube-scheduler: %+v\n kubesched:      %+v", a, b)
	}
}
