package kubesched

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/internal/schedconfig"
)

func TestInTreePluginsImplementWhatKubeSchedulersDo(t *testing.T) {
	points := schedconfig.PluginPoints(newest().Features())
	if got, want := slices.Sorted(maps.Keys(inTree)), slices.Sorted(maps.Keys(points)); !slices.Equal(got, want) {
		t.Fatalf("in-tree plugins %v\nkube-scheduler's default ones %v", got, want)
	}
	for name, it := range inTree {
		ps, err := it.build(nil)
		if err != nil {
			t.Fatalf("%s with default args: %v", name, err)
		}
		got := pointsOf(ps, it.elsewhere, it.companions)
		want := map[schedconfig.Point]bool{}
		for _, p := range points[name] {
			want[p] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s implements %v, kube-scheduler's %v", name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
}

// Every in-tree part with a Features field gets the release's: a part
// left out of buildInTree's list would decide as the newest release.
func TestBuildInTreeSetsEveryPartsFeatures(t *testing.T) {
	fs := feature.Features{}
	for name := range inTree {
		ps, err := buildInTree(name, nil, &fs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range ps {
			v := reflect.ValueOf(p).Elem()
			f := v.FieldByName("Features")
			if !f.IsValid() {
				continue
			}
			if got, ok := f.Interface().(*feature.Features); !ok || got != &fs {
				t.Errorf("%s (%T): Features not set to the release's", name, p)
			}
		}
	}
}
