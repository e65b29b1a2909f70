package framework

import (
	"slices"
	"testing"
)

func TestRunsOfSplitsPositionsWhereTheyAreNotConsecutive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		at    []int32
		every bool
		room  int
		want  [][2]int32
	}{
		{"no positions are no runs", nil, false, 4, [][2]int32{}},
		{"consecutive positions are one run", []int32{3, 4, 5, 6}, false, 4, [][2]int32{{0, 4}}},
		{"a gap starts a run", []int32{3, 4, 6, 7, 9}, false, 4, [][2]int32{{0, 2}, {2, 4}, {4, 5}}},
		{"a wrap round starts a run", []int32{8, 9, 0, 1}, false, 4, [][2]int32{{0, 2}, {2, 4}}},
		{"a search over every node that does not wrap is one run", []int32{2, 3, 4}, true, 4, [][2]int32{{0, 3}}},
		{"a search over every node that wraps is two runs", []int32{8, 9, 0, 1}, true, 4, [][2]int32{{0, 2}, {2, 4}}},
		{"more runs than room are none", []int32{1, 3, 5, 7, 9}, false, 4, nil},
		{"as many runs as room fit", []int32{1, 3, 5, 7}, false, 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
		{"positions going down are runs of one", []int32{5, 4}, false, 4, [][2]int32{{0, 1}, {1, 2}}},
	} {
		got := runsOf(tc.at, tc.every, make([][2]int32, 0, tc.room))
		if (got == nil) != (tc.want == nil) || !slices.Equal(got, tc.want) {
			t.Errorf("%s: runsOf(%v, %v) = %v, want %v", tc.name, tc.at, tc.every, got, tc.want)
		}
	}
}
