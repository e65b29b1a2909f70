package score_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

const mib = 1024 * 1024

// Scores below are worked out by hand from
//
//	sum   = Σ size × numNodes/totalNodes over the pod's images on the node
//	score = 100 × (clamp(sum, 23 MiB, 1000 MiB × containers) − 23 MiB) / (1000 MiB × containers − 23 MiB)
//
// with integer division; for one container the divisor is 977 MiB.

// podWithImages is a pod with one container per image.
func podWithImages(images ...string) *v1.Pod {
	pod := &v1.Pod{}
	for i, img := range images {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", i), Image: img})
	}
	return pod
}

// withInitImage adds an init container running img.
func withInitImage(pod *v1.Pod, img string) *v1.Pod {
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "init", Image: img})
	return pod
}

// withImageVolume adds an image volume of ref.
func withImageVolume(pod *v1.Pod, ref string) *v1.Pod {
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{
		Name:         "vol",
		VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: ref}},
	})
	return pod
}

// img is an image present on a node: its size and on how many nodes it is.
type img struct {
	size     int64
	numNodes int
}

// nodeWithImages is a node holding the named images, with their spread set
// as a cluster snapshot would.
func nodeWithImages(images map[string]img) *nodeinfo.NodeInfo {
	ni := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}})
	for name, im := range images {
		ni.ImageStates()[name] = &nodeinfo.ImageStateSummary{Size: im.size, NumNodes: im.numNodes}
	}
	return ni
}

func TestImageLocalityScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		pod        *v1.Pod
		images     map[string]img
		totalNodes int
		v136       bool // image volumes not counted in the ceiling
		want       int64
	}{
		{
			name:       "an image the node lacks scores 0",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"other:v1": {300 * mib, 1}},
			totalNodes: 1,
			want:       0,
		},
		{
			// 100 × (300−23) / 977 = 27700/977 = 28.35
			name:       "a 300 MiB image on the only node scores 28",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}},
			totalNodes: 1,
			want:       28,
		},
		{
			// 20 MiB < 23 MiB: clamped up to the floor.
			name:       "an image under 23 MiB scores 0",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {20 * mib, 1}},
			totalNodes: 1,
			want:       0,
		},
		{
			// exactly 23 MiB: 100 × 0 / 977.
			name:       "an image of exactly 23 MiB scores 0",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {23 * mib, 1}},
			totalNodes: 1,
			want:       0,
		},
		{
			// 2000 MiB clamped to 1000 MiB: 100 × 977/977.
			name:       "an image over 1000 MiB for one container scores 100",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {2000 * mib, 1}},
			totalNodes: 1,
			want:       100,
		},
		{
			// 300 × 1/4 = 75 MiB: 100 × 52/977 = 5.32
			name:       "an image on one node of four counts a quarter of its size",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}},
			totalNodes: 4,
			want:       5,
		},
		{
			// 300 × 2/4 = 150 MiB: 100 × 127/977 = 12.99
			name:       "an image on two nodes of four counts half its size",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 2}},
			totalNodes: 4,
			want:       12,
		},
		{
			// 238683863 × (3/11 in float64) = 65095598.99… truncated to
			// 65095598, one byte under the 65095599 integer arithmetic gives:
			// 100 × (65095598 − 24117248) / 1024458752 = 3.99998, not 4.
			name:       "spread is scaled in floating point as kube-scheduler does",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {238683863, 3}},
			totalNodes: 11,
			want:       3,
		},
		{
			// 250 + 750 = 1000 MiB of a 2000 MiB ceiling: 100 × 977/1977 = 49.42
			name:       "two containers' images add up against a doubled ceiling",
			pod:        podWithImages("a:v1", "b:v1"),
			images:     map[string]img{"a:v1": {250 * mib, 1}, "b:v1": {750 * mib, 1}},
			totalNodes: 1,
			want:       49,
		},
		{
			// 2 × 300 = 600 MiB of 2000: 100 × 577/1977 = 29.18
			name:       "an image used by two containers counts twice",
			pod:        podWithImages("app:v1", "app:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}},
			totalNodes: 1,
			want:       29,
		},
		{
			// 300 + 300 = 600 MiB, init container raises the ceiling to 2000:
			// 100 × 577/1977 = 29.18
			name:       "init containers' images count and raise the ceiling",
			pod:        withInitImage(podWithImages("app:v1"), "setup:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}, "setup:v1": {300 * mib, 1}},
			totalNodes: 1,
			want:       29,
		},
		{
			// 300 + 300 = 600 MiB; the ceiling stays 1000: 100 × 577/977 = 59.06
			name:       "image volumes count but do not raise the ceiling before v1.37",
			pod:        withImageVolume(podWithImages("app:v1"), "data:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}, "data:v1": {300 * mib, 1}},
			totalNodes: 1,
			v136:       true,
			want:       59,
		},
		{
			// 300 + 300 = 600 MiB; the ceiling 2000: 100 × 577/1977 = 29.19
			name:       "image volumes count and raise the ceiling from v1.37",
			pod:        withImageVolume(podWithImages("app:v1"), "data:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}, "data:v1": {300 * mib, 1}},
			totalNodes: 1,
			want:       29,
		},
		{
			name:       "an untagged image is looked up as :latest",
			pod:        podWithImages("nginx"),
			images:     map[string]img{"nginx:latest": {300 * mib, 1}},
			totalNodes: 1,
			want:       28,
		},
		{
			name:       "an untagged image does not match a node's untagged name",
			pod:        podWithImages("nginx"),
			images:     map[string]img{"nginx": {300 * mib, 1}},
			totalNodes: 1,
			want:       0,
		},
		{
			name:       "a registry port is not a tag",
			pod:        podWithImages("registry.local:5000/team/app"),
			images:     map[string]img{"registry.local:5000/team/app:latest": {300 * mib, 1}},
			totalNodes: 1,
			want:       28,
		},
		{
			name:       "a tagged image behind a registry port is kept as is",
			pod:        podWithImages("registry.local:5000/team/app:v2"),
			images:     map[string]img{"registry.local:5000/team/app:v2": {300 * mib, 1}},
			totalNodes: 1,
			want:       28,
		},
		{
			name:       "a digest reference is kept as is",
			pod:        podWithImages("app@sha256:0123abcd"),
			images:     map[string]img{"app@sha256:0123abcd": {300 * mib, 1}},
			totalNodes: 1,
			want:       28,
		},
		{
			// The ceiling counts the volume: 100 × 277/1977.
			name:       "an untagged image volume is looked up as :latest",
			pod:        withImageVolume(podWithImages("app:v1"), "data"),
			images:     map[string]img{"data:latest": {300 * mib, 1}},
			totalNodes: 1,
			want:       14,
		},
		{
			// The floor applies first, and the ceiling (0) only above it.
			name:       "a pod without containers scores 0 when its volume images are under the floor",
			pod:        withImageVolume(&v1.Pod{}, "data:v1"),
			images:     map[string]img{"data:v1": {10 * mib, 1}},
			totalNodes: 1,
			want:       0,
		},
		{
			// sum clamped to the ceiling 0: 100 × (0−23)/(0−23).
			name:       "a pod without containers scores 100 when its volume images reach the floor before v1.37",
			pod:        withImageVolume(&v1.Pod{}, "data:v1"),
			images:     map[string]img{"data:v1": {300 * mib, 1}},
			totalNodes: 1,
			v136:       true,
			want:       100,
		},
		{
			// The volume's image raises the ceiling to 1000: 100 × 277/977.
			name:       "a pod without containers scores its volume images against their own ceiling from v1.37",
			pod:        withImageVolume(&v1.Pod{}, "data:v1"),
			images:     map[string]img{"data:v1": {300 * mib, 1}},
			totalNodes: 1,
			want:       28,
		},
		{
			name:       "a cluster size below 1 counts as 1",
			pod:        podWithImages("app:v1"),
			images:     map[string]img{"app:v1": {300 * mib, 1}},
			totalNodes: 0,
			want:       28,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := score.ImageLocalityScore(tc.pod, nodeWithImages(tc.images), tc.totalNodes, !tc.v136); got != tc.want {
				t.Errorf("ImageLocalityScore = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestImageLocalityScoreOfNilNodeIsZero(t *testing.T) {
	t.Parallel()
	pod := podWithImages("app:v1")
	for _, ni := range []*nodeinfo.NodeInfo{nil, nodeinfo.New(nil)} {
		if got := score.ImageLocalityScore(pod, ni, 1, true); got != 0 {
			t.Errorf("ImageLocalityScore(%v) = %d, want 0", ni, got)
		}
	}
}

// TestImageLocality checks how the plugin counts the cluster: all the
// cycle's nodes, not only the feasible ones PreScore is given.
func TestImageLocality(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pod := podWithImages("app:v1")
	// The image is on node-0 only; four nodes in all.
	var nodes []*v1.Node
	for i := range 4 {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("node-", i)}}
		if i == 0 {
			n.Status.Images = []v1.ContainerImage{{Names: []string{"app:v1"}, SizeBytes: 300 * mib}}
		}
		nodes = append(nodes, n)
	}
	all := nodeinfo.Build(nodes, nil)
	holder := all[0]

	t.Run("PreScore records the count of all nodes even when one is feasible", func(t *testing.T) {
		t.Parallel()
		state := fwk.NewCycleState(all)
		if s := (&score.ImageLocality{}).PreScore(ctx, state, pod, all[:1]); s != nil {
			t.Fatalf("PreScore = %v, want nil", s)
		}
		// 300 × 1/4 = 75 MiB: 100 × 52/977 = 5.32
		got, s := (&score.ImageLocality{}).Score(ctx, state, pod, holder)
		if s != nil || got != 5 {
			t.Errorf("Score = %d, %v; want 5, nil", got, s)
		}
	})
	t.Run("Score without PreScore counts the state's nodes", func(t *testing.T) {
		t.Parallel()
		got, s := (&score.ImageLocality{}).Score(ctx, fwk.NewCycleState(all), pod, holder)
		if s != nil || got != 5 {
			t.Errorf("Score = %d, %v; want 5, nil", got, s)
		}
	})
	t.Run("Score with a nil state takes the node as the whole cluster", func(t *testing.T) {
		t.Parallel()
		// 300 × 1/1: 100 × 277/977 = 28.35
		got, s := (&score.ImageLocality{}).Score(ctx, nil, pod, nodeinfo.New(nodes[0]))
		if s != nil || got != 28 {
			t.Errorf("Score = %d, %v; want 28, nil", got, s)
		}
	})
	t.Run("a node without the image scores 0", func(t *testing.T) {
		t.Parallel()
		got, s := (&score.ImageLocality{}).Score(ctx, fwk.NewCycleState(all), pod, all[1])
		if s != nil || got != 0 {
			t.Errorf("Score = %d, %v; want 0, nil", got, s)
		}
	})
	t.Run("PreScore with a nil state does nothing", func(t *testing.T) {
		t.Parallel()
		if s := (&score.ImageLocality{}).PreScore(ctx, nil, pod, all); s != nil {
			t.Errorf("PreScore = %v, want nil", s)
		}
	})
	for what, ni := range map[string]*nodeinfo.NodeInfo{"nil NodeInfo": nil, "NodeInfo without node": nodeinfo.New(nil)} {
		t.Run("Score given a "+what+" returns Error", func(t *testing.T) {
			t.Parallel()
			if _, s := (&score.ImageLocality{}).Score(ctx, nil, pod, ni); s.Code() != fwk.Error {
				t.Errorf("Score = %v, want Error", s)
			}
		})
	}
}

func BenchmarkImageLocality(b *testing.B) {
	pl := &score.ImageLocality{}
	ctx := context.Background()
	for _, containers := range []int{1, 10} {
		for _, present := range []bool{true, false} {
			var images []string
			states := map[string]img{}
			for i := range containers {
				name := fmt.Sprintf("registry.local/app-%d", i)
				images = append(images, name)
				if present {
					states[name+":latest"] = img{400 * mib, 1}
				}
			}
			pod := podWithImages(images...)
			node := nodeWithImages(states)
			for i := range 50 { // a node holds many images the pod does not use
				node.ImageStates()[fmt.Sprint("other-", i, ":v1")] = &nodeinfo.ImageStateSummary{Size: mib, NumNodes: 1}
			}
			want := int64(0)
			if present { // 400 MiB per container; 38 for one, 39 for ten
				n := int64(containers)
				want = 100 * (n*400*mib - 23*mib) / (n*1000*mib - 23*mib)
			}
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node})
			b.Run(fmt.Sprintf("%dcontainers/present=%v", containers, present), func(b *testing.B) {
				if s := pl.PreScore(ctx, state, pod, state.AllNodes()); s != nil {
					b.Fatalf("PreScore = %v", s)
				}
				if got, s := pl.Score(ctx, state, pod, node); s != nil || got != want {
					b.Fatalf("Score = %d, %v; want %d, nil", got, s, want)
				}
				b.ReportAllocs()
				for b.Loop() {
					pl.Score(ctx, state, pod, node)
				}
			})
		}
	}
}
