package sim_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/sim"
)

// TestOptionsThatCannotApplyAreErrors: an option that cannot apply makes
// PlaceAll or Estimate return its error before anything is placed.
func TestOptionsThatCannotApplyAreErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	template := sim.Template{Node: node("pool", "4")}
	for _, tc := range []struct {
		name string
		run  func(c *sim.Cluster) error
		want string
	}{
		{"a nil AfterEach function", func(c *sim.Cluster) error {
			_, err := c.PlaceAll(ctx, []*v1.Pod{pod("web", "1")}, sim.AfterEach(nil))
			return err
		}, "sim: AfterEach: nil function"},
		{"a nil PlaceOption", func(c *sim.Cluster) error {
			_, err := c.PlaceAll(ctx, []*v1.Pod{pod("web", "1")}, sim.InQueueOrder(), nil)
			return err
		}, "sim: PlaceAll: nil PlaceOption"},
		{"a negative MaxNodes", func(c *sim.Cluster) error {
			_, err := c.Estimate(ctx, template, []*v1.Pod{pod("web", "1")}, sim.MaxNodes(-1))
			return err
		}, "sim: MaxNodes(-1): want 0 (no limit) or more"},
		{"a nil EstimateOption", func(c *sim.Cluster) error {
			_, err := c.Estimate(ctx, template, []*v1.Pod{pod("web", "1")}, nil)
			return err
		}, "sim: Estimate: nil EstimateOption"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, []*v1.Node{node("n1", "4")}, nil)
			err := tc.run(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if p, ok := c.Pod("default", "web"); ok {
				t.Errorf("the pod was placed on %s despite the error", p.Spec.NodeName)
			}
		})
	}
}
