package kubesched_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

const configHeader = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// fromConfig loads doc and builds its frameworks with r, seeded.
func fromConfig(t *testing.T, r kubesched.Registry, doc string) map[string]*framework.Framework {
	t.Helper()
	cfg, err := kubesched.LoadConfig([]byte(configHeader + doc))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	fws, err := r.FrameworksFromConfig(cfg, framework.WithRandSource(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatalf("FrameworksFromConfig: %v", err)
	}
	return fws
}

// scoresOn schedules pod on nodes and returns the chosen node and its
// scores, as "Plugin=score ...".
func scoresOn(t *testing.T, f *framework.Framework, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (string, string) {
	t.Helper()
	res, err := f.Schedule(context.Background(), pod, nodes)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, ns := range res.NodeScores() {
		if ns.Name == res.SuggestedHost {
			for _, s := range ns.Scores {
				parts = append(parts, fmt.Sprintf("%s=%d", s.Name, s.Score))
			}
		}
	}
	return res.SuggestedHost, strings.Join(parts, " ")
}

// binPackingCluster: node busy has 3 of 4 CPU in use, idle none.
func binPackingCluster() []*nodeinfo.NodeInfo {
	return nodeinfo.Build([]*v1.Node{exampleNode("busy", "4"), exampleNode("idle", "4")}, []*v1.Pod{onNode(examplePod("running", "3"), "busy")})
}

func onNode(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

func TestFrameworksFromConfig(t *testing.T) {
	nodes := binPackingCluster()
	pod := examplePod("web", "500m")
	def, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	wantHost, wantScores := scoresOn(t, def, pod, nodes)
	for _, tc := range []struct {
		name     string
		doc      string
		profile  string
		wantHost string
		// wantScores is the chosen node's scores, exactly; or, when empty,
		// has and hasNot list scores that must and must not be there.
		wantScores  string
		has, hasNot []string
	}{
		{name: "the default configuration is the default profile", doc: "", profile: "default-scheduler", wantHost: wantHost, wantScores: wantScores},
		{
			name:     "MostAllocated packs the busy node",
			doc:      "profiles:\n- schedulerName: packer\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n",
			profile:  "packer",
			wantHost: "busy",
			has:      []string{"TaintToleration=300", "NodeResourcesFit="},
		},
		{
			name:     "a score plugin disabled at score is gone, and a weight given at score applies",
			doc:      "profiles:\n- plugins:\n    score:\n      enabled: [{name: TaintToleration, weight: 10}]\n      disabled: [{name: ImageLocality}]\n",
			profile:  "default-scheduler",
			wantHost: "idle",
			has:      []string{"TaintToleration=1000", "NodeResourcesFit="},
			hasNot:   []string{"ImageLocality"},
		},
		{
			name:     "ImageLocality, which has no PreScore in kube-scheduler, scores whatever preScore disables",
			doc:      "profiles:\n- plugins:\n    preScore:\n      disabled: [{name: ImageLocality}]\n",
			profile:  "default-scheduler",
			wantHost: wantHost, wantScores: wantScores,
		},
		{
			name:     "a plugin disabled at multiPoint is gone from every point",
			doc:      "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: TaintToleration}]\n",
			profile:  "default-scheduler",
			wantHost: "idle",
			has:      []string{"NodeResourcesFit="},
			hasNot:   []string{"TaintToleration"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fws := fromConfig(t, nil, tc.doc)
			f, ok := fws[tc.profile]
			if !ok || len(fws) != 1 {
				t.Fatalf("%d profiles, want only %s", len(fws), tc.profile)
			}
			host, scores := scoresOn(t, f, pod, nodes)
			if host != tc.wantHost {
				t.Errorf("chose %s, want %s", host, tc.wantHost)
			}
			if tc.wantScores != "" && scores != tc.wantScores {
				t.Errorf("scores %s\nwant   %s", scores, tc.wantScores)
			}
			for _, s := range tc.has {
				if !strings.Contains(scores, s) {
					t.Errorf("scores %s lack %s", scores, s)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(scores, s) {
					t.Errorf("scores %s have %s", scores, s)
				}
			}
		})
	}
}

// preferNode is a user's score plugin: 100 on the node its args name.
type preferNode struct{ node string }

func (p *preferNode) Name() string { return "PreferNode" }

func (p *preferNode) Score(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	if ni.Name() == p.node {
		return 100, nil
	}
	return 0, nil
}

func TestFrameworksFromConfigBuildsTheUsersPlugins(t *testing.T) {
	registry := kubesched.Registry{"PreferNode": func(args runtime.Object) (fwk.Plugin, error) {
		var a struct{ Node string }
		if u, ok := args.(*runtime.Unknown); ok {
			if err := json.Unmarshal(u.Raw, &a); err != nil {
				return nil, err
			}
		}
		return &preferNode{node: a.Node}, nil
	}}
	fws := fromConfig(t, registry, `profiles:
- schedulerName: default-scheduler
- schedulerName: prefers-busy
  plugins:
    score: {enabled: [{name: PreferNode, weight: 5}]}
  pluginConfig:
  - name: PreferNode
    args: {node: busy}
`)
	nodes := binPackingCluster()
	pod := examplePod("web", "500m")
	if host, _ := scoresOn(t, fws["default-scheduler"], pod, nodes); host != "idle" {
		t.Errorf("the default profile chose %s, want idle", host)
	}
	host, scores := scoresOn(t, fws["prefers-busy"], pod, nodes)
	if host != "busy" || !strings.HasSuffix(scores, "PreferNode=500") {
		t.Errorf("the user's profile chose %s with %s, want busy with PreferNode=500 last", host, scores)
	}
}

func TestFrameworksFromConfigRefuses(t *testing.T) {
	mine := kubesched.Registry{"Mine": func(runtime.Object) (fwk.Plugin, error) { return &preferNode{}, nil }}
	for _, tc := range []struct {
		name     string
		registry kubesched.Registry
		doc      string
		want     string
	}{
		{name: "an unknown plugin", doc: "profiles:\n- plugins: {filter: {enabled: [{name: Mine}]}}\n",
			want: `initializing profiles: creating profile for scheduler name default-scheduler: FilterPlugin "Mine" does not exist`},
		{name: "a plugin at a point it does not implement", registry: mine, doc: "profiles:\n- plugins: {filter: {enabled: [{name: Mine}]}}\n",
			want: `plugin "Mine" does not extend FilterPlugin plugin`},
		{name: "NodeResourcesFit args its plugin refuses", doc: "profiles:\n- pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: Bogus}}}]\n",
			want: `initializing plugin "NodeResourcesFit"`},
		{name: "a user's plugin of a built-in name", registry: kubesched.Registry{"ImageLocality": mine["Mine"]}, doc: "",
			want: "a plugin named ImageLocality already exists"},
		{name: "ImageLocality at preScore, which it does not implement in kube-scheduler", doc: "profiles:\n- plugins: {preScore: {enabled: [{name: ImageLocality}]}}\n",
			want: `plugin "ImageLocality" does not extend PreScorePlugin plugin`},
		{name: "no binder", doc: "profiles:\n- plugins: {bind: {disabled: [{name: '*'}]}}\n",
			want: `at least one bind plugin is needed for profile with scheduler name "default-scheduler"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := kubesched.LoadConfig([]byte(configHeader + tc.doc))
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			_, err = tc.registry.FrameworksFromConfig(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FrameworksFromConfig: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := kubesched.FrameworksFromConfig(nil); err == nil {
		t.Error("a nil configuration built frameworks")
	}
}

func TestFrameworksFromConfigRunsPhasesWithoutTheirPartnersAsKubeSchedulerDoes(t *testing.T) {
	t.Parallel()
	withDisk := func(p *v1.Pod) *v1.Pod {
		p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "disk-1"}}}}
		return p
	}
	cluster := func() []*nodeinfo.NodeInfo {
		blue := exampleNode("n2", "4")
		blue.Labels = map[string]string{"team": "blue"}
		return nodeinfo.Build([]*v1.Node{exampleNode("n1", "4"), blue},
			[]*v1.Pod{onNode(withDisk(examplePod("running", "1")), "n1")})
	}
	tests := []struct {
		name    string
		doc     string
		pod     *v1.Pod
		host    string
		wantErr string
	}{
		{
			name: "a Score without its PreScore fails as kube-scheduler's InterPodAffinity does",
			doc: `profiles:
- plugins:
    preScore: {disabled: [{name: InterPodAffinity}]}
`,
			pod:     examplePod("p", "1"),
			wantErr: `failed to read "PreScoreInterPodAffinity" from cycleState: not found`,
		},
		{
			name: "a Filter without its PreFilter fails as kube-scheduler's NodeResourcesFit does",
			doc: `profiles:
- plugins:
    preFilter: {disabled: [{name: NodeResourcesFit}]}
`,
			pod:     examplePod("p", "1"),
			wantErr: `error reading "PreFilterNodeResourcesFit" from cycleState: not found`,
		},
		{
			name: "VolumeRestrictions without its PreFilter still rejects a disk conflict before it fails",
			doc: `profiles:
- plugins:
    preFilter: {disabled: [{name: VolumeRestrictions}]}
`,
			pod:     withDisk(examplePod("p", "1")),
			wantErr: `cannot read "PreFilterVolumeRestrictions" from cycleState`,
		},
		{
			name: "NodeAffinity without its PreFilter computes the pod's affinity itself",
			doc: `profiles:
- plugins:
    preFilter: {disabled: [{name: NodeAffinity}]}
    score: {disabled: [{name: "*"}]}
`,
			pod: func() *v1.Pod {
				p := examplePod("p", "1")
				p.Spec.NodeSelector = map[string]string{"team": "blue"}
				return p
			}(),
			host: "n2",
		},
		{
			name: "NodeResourcesFit without its PreScore computes the pod's requests itself",
			doc: `profiles:
- plugins:
    preScore: {disabled: [{name: NodeResourcesFit}]}
    score: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit}]}
`,
			pod:  examplePod("p", "1"),
			host: "n2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fws := fromConfig(t, kubesched.Registry{}, tc.doc)
			res, err := fws["default-scheduler"].Schedule(context.Background(), tc.pod, cluster())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Schedule: %v, %v; want an error containing %q", res, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			if res.SuggestedHost != tc.host {
				t.Errorf("Schedule chose %s, want %s", res.SuggestedHost, tc.host)
			}
		})
	}
}

// prepared is a plugin of a Registry with a PreFilter that its Filter
// depends on.
type prepared struct{}

func (prepared) Name() string { return "Prepared" }

func (prepared) PreFilter(context.Context, *fwk.CycleState, *v1.Pod, []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, nil
}

func (prepared) Filter(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) *fwk.Status {
	return nil
}

func TestFrameworksFromConfigRefusesARegistrysPluginWithoutItsPreFilter(t *testing.T) {
	t.Parallel()
	cfg, err := kubesched.LoadConfig([]byte(configHeader + `profiles:
- plugins:
    multiPoint: {enabled: [{name: Prepared}]}
    preFilter: {disabled: [{name: Prepared}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := kubesched.Registry{"Prepared": func(runtime.Object) (fwk.Plugin, error) { return prepared{}, nil }}
	_, err = r.FrameworksFromConfig(cfg)
	if !errors.Is(err, kubesched.ErrUnpairedPhase) || !strings.Contains(err.Error(), `plugin "Prepared" runs at FilterPlugin without its PreFilterPlugin`) {
		t.Errorf("FrameworksFromConfig: %v, want ErrUnpairedPhase for Prepared", err)
	}
}

func TestFrameworksFromConfigLaysOutThePointsTheReleasesPluginsExtend(t *testing.T) {
	t.Parallel()
	doc := configHeader + `profiles:
- plugins:
    preFilter: {enabled: [{name: TaintToleration}]}
`
	tests := []struct{ release, wantErr string }{
		{"1.37", ""},
		{"1.36", `plugin "TaintToleration" does not extend PreFilterPlugin plugin`},
	}
	for _, tc := range tests {
		t.Run("kube-scheduler "+tc.release, func(t *testing.T) {
			t.Parallel()
			r, err := kubesched.ReleaseFor(tc.release)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := r.LoadConfig([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.FrameworksFromConfig(cfg)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("FrameworksFromConfig: %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("FrameworksFromConfig: %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
