package conformance

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

func TestDbgReplicas(t *testing.T) {
	w := NewSimWorkload(SimReplicas, 5000, 10000, 50)
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.New(fw, w.Nodes, w.Pods, w.Objects...)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range w.Pending[:5] {
		r, err := c.Place(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(i, r.SuggestedHost, r.EvaluatedNodes, r.FeasibleNodes)
		n := 0
		for name, s := range r.Diagnosis.Rejected() {
			if n < 3 {
				fmt.Println("  ", name, s.Plugin(), s.Reasons())
			}
			n++
		}
		if i == 0 {
			ns := r.NodeScores()
			for _, s := range ns[0].Scores {
				fmt.Println("   plugin", s.Name, s.Score)
			}
		}
	}
}
