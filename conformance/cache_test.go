package conformance

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	upstreamcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"

	"github.com/kubesched/kubesched/cache"
)

// TestCacheSnapshotsEqualKubeSchedulersCache feeds kubesched's cache and
// kube-scheduler's own the same random events (nodes joining, changing
// their images and leaving; pods coming and going, some sharing a host
// port on a node) and updates a snapshot of each after every few events.
// Every node must then hold the same image summaries (kube-scheduler's
// cache keeps an image name's first reported size, and counts a node's
// images only when the node changes) and the same used host ports (a
// set: when one of two pods sharing a port leaves, the port is free).
func TestCacheSnapshotsEqualKubeSchedulersCache(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.Background()
	const sequences, events = 60, 150
	compared := 0
	for seed := range uint64(sequences) {
		r := rand.New(rand.NewPCG(seed, 17))
		theirs := upstreamcache.New(ctx, nil, false, false)
		theirSnap := upstreamcache.NewEmptySnapshot()
		ours, err := cache.New()
		if err != nil {
			t.Fatal(err)
		}
		nodes := map[string]*v1.Node{}
		pods := map[string]*v1.Pod{}
		nextPod := 0
		for i := range events {
			var what string
			switch op := r.IntN(10); {
			case op < 3 || len(nodes) == 0:
				name := fmt.Sprintf("n%d", r.IntN(6))
				n := randomImageNode(r, name)
				if old, ok := nodes[name]; ok {
					what = "update node " + name
					theirs.UpdateNode(logger, old, n)
				} else {
					what = "add node " + name
					theirs.AddNode(logger, n)
				}
				if _, err := ours.AddNode(n); err != nil {
					t.Fatal(err)
				}
				nodes[name] = n
			case op < 4:
				name := slices.Sorted(maps.Keys(nodes))[r.IntN(len(nodes))]
				what = "remove node " + name
				if err := theirs.RemoveNode(logger, nodes[name]); err != nil {
					t.Fatal(err)
				}
				if err := ours.RemoveNode(nodes[name]); err != nil {
					t.Fatal(err)
				}
				delete(nodes, name)
			case op < 8:
				name := slices.Sorted(maps.Keys(nodes))[r.IntN(len(nodes))]
				nextPod++
				p := portPod(fmt.Sprintf("p%d", nextPod), name, int32(8000+r.IntN(3)))
				what = "add pod " + p.Name
				if err := theirs.AddPod(logger, p); err != nil {
					t.Fatal(err)
				}
				if err := ours.AddPod(p); err != nil {
					t.Fatal(err)
				}
				pods[p.Name] = p
			default:
				if len(pods) == 0 {
					continue
				}
				name := slices.Sorted(maps.Keys(pods))[r.IntN(len(pods))]
				what = "remove pod " + name
				if err := theirs.RemovePod(logger, pods[name]); err != nil {
					t.Fatal(err)
				}
				if err := ours.RemovePod(pods[name]); err != nil {
					t.Fatal(err)
				}
				delete(pods, name)
			}
			if r.IntN(3) != 0 && i != events-1 {
				continue
			}
			if err := theirs.UpdateSnapshot(logger, theirSnap); err != nil {
				t.Fatal(err)
			}
			snap := ours.Snapshot()
			list, err := theirSnap.NodeInfos().List()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != snap.Len() {
				t.Fatalf("seed %d, after %s: %d nodes, kube-scheduler's snapshot %d", seed, what, snap.Len(), len(list))
			}
			for _, want := range list {
				name := want.Node().Name
				got, ok := snap.Get(name)
				if !ok {
					t.Fatalf("seed %d, after %s: node %s missing", seed, what, name)
				}
				wantImages := map[string]string{}
				for img, st := range want.GetImageStates() {
					wantImages[img] = fmt.Sprintf("%d bytes on %d", st.Size, st.NumNodes)
				}
				gotImages := map[string]string{}
				for img, st := range got.ImageStates() {
					gotImages[img] = fmt.Sprintf("%d bytes on %d", st.Size, st.NumNodes)
				}
				if !maps.Equal(gotImages, wantImages) {
					t.Fatalf("seed %d, after %s: node %s images\n got %v\nwant %v", seed, what, name, gotImages, wantImages)
				}
				wantPorts, gotPorts := map[string]bool{}, map[string]bool{}
				for ip, ports := range want.GetUsedPorts() {
					for pp := range ports {
						wantPorts[fmt.Sprintf("%s/%s/%d", ip, pp.Protocol, pp.Port)] = true
					}
				}
				for ip, ports := range got.UsedPorts() {
					for pp := range ports {
						gotPorts[fmt.Sprintf("%s/%s/%d", ip, pp.Protocol, pp.Port)] = true
					}
				}
				if !maps.Equal(gotPorts, wantPorts) {
					t.Fatalf("seed %d, after %s: node %s host ports %v, kube-scheduler's %v", seed, what, name, gotPorts, wantPorts)
				}
				compared++
			}
		}
	}
	t.Logf("%d node snapshots compared over %d sequences of %d events", compared, sequences, events)
}

// randomImageNode reports a random few of four images, under one or two
// names, at sizes that differ from node to node and update to update.
func randomImageNode(r *rand.Rand, name string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("64"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("500"),
		}},
	}
	for i := range 4 {
		if r.IntN(2) == 0 {
			continue
		}
		names := []string{fmt.Sprintf("registry.example.com/img-%d:1", i)}
		if r.IntN(2) == 0 {
			names = append(names, fmt.Sprintf("registry.example.com/img-%d@sha256:%d", i, i))
		}
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: names, SizeBytes: int64(1+r.IntN(4)) << 20})
	}
	return n
}

// portPod is a pod on node holding host port port, which other pods on
// the node may hold too.
func portPod(name, node string, port int32) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{
			Name: "c", Image: "registry.example.com/img-0:1",
			Ports: []v1.ContainerPort{{ContainerPort: 80, HostPort: port, Protocol: v1.ProtocolTCP}},
		}}},
	}
}
