package framework

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestAWindowFindsWhatASearchThatStopsEarlyFinds(t *testing.T) {
	t.Parallel()
	type window struct {
		n, start, want int
		rejected       []int32
	}
	cases := []struct {
		name string
		window
	}{
		{"every node passes, without wrapping", window{10, 2, 4, nil}},
		{"every node passes, wrapping round", window{10, 8, 4, nil}},
		{"rejected nodes are passed over", window{10, 1, 4, []int32{2, 3, 6}}},
		{"rejected nodes right after the last found are taken up", window{10, 0, 3, []int32{3, 4, 8}}},
		{"rejected nodes after wrapping round are taken up", window{10, 7, 3, []int32{0, 1, 9}}},
		{"a rejected start", window{10, 5, 2, []int32{5}}},
		{"fewer nodes pass than wanted", window{6, 3, 5, []int32{0, 2, 4}}},
		{"every node rejected", window{4, 1, 2, []int32{0, 1, 2, 3}}},
		{"the last node rejected before the wrap", window{8, 6, 3, []int32{7}}},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		n := 1 + r.IntN(40)
		w := window{n: n, start: r.IntN(n), want: 1 + r.IntN(n)}
		for p := range n {
			if r.IntN(4) == 0 {
				w.rejected = append(w.rejected, int32(p))
			}
		}
		cases = append(cases, struct {
			name string
			window
		}{fmt.Sprintf("random %d", i), w})
	}
	for _, tc := range cases {
		for _, extenders := range []int{0, 1} {
			nodes := make([]*nodeinfo.NodeInfo, tc.n)
			for p := range nodes {
				nodes[p] = &nodeinfo.NodeInfo{}
			}
			sc := &scoring{f: &Framework{extenders: make([]fwk.Extender, extenders)}, buf: &scratch{}}
			got, walked := sc.window(search{nodes: nodes}, tc.start, tc.want, tc.rejected)

			// One node after another, as a search on one worker takes
			// them up: it stops at the first node to pass once it found
			// want.
			var wantPos, wantWalked []int32
			for i := range tc.n {
				p := int32((tc.start + i) % tc.n)
				if slices.Contains(tc.rejected, p) {
					wantWalked = append(wantWalked, p)
					continue
				}
				if len(wantPos) == tc.want {
					break
				}
				wantPos = append(wantPos, p)
			}
			gotWalked := slices.Concat(walked[0], walked[1])
			if !slices.Equal(got.pos, wantPos) || !slices.Equal(gotWalked, wantWalked) {
				t.Fatalf("%s (%+v): found %v, rejected %v; want %v, %v", tc.name, tc.window, got.pos, gotWalked, wantPos, wantWalked)
			}
			if len(got.nodes) != len(got.pos) {
				t.Fatalf("%s: %d nodes for %d positions", tc.name, len(got.nodes), len(got.pos))
			}
			for i, p := range got.pos {
				if got.nodes[i] != nodes[p] {
					t.Fatalf("%s: node %d is not the node at position %d", tc.name, i, p)
				}
			}
			if want := runsOf(got.pos, false, make([][2]int32, 0, len(got.pos)+1)); !slices.Equal(got.runs, want) {
				t.Fatalf("%s: runs %v, want %v", tc.name, got.runs, want)
			}
			if extenders > 0 && len(got.nodes) > 0 && &got.nodes[0] == &nodes[got.pos[0]] {
				t.Fatalf("%s: extenders are handed the snapshot's own slice", tc.name)
			}
		}
	}
}
