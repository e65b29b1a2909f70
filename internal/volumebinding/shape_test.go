package volumebinding

import (
	"testing"

	"github.com/kubesched/kubesched/internal/noderesources"
)

// TestShapeScore checks shapeScore against values worked out by hand with
// kube-scheduler's helper.BuildBrokenLinearFunction: flat outside the
// points, linear between them, integer division truncating toward zero.
func TestShapeScore(t *testing.T) {
	t.Parallel()
	type pt = noderesources.UtilizationShapePoint
	falling := []pt{{Utilization: 0, Score: 100}, {Utilization: 100, Score: 0}}
	zigzag := []pt{{Utilization: 20, Score: 20}, {Utilization: 40, Score: 80}, {Utilization: 60, Score: 30}}
	tests := []struct {
		name  string
		shape []pt
		p     int64
		want  int64
	}{
		{name: "the default shape scores an empty class 100", shape: falling, p: 0, want: 100},
		{name: "the default shape scores a half-full class 50", shape: falling, p: 50, want: 50},
		{name: "the default shape truncates between points", shape: falling, p: 33, want: 67},
		{name: "the default shape scores a full class 0", shape: falling, p: 100, want: 0},
		{name: "below the first point the shape is flat", shape: zigzag, p: 10, want: 20},
		{name: "a negative utilization reads as below the first point", shape: zigzag, p: -7, want: 20},
		{name: "on a point the shape takes its score", shape: zigzag, p: 40, want: 80},
		{name: "a rising segment interpolates", shape: zigzag, p: 30, want: 50},
		{name: "a falling segment truncates toward zero", shape: zigzag, p: 41, want: 78},
		{name: "above the last point the shape is flat", shape: zigzag, p: 99, want: 30},
		{name: "a one-point shape is constant", shape: []pt{{Utilization: 50, Score: 70}}, p: 80, want: 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := shapeScore(tt.shape, tt.p); got != tt.want {
				t.Errorf("shapeScore(%d) = %d, want %d", tt.p, got, tt.want)
			}
		})
	}
}
