package score

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      []int64
		reverse bool
		want    []int64
	}{
		{"the highest becomes 100 and the rest scale down, rounding down", []int64{3, 1, 0}, false, []int64{100, 33, 0}},
		{"reversed, the lowest becomes 100", []int64{3, 1, 0}, true, []int64{0, 67, 100}},
		{"all zero stays zero", []int64{0, 0}, false, []int64{0, 0}},
		{"all zero reversed becomes 100", []int64{0, 0}, true, []int64{100, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scores := slices.Clone(tc.in)
			normalize(scores, tc.reverse)
			for i := range tc.want {
				if scores[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", scores, tc.want)
				}
			}
		})
	}
}
