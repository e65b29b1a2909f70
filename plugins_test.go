package kubesched_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/score"
)

// listed returns ps as "Name:weight" of the plugins that score, "Name"
// of the others, in order.
func listed(ps kubesched.Plugins) string {
	var out []string
	for _, p := range ps {
		if framework.Implements(p.Plugin, framework.Score) {
			out = append(out, p.Plugin.Name()+":"+strings.Repeat("*", int(p.Weight)))
		} else {
			out = append(out, p.Plugin.Name())
		}
	}
	return strings.Join(out, " ")
}

func TestDefaultPluginsAreKubeSchedulersDefaultProfile(t *testing.T) {
	t.Parallel()
	const want = "SchedulingGates NodeName NodeUnschedulable TaintToleration TaintToleration:*** NodeAffinity NodeAffinity:** " +
		"NodePorts NodeResourcesFit NodeResourcesFit:* VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeBinding:* VolumeZone " +
		"PodTopologySpread PodTopologySpread:** InterPodAffinity InterPodAffinity:** DynamicResources DynamicResources:** " +
		"DefaultPreemption NodeResourcesBalancedAllocation:* ImageLocality:* NodeDeclaredFeatures"
	ps := kubesched.DefaultPlugins()
	if got := listed(ps); got != want {
		t.Errorf("DefaultPlugins:\n got  %s\n want %s", got, want)
	}
	ps[0].Plugin = &filter.NodeName{}
	if again := kubesched.DefaultPlugins(); again[0].Plugin.Name() != names.SchedulingGates {
		t.Error("changing one DefaultPlugins list changed the next")
	}
}

func TestPluginsEdits(t *testing.T) {
	t.Parallel()
	mostAllocated, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{
		ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}})
	if err != nil {
		t.Fatal(err)
	}
	fit := func(ps kubesched.Plugins) []kubesched.WeightedPlugin {
		var out []kubesched.WeightedPlugin
		for _, p := range ps {
			if p.Plugin.Name() == names.NodeResourcesFit {
				out = append(out, p)
			}
		}
		return out
	}
	tests := []struct {
		name    string
		edit    func(kubesched.Plugins) kubesched.Plugins
		wantFit []kubesched.WeightedPlugin
		wantLen int
	}{
		{
			name: "Without drops both parts of a plugin that filters and scores",
			edit: func(ps kubesched.Plugins) kubesched.Plugins {
				return ps.Without(names.NodeResourcesFit, names.ImageLocality)
			},
			wantLen: 22,
		},
		{
			name:    "Without an unknown name changes nothing",
			edit:    func(ps kubesched.Plugins) kubesched.Plugins { return ps.Without("Mine") },
			wantFit: []kubesched.WeightedPlugin{{&filter.NodeResourcesFit{}, 0}, {&score.NodeResourcesFit{}, 1}},
			wantLen: 25,
		},
		{
			name:    "Replace swaps the score part in its place and leaves the filter part",
			edit:    func(ps kubesched.Plugins) kubesched.Plugins { return ps.Replace(mostAllocated, 5) },
			wantFit: []kubesched.WeightedPlugin{{&filter.NodeResourcesFit{}, 0}, {mostAllocated, 5}},
			wantLen: 25,
		},
		{
			name: "Replace of a plugin no entry shares a name and a point with appends it",
			edit: func(ps kubesched.Plugins) kubesched.Plugins {
				return ps.Without(names.NodeResourcesFit).Replace(mostAllocated, 1)
			},
			wantFit: []kubesched.WeightedPlugin{{mostAllocated, 1}},
			wantLen: 24,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps := kubesched.DefaultPlugins()
			before := listed(ps)
			got := tc.edit(ps)
			if listed(ps) != before {
				t.Error("the edit changed the list it was called on")
			}
			if len(got) != tc.wantLen {
				t.Errorf("%d plugins, want %d: %s", len(got), tc.wantLen, listed(got))
			}
			gotFit := fit(got)
			if len(gotFit) != len(tc.wantFit) {
				t.Fatalf("NodeResourcesFit entries %v, want %v", gotFit, tc.wantFit)
			}
			for i := range gotFit {
				if gotFit[i].Weight != tc.wantFit[i].Weight || (tc.wantFit[i].Plugin == mostAllocated) != (gotFit[i].Plugin == mostAllocated) {
					t.Errorf("NodeResourcesFit entry %d = %+v, want %+v", i, gotFit[i], tc.wantFit[i])
				}
			}
			if tc.name == "Replace of a plugin no entry shares a name and a point with appends it" && got[len(got)-1].Plugin != mostAllocated {
				t.Errorf("the replacement is not last: %s", listed(got))
			}
		})
	}
}

func TestPluginsFrameworkRefusesANilPlugin(t *testing.T) {
	t.Parallel()
	ps := append(kubesched.DefaultPlugins(), kubesched.WeightedPlugin{})
	if _, err := ps.Framework(); err == nil || !strings.Contains(err.Error(), "nil plugin") {
		t.Errorf("Framework = %v, want an error about the nil plugin", err)
	}
	if got := len(ps.Without(names.ImageLocality)); got != len(ps)-1 {
		t.Errorf("Without kept %d of %d entries, want all but ImageLocality and the nil one kept", got, len(ps))
	}
}

// An edited DefaultPlugins and the configuration that says the same thing
// decide alike.
func TestAnEditedDefaultProfileDecidesAsItsConfiguration(t *testing.T) {
	t.Parallel()
	mostAllocated, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{
		ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}})
	if err != nil {
		t.Fatal(err)
	}
	edited, err := kubesched.DefaultPlugins().Without(names.ImageLocality).Replace(mostAllocated, 1).Framework(framework.WithRandSource(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	configured := fromConfig(t, nil, "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: ImageLocality}]\n"+
		"  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n")["default-scheduler"]
	nodes := binPackingCluster()
	for _, pod := range []string{"100m", "500m", "1"} {
		gotHost, gotScores := scoresOn(t, edited, examplePod("web", pod), nodes)
		wantHost, wantScores := scoresOn(t, configured, examplePod("web", pod), nodes)
		if gotHost != wantHost || gotScores != wantScores {
			t.Errorf("pod of %s cpu: edited chose %s (%s), configuration %s (%s)", pod, gotHost, gotScores, wantHost, wantScores)
		}
		if gotHost != "busy" || strings.Contains(gotScores, names.ImageLocality) {
			t.Errorf("pod of %s cpu: chose %s (%s), want busy without ImageLocality", pod, gotHost, gotScores)
		}
	}
}

func TestFrameworksFromAConfigurationWrittenInCode(t *testing.T) {
	t.Parallel()
	nodes := binPackingCluster()
	pod := examplePod("web", "500m")
	def, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	wantHost, wantScores := scoresOn(t, def, pod, nodes)
	tests := []struct {
		name     string
		cfg      *configv1.KubeSchedulerConfiguration
		profiles []string
		wantErr  string
	}{
		{name: "an empty configuration is the default profile", cfg: &configv1.KubeSchedulerConfiguration{}, profiles: []string{"default-scheduler"}},
		{name: "a profile with only a name is the default profile",
			cfg:      &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: new("mine")}}},
			profiles: []string{"mine"}},
		{name: "a configuration written in code is validated as kube-scheduler validates it",
			cfg:     &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: new("a")}, {SchedulerName: new("a")}}},
			wantErr: "profiles[1].schedulerName: Duplicate value: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := tc.cfg.DeepCopy()
			fws, err := kubesched.FrameworksFromConfig(tc.cfg, framework.WithRandSource(rand.NewPCG(1, 1)))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("FrameworksFromConfig = %v, want %q...", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for name, f := range fws {
				got = append(got, name)
				if host, scores := scoresOn(t, f, pod, nodes); host != wantHost || scores != wantScores {
					t.Errorf("%s chose %s (%s), the default profile %s (%s)", name, host, scores, wantHost, wantScores)
				}
			}
			if !slices.Equal(got, tc.profiles) {
				t.Errorf("profiles %v, want %v", got, tc.profiles)
			}
			if !reflect.DeepEqual(tc.cfg, before) {
				t.Error("FrameworksFromConfig modified its configuration")
			}
		})
	}
}
