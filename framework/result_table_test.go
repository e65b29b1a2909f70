package framework

import (
	"fmt"
	"slices"
	"testing"
)

func TestScoreTableKeepsTheSearchOrder(t *testing.T) {
	const (
		list = keptAsList
		bits = keptAsBits
		all  = keptAsSpan
	)
	for _, tc := range []struct {
		name  string
		total int
		pos   []int32
		every bool
		kept  string
	}{
		{"every node from the first", 5, []int32{0, 1, 2, 3, 4}, true, all},
		{"every node from the middle, round to the one before", 5, []int32{3, 4, 0, 1, 2}, true, all},
		{"the only node", 1, []int32{0}, true, all},
		{"every node, out of order, is kept as a list", 4, []int32{0, 2, 1, 3}, false, list},
		{"a search that started in the middle and wrapped", 200, []int32{130, 131, 199, 0, 64, 129}, false, bits},
		{"a search that did not wrap", 200, []int32{3, 70, 150}, false, bits},
		{"a single node", 10, []int32{7}, false, all},
		{"an order wrapping twice is kept as a list", 10, []int32{5, 8, 1, 6, 2}, false, list},
		{"a wrap passing the start again is kept as a list", 10, []int32{5, 8, 1, 6}, false, list},
		{"a position repeated is kept as a list", 10, []int32{2, 2}, false, list},
		{"a descending order is kept as a list", 10, []int32{3, 2, 1}, false, list},
		{"no nodes", 10, nil, false, list},
		{"every node but a few, from the middle, round to it", 200, slices.Concat(span(130, 140), span(150, 200), span(0, 51), span(60, 130)), false, bits},
		{"runs past the total are kept as a list", 100, slices.Concat(span(90, 101), span(0, 10)), false, list},
		{"consecutive nodes from the middle", 200, span(130, 180), false, all},
		{"consecutive nodes round the last to the first", 200, slices.Concat(span(180, 200), span(0, 30)), false, all},
		{"nodes wrapping round before the last", 200, slices.Concat(span(180, 199), span(0, 30)), false, bits},
		{"nodes wrapping round after a gap at the first", 200, slices.Concat(span(180, 200), span(1, 30)), false, bits},
	} {
		// Given the runs of consecutive positions, or not: the same.
		for _, withRuns := range []bool{false, true} {
			var runs [][2]int32
			if withRuns {
				runs = runsOf(tc.pos, false, make([][2]int32, 0, 64))
			}
			t.Run(fmt.Sprintf("%s, with runs %v", tc.name, withRuns), func(t *testing.T) {
				checkScoreTable(t, newScoreTable(nil, tc.total, tc.pos, runs, nil, tc.every, nil), tc.pos, tc.kept)
			})
		}
	}
}

// span returns the positions [from, to).
func span(from, to int32) []int32 {
	var out []int32
	for p := from; p < to; p++ {
		out = append(out, p)
	}
	return out
}

// Ways a score table keeps its positions.
const (
	keptAsList = "a list"
	keptAsBits = "a set of bits"
	keptAsSpan = "consecutive positions from the start"
)

// checkScoreTable fails the test unless table keeps pos the way want
// says and gives them back in order.
func checkScoreTable(t *testing.T, table scoreTable, pos []int32, want string) {
	t.Helper()
	kept := keptAsList
	switch {
	case table.span:
		kept = keptAsSpan
	case table.in != nil:
		kept = keptAsBits
	}
	if kept != want {
		t.Fatalf("kept as %s, want %s", kept, want)
	}
	if got := table.positions(); !slices.Equal(got, pos) && len(got)+len(pos) > 0 {
		t.Fatalf("positions %v, want %v", got, pos)
	}
	if table.n != len(pos) {
		t.Fatalf("n = %d, want %d", table.n, len(pos))
	}
}
