package schedconfig

import (
	"slices"
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

// fakeImplements: Sort sorts the queue, Bind binds, A filters and scores,
// B filters, C scores.
func fakeImplements(name string) (map[Point]bool, bool) {
	points := map[string]map[Point]bool{
		"Sort": {QueueSort: true},
		"Bind": {Bind: true},
		"A":    {Filter: true, Score: true},
		"B":    {Filter: true},
		"C":    {Score: true},
	}[name]
	return points, points != nil
}

func plugins(names ...string) []configv1.Plugin {
	var out []configv1.Plugin
	for _, n := range names {
		name, weight, _ := strings.Cut(n, "=")
		pl := configv1.Plugin{Name: name}
		if weight != "" {
			w := int32(weight[0] - '0')
			pl.Weight = &w
		}
		out = append(out, pl)
	}
	return out
}

func TestExpand(t *testing.T) {
	base := func() *configv1.Plugins {
		return &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: plugins("Sort", "A=2", "B", "C", "Bind")}}
	}
	for _, tc := range []struct {
		name        string
		edit        func(p *configv1.Plugins)
		wantFilter  []string
		wantScore   []string
		wantWeights map[string]int64
		wantErr     string
	}{
		{
			name:        "multiPoint plugins go to every point they implement, in order, weight 0 meaning 1",
			edit:        func(*configv1.Plugins) {},
			wantFilter:  []string{"A", "B"},
			wantScore:   []string{"A", "C"},
			wantWeights: map[string]int64{"A": 2, "C": 1},
		},
		{
			name: "a plugin enabled at the point itself comes first, with the point's weight",
			edit: func(p *configv1.Plugins) {
				p.Score.Enabled = plugins("C=5")
				p.Filter.Enabled = plugins("B")
			},
			wantFilter:  []string{"B", "A"},
			wantScore:   []string{"C", "A"},
			wantWeights: map[string]int64{"A": 2, "C": 5},
		},
		{
			name: "a point's own plugin not in multiPoint comes after the multiPoint ones",
			edit: func(p *configv1.Plugins) {
				p.MultiPoint.Enabled = plugins("Sort", "A", "Bind")
				p.Filter.Enabled = plugins("B")
			},
			wantFilter:  []string{"A", "B"},
			wantScore:   []string{"A"},
			wantWeights: map[string]int64{"A": 1},
		},
		{
			name:        "a point disabling a multiPoint plugin goes without it",
			edit:        func(p *configv1.Plugins) { p.Filter.Disabled = plugins("A") },
			wantFilter:  []string{"B"},
			wantScore:   []string{"A", "C"},
			wantWeights: map[string]int64{"A": 2, "C": 1},
		},
		{
			name: "a point disabling * keeps only its own plugins",
			edit: func(p *configv1.Plugins) {
				p.Filter.Disabled = plugins("*")
				p.Filter.Enabled = plugins("B")
			},
			wantFilter:  []string{"B"},
			wantScore:   []string{"A", "C"},
			wantWeights: map[string]int64{"A": 2, "C": 1},
		},
		{name: "an unknown plugin", edit: func(p *configv1.Plugins) { p.Filter.Enabled = plugins("Nope") }, wantErr: `FilterPlugin "Nope" does not exist`},
		{name: "a plugin at a point it does not implement", edit: func(p *configv1.Plugins) { p.Filter.Enabled = plugins("C") }, wantErr: `plugin "C" does not extend FilterPlugin plugin`},
		{name: "a plugin twice at one point", edit: func(p *configv1.Plugins) { p.Filter.Enabled = plugins("B", "B") }, wantErr: `plugin "B" already registered as "FilterPlugin"`},
		{name: "a plugin twice in multiPoint", edit: func(p *configv1.Plugins) { p.MultiPoint.Enabled = plugins("Sort", "B", "B", "Bind") }, wantErr: `plugin "B" already registered as "FilterPlugin"`},
		{name: "no queue sort", edit: func(p *configv1.Plugins) { p.QueueSort.Disabled = plugins("*") }, wantErr: `only one queue sort plugin required for profile with scheduler name "s", but got 0`},
		{name: "no binder", edit: func(p *configv1.Plugins) { p.Bind.Disabled = plugins("Bind") }, wantErr: `at least one bind plugin is needed for profile with scheduler name "s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.edit(p)
			got, err := Expand("s", p, fakeImplements)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.At[Filter], tc.wantFilter) || !slices.Equal(got.At[Score], tc.wantScore) {
				t.Errorf("filter %v, score %v; want %v, %v", got.At[Filter], got.At[Score], tc.wantFilter, tc.wantScore)
			}
			for name, w := range tc.wantWeights {
				if got.ScoreWeights[name] != w {
					t.Errorf("weight of %s %d, want %d", name, got.ScoreWeights[name], w)
				}
			}
		})
	}
}
