package main

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The storage of the volume tests: class "local" binds pre-made volumes
// (no provisioner), class "csi" provisions, both when a pod first uses
// a claim.
const (
	localClass = "local"
	csiClass   = "csi"
)

func storageClass(name, provisioner string) *storagev1.StorageClass {
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &wait}
}

func storageClasses() []runtime.Object {
	return []runtime.Object{storageClass(localClass, "kubernetes.io/no-provisioner"), storageClass(csiClass, "csi.example.com")}
}

// testClaim is an unbound claim of class for 1Gi.
func testClaim(name, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			StorageClassName: new(class),
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// localVolume is an available 1Gi local volume of class "local" on node.
func localVolume(name, node string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:       localClass,
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

// usingClaim is a kubesched pod mounting the claim.
func usingClaim(name, claim string) *v1.Pod {
	p := testPod(name, "100m", "kubesched")
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	return p
}

var (
	volumesResource = v1.SchemeGroupVersion.WithResource("persistentvolumes")
	claimsResource  = v1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
)

// newVolumeCluster is newFakeCluster whose PersistentVolumes and claims
// are versioned as the API server versions them: what was assumed about
// them yields to what the informers then see.
func newVolumeCluster(objs ...runtime.Object) *fake.Clientset {
	return versioned(newFakeCluster(objs...), volumesResource, claimsResource)
}

// bindClaim does the PV controller's part of binding claim to the
// volume: the claim names it and is marked bound.
func bindClaim(ctx context.Context, t *testing.T, client *fake.Clientset, claim, volumeName string) {
	t.Helper()
	c, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.VolumeName = volumeName
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	c.Status.Phase = v1.ClaimBound
	if _, err := client.CoreV1().PersistentVolumeClaims("default").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// provision does a provisioner's part for the claim: a volume on node,
// bound to it.
func provision(ctx context.Context, t *testing.T, client *fake.Clientset, claim, node string) {
	t.Helper()
	pv := localVolume("pvc-"+claim, node)
	pv.Spec.StorageClassName = csiClass
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: claim, UID: types.UID("uid-" + claim)}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClaim(ctx, t, client, claim, pv.Name)
}

// firstAction returns the index of client's first action that is verb on
// resource (no subresource unless named, as "pods/binding"), -1 if none.
func firstAction(client *fake.Clientset, verb, resource string, match func(clienttesting.Action) bool) int {
	res, sub, _ := strings.Cut(resource, "/")
	for i, a := range client.Actions() {
		if a.Matches(verb, res) && a.GetSubresource() == sub && (match == nil || match(a)) {
			return i
		}
	}
	return -1
}

// nominating matches a status patch setting nominatedNodeName to node.
func nominating(node string) func(clienttesting.Action) bool {
	return func(a clienttesting.Action) bool {
		return strings.Contains(string(a.(clienttesting.PatchAction).GetPatch()), `"nominatedNodeName":"`+node+`"`)
	}
}

// assumedVolumes counts what the controller assumes about volumes and
// claims.
func assumedVolumes(ctrl *Controller) int {
	return ctrl.volumes.pvs.assumedCount() + ctrl.volumes.pvcs.assumedCount()
}

func TestControllerBindsVolumesBeforeThePod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		objs []runtime.Object
		// written is what the controller writes for the pod's volume:
		// persistentvolumes (a claimRef) or persistentvolumeclaims (a
		// selected node).
		written string
		// complete does the PV controller's or the provisioner's part.
		complete func(ctx context.Context, t *testing.T, client *fake.Clientset)
		wantNode string
	}{
		{
			name:    "a pod whose claim waits for its first consumer gets the local volume that fits, and is bound once the PV controller binds the claim",
			objs:    []runtime.Object{testNode("a", "4"), testNode("b", "4"), localVolume("disk-b", "b"), testClaim("data", localClass)},
			written: "persistentvolumes",
			complete: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				bindClaim(ctx, t, client, "data", "disk-b")
			},
			wantNode: "b",
		},
		{
			// kubesched's filter.Volumes leaves such a volume out: there
			// is nothing to assume about it.
			name: "a pod whose claim a volume names already (the PV controller's binding half done) has that volume written as it is, and is bound once the claim is",
			objs: []runtime.Object{testNode("a", "4"), testNode("b", "4"), testClaim("data", localClass), func() runtime.Object {
				pv := localVolume("disk-b", "b")
				pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: "data", UID: "uid-data"}
				pv.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
				return pv
			}()},
			written: "persistentvolumes",
			complete: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				bindClaim(ctx, t, client, "data", "disk-b")
			},
			wantNode: "b",
		},
		{
			name:    "a pod whose claim's class provisions gets the claim annotated with its node, and is bound once the provisioner binds a new volume there",
			objs:    []runtime.Object{testNode("a", "4"), testClaim("data", csiClass)},
			written: "persistentvolumeclaims",
			complete: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				provision(ctx, t, client, "data", "a")
			},
			wantNode: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs := append(append(storageClasses(), tt.objs...), usingClaim("db", "data"))
			client := newVolumeCluster(objs...)
			ctrl, err := New(client, Config{SchedulerName: "kubesched"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := startController(t, ctrl)

			eventually(t, "the controller writes the "+tt.written, func() bool { return firstAction(client, "update", tt.written, nil) >= 0 })
			switch a := client.Actions()[firstAction(client, "update", tt.written, nil)].(clienttesting.UpdateAction).GetObject().(type) {
			case *v1.PersistentVolume:
				if ref := a.Spec.ClaimRef; a.Name != "disk-b" || ref == nil || ref.Name != "data" || ref.UID != "uid-data" {
					t.Errorf("volume %s written with claimRef %+v, want disk-b naming claim data", a.Name, ref)
				}
			case *v1.PersistentVolumeClaim:
				if got := a.Annotations["volume.kubernetes.io/selected-node"]; got != tt.wantNode {
					t.Errorf("claim %s written with selected node %q, want %q", a.Name, got, tt.wantNode)
				}
			}
			// The claim is not bound yet: neither is the pod.
			if node := getPod(t, client, "db").Spec.NodeName; node != "" {
				t.Fatalf("db was bound to %s before its claim", node)
			}
			tt.complete(ctx, t, client)
			eventually(t, "db is bound", func() bool { return getPod(t, client, "db").Spec.NodeName != "" })

			db := getPod(t, client, "db")
			if db.Spec.NodeName != tt.wantNode {
				t.Errorf("db went to %s, want %s", db.Spec.NodeName, tt.wantNode)
			}
			if db.Status.NominatedNodeName != tt.wantNode {
				t.Errorf("db is nominated to %q, want %q", db.Status.NominatedNodeName, tt.wantNode)
			}
			// As kube-scheduler: nominated (NominatedNodeNameForExpectation)
			// before PreBind writes, bound after.
			nominated := firstAction(client, "patch", "pods/status", nominating(tt.wantNode))
			written := firstAction(client, "update", tt.written, nil)
			bound := firstAction(client, "create", "pods/binding", nil)
			if !(0 <= nominated && nominated < written && written < bound) {
				t.Errorf("actions: nomination %d, %s update %d, binding %d; want them in this order", nominated, tt.written, written, bound)
			}
			eventually(t, "nothing is assumed once the informers have the writes", func() bool { return assumedVolumes(ctrl) == 0 })
		})
	}
}

// TestControllerGivesAVolumeToOneClaimAtATime holds the first write of
// the only volume back from the informers, as a slow watch would: the
// volume is then taken only in what the controller assumed, and the
// second pod must not get it. The first pod's binding must wait for the
// informers to see the write before it judges the volume.
func TestControllerGivesAVolumeToOneClaimAtATime(t *testing.T) {
	t.Parallel()
	objs := append(storageClasses(), testNode("only", "4"), localVolume("disk", "only"),
		testClaim("first", localClass), testClaim("second", localClass), usingClaim("a", "first"), usingClaim("b", "second"))
	client := newVolumeCluster(objs...)
	var writes atomic.Int32
	var held atomic.Pointer[v1.PersistentVolume]
	client.PrependReactor("update", "persistentvolumes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pv := action.(clienttesting.UpdateAction).GetObject().(*v1.PersistentVolume).DeepCopy()
		pv.ResourceVersion = "1000"
		writes.Add(1)
		held.CompareAndSwap(nil, pv)
		return true, pv, nil // accepted, but not stored: no informer sees it
	})
	ctrl, err := New(client, Config{SchedulerName: "kubesched", QueueOptions: fakeClockQueue()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)

	eventually(t, "the volume is written for one of the claims", func() bool { return held.Load() != nil })
	pv := held.Load()
	holder, other := "a", "b"
	if pv.Spec.ClaimRef.Name == "second" {
		holder, other = "b", "a"
	}
	const want = "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind."
	eventually(t, other+" is reported unschedulable", func() bool {
		c := scheduledCondition(getPod(t, client, other))
		return c != nil && c.Reason == v1.PodReasonUnschedulable && strings.HasPrefix(c.Message, want)
	})
	// Until the informers see the write, the binding waits for them
	// rather than judge the volume they still show.
	time.Sleep(2*bindPollInterval + 500*time.Millisecond)
	if c := scheduledCondition(getPod(t, client, holder)); c != nil {
		t.Fatalf("%s was reported while its write was on its way: %s", holder, c.Message)
	}
	// The write reaches the informers, the PV controller binds the claim.
	if err := client.Tracker().Update(volumesResource, pv, ""); err != nil {
		t.Fatal(err)
	}
	bindClaim(ctx, t, client, pv.Spec.ClaimRef.Name, "disk")
	eventually(t, holder+" is bound", func() bool { return getPod(t, client, holder).Spec.NodeName == "only" })
	if n := writes.Load(); n != 1 {
		t.Errorf("the volume was written %d times, want once", n)
	}
	if node := getPod(t, client, other).Spec.NodeName; node != "" {
		t.Errorf("%s was bound to %s without a volume", other, node)
	}
}

// ebsZone is the topology key of the AWS EBS CSI driver, to which the
// in-tree plugin's volumes migrate.
const ebsZone = "topology.ebs.csi.aws.com/zone"

// relabel sets node only's label key to value, or removes it for "".
func relabel(key, value string) func(ctx context.Context, t *testing.T, client *fake.Clientset) {
	return func(ctx context.Context, t *testing.T, client *fake.Clientset) {
		n, err := client.CoreV1().Nodes().Get(ctx, "only", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if value == "" {
			delete(n.Labels, key)
		} else {
			n.Labels[key] = value
		}
		if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestControllerUndoesAVolumeBindingThatFails(t *testing.T) {
	t.Parallel()
	refused := errors.New("the API server says no")
	tests := []struct {
		name  string
		claim *v1.PersistentVolumeClaim
		// cluster is node only, volume disk and what else the case
		// needs; a local volume on a plain node when nil.
		cluster []runtime.Object
		// config is the KubeSchedulerConfiguration's body; "" for the
		// default profile.
		config string
		// react refuses what the API server refuses.
		react func(client *fake.Clientset)
		// during runs once the controller has written the volume or the
		// claim; nil when nothing is written.
		during func(ctx context.Context, t *testing.T, client *fake.Clientset)
		// want is the pod's PodScheduled message; "" when the pod is gone.
		want string
	}{
		{
			name:  "a claim nobody binds within bindTimeoutSeconds fails the binding once the time is up",
			claim: testClaim("data", localClass),
			config: "profiles:\n- schedulerName: kubesched\n  pluginConfig:\n  - name: VolumeBinding\n" +
				"    args: {bindTimeoutSeconds: 1}\n",
			during: func(context.Context, *testing.T, *fake.Clientset) {},
			want:   `running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded`,
		},
		{
			name:  "a volume write the API server refuses fails the binding, and the volume is free again",
			claim: testClaim("data", localClass),
			react: func(client *fake.Clientset) {
				client.PrependReactor("update", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, refused
				})
			},
			want: `running PreBind plugin "VolumeBinding": the API server says no`,
		},
		{
			name:  "a volume whose claimRef the PV controller clears fails the binding",
			claim: testClaim("data", localClass),
			during: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				pv, err := client.CoreV1().PersistentVolumes().Get(ctx, "disk", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pv.Spec.ClaimRef = nil
				if _, err := client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			want: `running PreBind plugin "VolumeBinding": binding volumes: ClaimRef got reset for pv "disk"`,
		},
		{
			name:  "a provisioner that gives up, taking the selected node off the claim, fails the binding",
			claim: testClaim("data", csiClass),
			during: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				c, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				delete(c.Annotations, "volume.kubernetes.io/selected-node")
				if _, err := client.CoreV1().PersistentVolumeClaims("default").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			want: `running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "data"`,
		},
		{
			name:   "a node relabelled so that its volume's node affinity no longer matches fails the binding",
			claim:  testClaim("data", localClass),
			during: relabel(v1.LabelHostname, "elsewhere"),
			want:   `running PreBind plugin "VolumeBinding": binding volumes: pv "disk" node affinity doesn't match node "only": no matching NodeSelectorTerms`,
		},
		{
			// The in-tree volume has no node affinity, only a zone
			// label; the CSI driver's volume has it, in the driver's
			// topology key.
			name:  "an in-tree EBS volume whose node's CSINode says the CSI driver took it over is judged by the driver's topology, which the node then loses",
			claim: testClaim("data", localClass),
			cluster: func() []runtime.Object {
				n := testNode("only", "4")
				n.Labels[v1.LabelTopologyZone] = "us-east-1a"
				n.Labels[ebsZone] = "us-east-1a"
				pv := localVolume("disk", "only")
				pv.Labels = map[string]string{v1.LabelTopologyZone: "us-east-1a"}
				pv.Spec.NodeAffinity = nil
				pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
				csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "only", Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}}}
				return []runtime.Object{n, pv, csiNode}
			}(),
			during: relabel(ebsZone, ""),
			want:   `running PreBind plugin "VolumeBinding": binding volumes: pv "disk" node affinity doesn't match node "only": no matching NodeSelectorTerms`,
		},
		{
			name:  "a pod deleted while its volume is being bound is not bound, and does not come back",
			claim: testClaim("data", localClass),
			during: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				if err := client.CoreV1().Pods("default").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cluster := tt.cluster
			if cluster == nil {
				cluster = []runtime.Object{testNode("only", "4"), localVolume("disk", "only")}
			}
			objs := append(append(storageClasses(), cluster...), tt.claim, usingClaim("db", "data"))
			client := newVolumeCluster(objs...)
			if tt.react != nil {
				tt.react(client)
			}
			cfg := Config{SchedulerName: "kubesched"}
			if tt.config != "" {
				cfg = Config{SchedulerConfig: loadTestConfig(t, tt.config)}
			}
			// A fake clock: the pod stays in the backoff queue.
			cfg.QueueOptions = fakeClockQueue()
			ctrl, err := New(client, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := startController(t, ctrl)

			if tt.during != nil {
				eventually(t, "the controller writes the volume or the claim", func() bool {
					return firstAction(client, "update", "persistentvolumes", nil) >= 0 || firstAction(client, "update", "persistentvolumeclaims", nil) >= 0
				})
				tt.during(ctx, t, client)
			}
			if tt.want != "" {
				eventually(t, "db is reported", func() bool {
					c := scheduledCondition(getPod(t, client, "db"))
					return c != nil && c.Status == v1.ConditionFalse
				})
				db := getPod(t, client, "db")
				if c := scheduledCondition(db); c.Reason != v1.PodReasonSchedulerError || c.Message != tt.want {
					t.Errorf("db is reported %s: %q, want %s: %q", c.Reason, c.Message, v1.PodReasonSchedulerError, tt.want)
				}
				if db.Spec.NodeName != "" {
					t.Errorf("db was bound to %s", db.Spec.NodeName)
				}
				if db.Status.NominatedNodeName != "" {
					t.Errorf("db is still nominated to %s", db.Status.NominatedNodeName)
				}
				eventually(t, "db is back in the queue, waiting out its backoff", func() bool { return ctrl.pending()["backoff"] == 1 })
			} else {
				eventually(t, "the controller has given up on db", func() bool {
					return firstAction(client, "patch", "pods/status", func(a clienttesting.Action) bool {
						return strings.Contains(string(a.(clienttesting.PatchAction).GetPatch()), "pod does not exist any more")
					}) >= 0
				})
				for sub, n := range ctrl.pending() {
					if n != 0 {
						t.Errorf("%d pods in the %s queue, want none: the deleted pod came back", n, sub)
					}
				}
			}
			eventually(t, "the cache holds no pod", func() bool { return ctrl.cache.PodCount() == 0 })
			eventually(t, "nothing is assumed", func() bool { return assumedVolumes(ctrl) == 0 })
			// The next cycle sees the volume as the API server has it.
			vols, err := ctrl.volumes.pvs.List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			api, err := client.CoreV1().PersistentVolumes().Get(ctx, "disk", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(vols) != 1 || (vols[0].Spec.ClaimRef == nil) != (api.Spec.ClaimRef == nil) {
				t.Errorf("the listers show %+v, the API server %+v", vols, api)
			}
		})
	}
}

// TestControllerRetriesAPodWhenStorageChanges: a pod no volume fits
// waits in the unschedulable pool until a storage event that may help
// it arrives, which the controller's informers must pass on to the
// queue.
func TestControllerRetriesAPodWhenStorageChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		objs []runtime.Object
		// change is the event that helps.
		change func(ctx context.Context, t *testing.T, client *fake.Clientset)
	}{
		{
			name: "a pod waiting for a volume is bound once one is created",
			objs: []runtime.Object{testClaim("data", localClass)},
			change: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				if _, err := client.CoreV1().PersistentVolumes().Create(ctx, localVolume("disk", "only"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a pod waiting for a claim is bound once the claim is created",
			objs: []runtime.Object{localVolume("disk", "only")},
			change: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				if _, err := client.CoreV1().PersistentVolumeClaims("default").Create(ctx, testClaim("data", localClass), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a pod whose claim's class is missing is bound once the class is created",
			objs: []runtime.Object{testClaim("data", "late"), func() runtime.Object {
				pv := localVolume("disk", "only")
				pv.Spec.StorageClassName = "late"
				return pv
			}()},
			change: func(ctx context.Context, t *testing.T, client *fake.Clientset) {
				if _, err := client.StorageV1().StorageClasses().Create(ctx, storageClass("late", "kubernetes.io/no-provisioner"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs := append(append(storageClasses(), testNode("only", "4"), usingClaim("db", "data")), tt.objs...)
			client := newVolumeCluster(objs...)
			// The real clock: the pod is retried after a second's backoff.
			ctrl, err := New(client, Config{SchedulerName: "kubesched"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := startController(t, ctrl)
			eventually(t, "db waits in the unschedulable pool", func() bool {
				c := scheduledCondition(getPod(t, client, "db"))
				return c != nil && c.Reason == v1.PodReasonUnschedulable && ctrl.pending()["unschedulable"] == 1
			})
			tt.change(ctx, t, client)
			eventually(t, "the volume is written for db", func() bool { return firstAction(client, "update", "persistentvolumes", nil) >= 0 })
			bindClaim(ctx, t, client, "data", "disk")
			eventually(t, "db is bound", func() bool { return getPod(t, client, "db").Spec.NodeName == "only" })
		})
	}
}

// TestControllerWritesClaimsAndVolumesSideBySide: a pod with a
// ResourceClaim and a claim waiting for its volume has both written at
// once, as kube-scheduler v1.37.2 runs DynamicResources' and
// VolumeBinding's PreBind in parallel; when the volume fails, the
// ResourceClaim written is unreserved.
func TestControllerWritesClaimsAndVolumesSideBySide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// timeout is VolumeBinding's bindTimeoutSeconds.
		timeout string
		// bindVolume has the PV controller bind the claim.
		bindVolume bool
		want       string
	}{
		{
			name:       "the ResourceClaim is written while the volume is being bound, and the pod is bound once both are",
			timeout:    "600",
			bindVolume: true,
		},
		{
			name:    "a volume binding that times out fails the pod and unreserves the ResourceClaim written meanwhile",
			timeout: "1",
			want:    `running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := claiming("db", "gpu-claim")
			pod.Spec.Volumes = usingClaim("db", "data").Spec.Volumes
			objs := append(append(draObjects("gpu-claim"), storageClasses()...), testNode("small", "4"), localVolume("disk", "small"), testClaim("data", localClass), pod)
			client := newVolumeCluster(objs...)
			cfg := Config{SchedulerConfig: loadTestConfig(t, "profiles:\n- schedulerName: kubesched\n  pluginConfig:\n  - name: VolumeBinding\n"+
				"    args: {bindTimeoutSeconds: "+tt.timeout+"}\n"), QueueOptions: fakeClockQueue()}
			ctrl, err := New(client, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := startController(t, ctrl)
			reserved := func() bool {
				c, err := client.ResourceV1().ResourceClaims("default").Get(ctx, "gpu-claim", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return len(c.Status.ReservedFor) == 1 && c.Status.ReservedFor[0].Name == "db"
			}
			eventually(t, "the ResourceClaim is reserved for db and the volume written", func() bool {
				return reserved() && firstAction(client, "update", "persistentvolumes", nil) >= 0
			})
			if !tt.bindVolume {
				eventually(t, "db is reported", func() bool {
					c := scheduledCondition(getPod(t, client, "db"))
					return c != nil && c.Status == v1.ConditionFalse
				})
				if c := scheduledCondition(getPod(t, client, "db")); c.Message != tt.want {
					t.Errorf("db is reported %q, want %q", c.Message, tt.want)
				}
				eventually(t, "the ResourceClaim is no longer reserved for db", func() bool { return !reserved() })
				return
			}
			bindClaim(ctx, t, client, "data", "disk")
			eventually(t, "db is bound", func() bool { return getPod(t, client, "db").Spec.NodeName == "small" })
			if !reserved() {
				t.Error("the ResourceClaim is not reserved for db")
			}
		})
	}
}
