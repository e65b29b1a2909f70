package conformance

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/kubesched/kubesched/internal/schedconfig"
)

// upstreamPoints maps kube-scheduler's Plugins fields to schedconfig's
// points.
func upstreamPoints(p *config.Plugins) map[schedconfig.Point]config.PluginSet {
	return map[schedconfig.Point]config.PluginSet{
		schedconfig.PreFilter: p.PreFilter, schedconfig.Filter: p.Filter, schedconfig.PostFilter: p.PostFilter,
		schedconfig.Reserve: p.Reserve, schedconfig.PreScore: p.PreScore, schedconfig.Score: p.Score,
		schedconfig.PreBind: p.PreBind, schedconfig.Bind: p.Bind, schedconfig.PostBind: p.PostBind,
		schedconfig.Permit: p.Permit, schedconfig.PreEnqueue: p.PreEnqueue, schedconfig.QueueSort: p.QueueSort,
		schedconfig.PlacementGenerate: p.PlacementGenerate, schedconfig.PlacementScore: p.PlacementScore,
	}
}

// upstreamFramework builds upstream's framework for profile as the oracle
// does, with a fake API server of its own.
func upstreamFramework(ctx context.Context, profile *config.KubeSchedulerProfile) (*config.Plugins, error) {
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	dra, err := newDRAManager(ctx, client, factory)
	if err != nil {
		return nil, err
	}
	fw, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(&snapshotLister{}),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithSharedDRAManager(dra),
	)
	if err != nil {
		return nil, err
	}
	return fw.ListPlugins(), nil
}

// TestProfileExpansionMatchesUpstream lays out generated profiles'
// plugins with schedconfig.Expand, told which extension points each
// in-tree plugin implements by upstream's default profile, and with
// upstream's NewFramework: the same plugins at each extension point, in
// the same order, the same score weights, or the same error.
func TestProfileExpansionMatchesUpstream(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	every := int32(100)
	def, err := defaultProfile(&every)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := upstreamFramework(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	implemented := map[string]map[schedconfig.Point]bool{}
	for point, set := range upstreamPoints(listed) {
		for _, pl := range set.Enabled {
			if implemented[pl.Name] == nil {
				implemented[pl.Name] = map[schedconfig.Point]bool{}
			}
			implemented[pl.Name][point] = true
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
	compared, refused, initRefused := 0, 0, 0
	for seed := range uint64(seeds) {
		data := generateConfig(rand.New(rand.NewPCG(seed, 0xe4a)))
		obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			continue
		}
		internal := obj.(*config.KubeSchedulerConfiguration)
		if validation.ValidateKubeSchedulerConfiguration(internal) != nil {
			continue
		}
		decoded, err := schedconfig.Decode(data)
		if err != nil {
			t.Fatalf("seed %d: upstream decodes, kubesched: %v", seed, err)
		}
		schedconfig.SetDefaults(decoded, tested)
		// The first profile upstream refuses, and why: kube-scheduler
		// stops there.
		var firstErr error
		for i := range internal.Profiles {
			want, wantErr := upstreamFramework(ctx, &internal.Profiles[i])
			if wantErr != nil && firstErr == nil {
				firstErr = fmt.Errorf("initializing profiles: creating profile for scheduler name %s: %v", internal.Profiles[i].SchedulerName, wantErr)
			}
			if wantErr != nil && strings.Contains(wantErr.Error(), "initializing plugin") {
				// A plugin refused its args: not the layout's business,
				// but FrameworksFromConfig's, below.
				continue
			}
			got, gotErr := schedconfig.Expand(internal.Profiles[i].SchedulerName, decoded.Profiles[i].Plugins, implements)
			switch {
			case wantErr != nil || gotErr != nil:
				refused++
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Errorf("seed %d, profile %d: error\n got  %v\n want %v\nconfig:\n%s", seed, i, gotErr, wantErr, data)
				}
			default:
				compared++
				for point, set := range upstreamPoints(want) {
					var names []string
					weights := map[string]int64{}
					for _, pl := range set.Enabled {
						names = append(names, pl.Name)
						weights[pl.Name] = int64(pl.Weight)
					}
					if !slices.Equal(got.At[point], names) {
						t.Errorf("seed %d, profile %d, %s:\n got  %v\n want %v\nconfig:\n%s", seed, i, point, got.At[point], names, data)
					}
					gotWeights := got.ScoreWeights
					if point == schedconfig.PlacementScore {
						gotWeights = got.PlacementScoreWeights
					}
					if point == schedconfig.Score || point == schedconfig.PlacementScore {
						mine := map[string]int64{}
						for _, name := range got.At[point] {
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
	t.Logf("%d profiles laid out alike, %d refused alike; %d configurations refused alike by a plugin's constructor", compared, refused, initRefused)
	if compared < 50 || refused < 20 || initRefused < 20 {
		t.Errorf("the generator drifted: %d laid out, %d refused, %d refused by a constructor", compared, refused, initRefused)
	}
}
