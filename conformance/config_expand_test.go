package conformance

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/kubesched/kubesched/internal/schedconfig"
)

// upstreamPointNames are the extension points a ProfileLayout names.
var upstreamPointNames = upstreamPoints(&config.Plugins{})

// TestProfileExpansionMatchesUpstream lays out generated profiles'
// plugins with schedconfig.Expand, told which extension points each
// in-tree plugin implements by upstream's default profile, and with
// upstream's NewFramework: the same plugins at each extension point, in
// the same order, the same score weights, or the same error.
func TestProfileExpansionMatchesUpstream(t *testing.T) {
	t.Parallel()
	def, err := upstream.LayOutProfiles(nil)
	if err != nil {
		t.Fatal(err)
	}
	implemented := map[string]map[schedconfig.Point]bool{}
	for point, plugins := range def[0].Points {
		for _, pl := range plugins {
			if implemented[pl.Name] == nil {
				implemented[pl.Name] = map[schedconfig.Point]bool{}
			}
			implemented[pl.Name][schedconfig.Point(point)] = true
		}
	}
	// kubesched's plugins are checked against DefaultPluginPoints (root
	// tests); it must be upstream's.
	for name, points := range schedconfig.PluginPoints(tested.Features) {
		want := map[schedconfig.Point]bool{}
		for _, p := range points {
			want[p] = true
		}
		if !maps.Equal(implemented[name], want) {
			t.Errorf("DefaultPluginPoints[%s] = %v, upstream's plugin implements %v", name, points, implemented[name])
		}
	}
	if len(implemented) != len(schedconfig.PluginPoints(tested.Features)) {
		t.Errorf("upstream's default profile has %d plugins, DefaultPluginPoints %d", len(implemented), len(schedconfig.PluginPoints(tested.Features)))
	}
	implements := func(name string) (map[schedconfig.Point]bool, bool) {
		points, ok := implemented[name]
		return points, ok
	}

	const seeds = 3000
	compared, refused, initRefused, overflows := 0, 0, 0, 0
	for seed := range uint64(seeds) {
		data := generateConfig(rand.New(rand.NewPCG(seed, 0xe4a)))
		verdict, err := upstream.JudgeConfig(data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if verdict.DecodeError != "" || verdict.InvalidText != "" {
			continue
		}
		layouts, err := upstream.LayOutProfiles(data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		decoded, err := schedconfig.Decode(data)
		if err != nil {
			t.Fatalf("seed %d: upstream decodes, kubesched: %v", seed, err)
		}
		schedconfig.SetDefaults(decoded, tested)
		// The first profile upstream refuses, and why: kube-scheduler
		// stops there.
		var firstErr error
		for i, layout := range layouts {
			if layout.Error != "" && firstErr == nil {
				firstErr = fmt.Errorf("initializing profiles: creating profile for scheduler name %s: %s", layout.SchedulerName, layout.Error)
			}
			if strings.Contains(layout.Error, "initializing plugin") {
				// A plugin refused its args: not the layout's business,
				// but FrameworksFromConfig's, below.
				continue
			}
			got, gotErr := schedconfig.Expand(layout.SchedulerName, decoded.Profiles[i].Plugins, implements)
			switch {
			case layout.Error != "" || gotErr != nil:
				refused++
				if strings.Contains(layout.Error, "could overflow") {
					overflows++
				}
				if fmt.Sprint(gotErr) != layout.Error {
					t.Errorf("seed %d, profile %d: error\n got  %v\n want %v\nconfig:\n%s", seed, i, gotErr, layout.Error, data)
				}
			default:
				compared++
				for _, point := range slices.Sorted(maps.Keys(upstreamPointNames)) {
					var names []string
					weights := map[string]int64{}
					for _, pl := range layout.Points[point] {
						names = append(names, pl.Name)
						weights[pl.Name] = int64(pl.Weight)
					}
					at := schedconfig.Point(point)
					if !slices.Equal(got.At[at], names) {
						t.Errorf("seed %d, profile %d, %s:\n got  %v\n want %v\nconfig:\n%s", seed, i, point, got.At[at], names, data)
					}
					gotWeights := got.ScoreWeights
					if at == schedconfig.PlacementScore {
						gotWeights = got.PlacementScoreWeights
					}
					if at == schedconfig.Score || at == schedconfig.PlacementScore {
						mine := map[string]int64{}
						for _, name := range got.At[at] {
							mine[name] = gotWeights[name]
						}
						if !maps.Equal(mine, weights) {
							t.Errorf("seed %d, profile %d, %s weights:\n got  %v\n want %v\nconfig:\n%s", seed, i, point, mine, weights, data)
						}
					}
				}
			}
			if t.Failed() {
				return
			}
		}
		if firstErr != nil && strings.Contains(firstErr.Error(), "initializing plugin") {
			// A plugin's constructor refused its args (NodeResourcesFit's,
			// which configuration validation does not check): kubesched's
			// constructors check them as upstream's do, with its words.
			initRefused++
		}
		// FrameworksFromConfig builds every profile, or stops at the one
		// kube-scheduler stops at, with its words.
		if _, err := ours.FrameworksFromConfig(decoded); fmt.Sprint(err) != fmt.Sprint(firstErr) {
			t.Errorf("seed %d: FrameworksFromConfig\n got  %v\n want %v\nconfig:\n%s", seed, err, firstErr, data)
		}
	}
	t.Logf("%d profiles laid out alike, %d refused alike (%d for score weights whose total could overflow); %d configurations refused alike by a plugin's constructor", compared, refused, overflows, initRefused)
	if compared < 50 || refused < 20 || initRefused < 20 || overflows == 0 {
		t.Errorf("the generator drifted: %d laid out, %d refused, %d for weights, %d refused by a constructor", compared, refused, overflows, initRefused)
	}
}
