package framework

import (
	"slices"
	"testing"
)

func TestScoreTableKeepsTheSearchOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		total  int
		pos    []int32
		asBits bool
	}{
		{"every node from the first", 5, []int32{0, 1, 2, 3, 4}, true},
		{"a search that started in the middle and wrapped", 200, []int32{130, 131, 199, 0, 64, 129}, true},
		{"a search that did not wrap", 200, []int32{3, 70, 150}, true},
		{"a single node", 10, []int32{7}, true},
		{"an order wrapping twice is kept as a list", 10, []int32{5, 8, 1, 6, 2}, false},
		{"a wrap passing the start again is kept as a list", 10, []int32{5, 8, 1, 6}, false},
		{"a position repeated is kept as a list", 10, []int32{2, 2}, false},
		{"a descending order is kept as a list", 10, []int32{3, 2, 1}, false},
		{"no nodes", 10, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := newScoreTable(nil, tc.total, tc.pos, nil)
			if got := table.in != nil; got != tc.asBits {
				t.Fatalf("kept as a set of bits: %v, want %v", got, tc.asBits)
			}
			if got := table.positions(); !slices.Equal(got, tc.pos) && len(got)+len(tc.pos) > 0 {
				t.Fatalf("positions %v, want %v", got, tc.pos)
			}
			if table.n != len(tc.pos) {
				t.Fatalf("n = %d, want %d", table.n, len(tc.pos))
			}
		})
	}
}
