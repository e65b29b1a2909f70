package framework_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/nodeinfo"
)

// capture is a plugin that records the listers it is given.
type capture struct{ got *fwk.Listers }

func (c *capture) Name() string { return "Capture" }

func (c *capture) Filter(_ context.Context, s *fwk.CycleState, _ *v1.Pod, _ *nodeinfo.NodeInfo) *fwk.Status {
	l := s.Listers()
	*c.got = l
	return nil
}

func TestWithObjectsServesThemToPlugins(t *testing.T) {
	t.Parallel()
	var got fwk.Listers
	meta := func(name string, l map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: l}
	}
	f := mustNew(t, framework.WithPlugin(&capture{got: &got}, 0), framework.WithObjects(
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"team": "a"}}},
		&v1.Service{ObjectMeta: meta("svc", nil)},
		&appsv1.ReplicaSet{ObjectMeta: meta("rs", map[string]string{"app": "web"})},
		&appsv1.ReplicaSet{ObjectMeta: meta("rs2", map[string]string{"app": "db"})},
		&v1.PersistentVolumeClaim{ObjectMeta: meta("claim", nil)},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}},
		&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1", Labels: map[string]string{"disk": "a"}}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}},
		&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va2"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n2"}},
		&resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "maintenance"}},
	))
	if _, err := f.Schedule(context.Background(), testPod, nodes("n1")); err != nil {
		t.Fatal(err)
	}
	if ns, err := got.Namespaces.Get("ns"); err != nil || ns.Labels["team"] != "a" {
		t.Errorf("Namespaces.Get = %v, %v", ns, err)
	}
	if _, err := got.Namespaces.Get("missing"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Namespaces.Get(missing) error = %v", err)
	}
	if svcs, _ := got.Services.List(labels.Everything()); len(svcs) != 1 {
		t.Errorf("Services.List = %d, want 1", len(svcs))
	}
	if rss, _ := got.ReplicaSets.List(labels.SelectorFromSet(labels.Set{"app": "web"})); len(rss) != 1 || rss[0].Name != "rs" {
		t.Errorf("ReplicaSets.List(app=web) = %v", rss)
	}
	if sss, _ := got.StatefulSets.List(labels.Everything()); len(sss) != 0 {
		t.Errorf("StatefulSets.List = %v, want none", sss)
	}
	if claims, _ := got.PersistentVolumeClaims.List(labels.Everything()); len(claims) != 1 || claims[0].Name != "claim" {
		t.Errorf("PersistentVolumeClaims.List = %v", claims)
	}
	if classes, _ := got.StorageClasses.List(labels.Everything()); len(classes) != 1 {
		t.Errorf("StorageClasses.List = %v", classes)
	}
	if pvs, _ := got.PersistentVolumes.List(labels.Everything()); len(pvs) != 0 {
		t.Errorf("PersistentVolumes.List = %v, want none", pvs)
	}
	if vas, _ := got.VolumeAttachments.List(labels.Everything()); len(vas) != 2 {
		t.Errorf("VolumeAttachments.List = %v, want both", vas)
	}
	if vas, _ := got.VolumeAttachments.List(labels.SelectorFromSet(labels.Set{"disk": "a"})); len(vas) != 1 || vas[0].Spec.NodeName != "n1" {
		t.Errorf("VolumeAttachments.List(disk=a) = %v", vas)
	}
	if rules, _ := got.DeviceTaintRules.List(labels.Everything()); len(rules) != 1 || rules[0].Name != "maintenance" {
		t.Errorf("DeviceTaintRules.List = %v", rules)
	}
}

func TestWithObjectsRejectsOtherKinds(t *testing.T) {
	t.Parallel()
	_, err := framework.New(framework.WithObjects(&v1.Pod{}))
	if err == nil || !strings.Contains(err.Error(), "*v1.Pod") {
		t.Fatalf("err = %v, want one naming *v1.Pod", err)
	}
}

func TestCloneKeepsTheOriginalsValues(t *testing.T) {
	t.Parallel()
	key := fwk.NewStateKey[*counter]()
	s := fwk.NewCycleState(nil)
	key.Write(s, &counter{n: 1})
	c := s.Clone()
	v, _ := key.Read(c)
	v.n++
	if orig, _ := key.Read(s); orig.n != 1 {
		t.Errorf("original changed to %d through the clone", orig.n)
	}
}

type counter struct{ n int }

func (c *counter) CloneState() any { return &counter{n: c.n} }

func TestNodesWithPodAffinity(t *testing.T) {
	t.Parallel()
	all := nodes("plain", "affinity", "anti")
	all[1].AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "a"}, Spec: v1.PodSpec{Affinity: &v1.Affinity{
		PodAffinity: &v1.PodAffinity{}}}})
	all[2].AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "b"}, Spec: v1.PodSpec{Affinity: &v1.Affinity{
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: "zone"}}}}}})
	names := func(nis []*nodeinfo.NodeInfo) string {
		var out []string
		for _, ni := range nis {
			out = append(out, ni.Name())
		}
		return strings.Join(out, ",")
	}
	state := fwk.NewCycleState(all)
	other := append([]*nodeinfo.NodeInfo(nil), all[2], all[1])
	for _, tc := range []struct {
		name      string
		state     *fwk.CycleState
		nodes     []*nodeinfo.NodeInfo
		any, anti string
	}{
		{"the cycle's own nodes", state, all, "affinity,anti", "anti"},
		{"another node list is filtered as given", state, other, "anti,affinity", "anti"},
		{"without a state the list is filtered as given", nil, all, "affinity,anti", "anti"},
	} {
		if got := names(cycle.Of(tc.state).NodesWithPodAffinity(tc.nodes)); got != tc.any {
			t.Errorf("%s: NodesWithPodAffinity = %s, want %s", tc.name, got, tc.any)
		}
		if got := names(cycle.Of(tc.state).NodesWithRequiredPodAntiAffinity(tc.nodes)); got != tc.anti {
			t.Errorf("%s: NodesWithRequiredPodAntiAffinity = %s, want %s", tc.name, got, tc.anti)
		}
	}
}
