package framework

import (
	"slices"
	"testing"
)

func TestScoreTableKeepsTheSearchOrder(t *testing.T) {
	const (
		list = "a list"
		bits = "a set of bits"
		all  = "every node from the start"
	)
	for _, tc := range []struct {
		name  string
		total int
		pos   []int32
		kept  string
	}{
		{"every node from the first", 5, []int32{0, 1, 2, 3, 4}, all},
		{"every node from the middle, round to the one before", 5, []int32{3, 4, 0, 1, 2}, all},
		{"the only node", 1, []int32{0}, all},
		{"every node, out of order, is kept as a list", 4, []int32{0, 2, 1, 3}, list},
		{"a search that started in the middle and wrapped", 200, []int32{130, 131, 199, 0, 64, 129}, bits},
		{"a search that did not wrap", 200, []int32{3, 70, 150}, bits},
		{"a single node", 10, []int32{7}, bits},
		{"an order wrapping twice is kept as a list", 10, []int32{5, 8, 1, 6, 2}, list},
		{"a wrap passing the start again is kept as a list", 10, []int32{5, 8, 1, 6}, list},
		{"a position repeated is kept as a list", 10, []int32{2, 2}, list},
		{"a descending order is kept as a list", 10, []int32{3, 2, 1}, list},
		{"no nodes", 10, nil, list},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := newScoreTable(nil, tc.total, tc.pos, nil, tc.kept == all)
			kept := list
			switch {
			case table.all:
				kept = all
			case table.in != nil:
				kept = bits
			}
			if kept != tc.kept {
				t.Fatalf("kept as %s, want %s", kept, tc.kept)
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
