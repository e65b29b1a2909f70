package framework_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// filterScorer rejects the nodes in reject and gives the others score.
type filterScorer struct {
	name   string
	reject map[string]bool
	score  int64
}

func (p *filterScorer) Name() string { return p.name }

func (p *filterScorer) Filter(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if p.reject[ni.Name()] {
		return fwk.NewStatus(fwk.Unschedulable, p.name+" says no")
	}
	return nil
}

func (p *filterScorer) Score(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return p.score, nil
}

func TestWithPluginAtOrdersEachPointOnItsOwn(t *testing.T) {
	a := &filterScorer{name: "A", reject: map[string]bool{"n1": true}, score: 10}
	b := &filterScorer{name: "B", reject: map[string]bool{"n1": true}, score: 20}
	c := &filterScorer{name: "C", reject: map[string]bool{"n2": true}, score: 30}
	nodes := nodeinfo.Build([]*v1.Node{cpuNode("n1", "1"), cpuNode("n2", "1"), cpuNode("n3", "1")}, nil)
	for _, tc := range []struct {
		name       string
		opts       []framework.Option
		wantPlugin string // the plugin that rejects n1
		wantScores string // n3's weighted scores
	}{
		{
			name:       "WithPlugin runs every point in the order added",
			opts:       []framework.Option{framework.WithPlugin(a, 1), framework.WithPlugin(b, 2)},
			wantPlugin: "A", wantScores: "A=10 B=40",
		},
		{
			name: "WithPluginAt filters B first and scores A first, with the weights given at Score",
			opts: []framework.Option{
				framework.WithPluginAt(framework.Filter, b, 0), framework.WithPluginAt(framework.Filter, a, 0),
				framework.WithPluginAt(framework.Score, a, 3), framework.WithPluginAt(framework.Score, b, 1),
			},
			wantPlugin: "B", wantScores: "A=30 B=20",
		},
		{
			name: "a plugin added at Score only does not filter",
			opts: []framework.Option{
				framework.WithPlugin(a, 1), framework.WithPluginAt(framework.Score, c, 1),
			},
			wantPlugin: "A", wantScores: "A=10 C=30",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustNew(t, append(tc.opts, framework.WithPercentageOfNodesToScore(100))...)
			res, err := f.Schedule(context.Background(), prioPod("p", 0, "100m", nil), nodes)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Diagnosis.NodeStatus("n1").Plugin(); got != tc.wantPlugin {
				t.Errorf("n1 rejected by %q, want %q", got, tc.wantPlugin)
			}
			if st := res.Diagnosis.NodeStatus("n2"); st != nil {
				t.Errorf("n2 rejected (%v); C filters nowhere", st)
			}
			var got []string
			for _, ns := range res.NodeScores() {
				if ns.Name == "n3" {
					for _, s := range ns.Scores {
						got = append(got, s.Name+"="+strconv.FormatInt(s.Score, 10))
					}
				}
			}
			if strings.Join(got, " ") != tc.wantScores {
				t.Errorf("n3 scores %v, want %s", got, tc.wantScores)
			}
		})
	}
}

func TestWithPluginAtRefuses(t *testing.T) {
	a := &filterScorer{name: "A"}
	for _, tc := range []struct {
		name string
		opts []framework.Option
		want string
	}{
		{name: "a point the plugin does not implement", opts: []framework.Option{framework.WithPluginAt(framework.PreFilter, a, 0)},
			want: `plugin "A" does not extend PreFilter plugin`},
		{name: "an unknown point", opts: []framework.Option{framework.WithPluginAt("Bind", a, 0)}, want: `unknown extension point "Bind"`},
		{name: "a nil plugin", opts: []framework.Option{framework.WithPluginAt(framework.Filter, nil, 0)}, want: "nil plugin"},
		{name: "one plugin twice at a point", opts: []framework.Option{framework.WithPluginAt(framework.Filter, a, 0), framework.WithPlugin(a, 1)},
			want: `two Filter plugins named "A"`},
		{name: "a score plugin without weight", opts: []framework.Option{framework.WithPluginAt(framework.Score, a, 0)},
			want: `score plugin "A" has weight 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := framework.New(tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
