package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/schedconfig"
)

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sameJSON reports whether v encodes as the JSON want, up to the order of
// object keys.
func sameJSON(t *testing.T, v any, want []byte) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(mustJSON(t, v), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	return equalUpToEmpty(a, b)
}

// equalUpToEmpty reports whether two values decoded from JSON are equal,
// but for fields one has and the other lacks that carry nothing (see
// emptyJSON): a field only one release's API types have, such as
// v0.37's empty podGroupPostFilter plugin set.
func equalUpToEmpty(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, av := range a {
			if bv, ok := b[k]; ok {
				if !equalUpToEmpty(av, bv) {
					return false
				}
			} else if !emptyJSON(av) {
				return false
			}
		}
		for k, bv := range b {
			if _, ok := a[k]; !ok && !emptyJSON(bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalUpToEmpty(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// pluginConfigs returns every profile's pluginConfig of a configuration
// decoded from JSON.
func pluginConfigs(cfg any) []any {
	var out []any
	m, _ := cfg.(map[string]any)
	profiles, _ := m["profiles"].([]any)
	for _, p := range profiles {
		prof, _ := p.(map[string]any)
		out = append(out, prof["pluginConfig"])
	}
	return out
}

// TestConfigLoadingMatchesUpstream decodes, defaults and validates
// generated configurations (profiles, plugins enabled and disabled at
// every extension point, weights, every default plugin's args, values out
// of range, unknown fields, and some broken documents) with kubesched's
// internal/schedconfig and with upstream's scheme and validation: the
// same configuration, or the same error text, and the same validation
// errors.
func TestConfigLoadingMatchesUpstream(t *testing.T) {
	t.Parallel()
	const seeds = 2000
	decoded, failed, invalid := 0, 0, 0
	for seed := range uint64(seeds) {
		data := generateConfig(rand.New(rand.NewPCG(seed, 0xc0f)))
		want, err := upstream.JudgeConfig(data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got, gotErr := schedconfig.Decode(data)
		if gotErr == nil {
			schedconfig.SetDefaults(got, tested)
		}
		switch {
		case want.DecodeError != "" || gotErr != nil:
			failed++
			if gotErr == nil || gotErr.Error() != want.DecodeError {
				t.Errorf("seed %d: error\n got  %v\n want %v\nconfig:\n%s", seed, gotErr, want.DecodeError, data)
			}
		case !sameJSON(t, got, want.Decoded):
			t.Errorf("seed %d: configurations differ (-upstream +kubesched):\n%s\nconfig:\n%s", seed, diff.Diff(string(want.Decoded), string(mustJSON(t, got))), data)
		default:
			decoded++
			// FrameworksFromConfig defaults what LoadConfig defaulted
			// already: that must change nothing, but for the order of a
			// plugin enabled twice at one point, which upstream's
			// NewFramework refuses in any order.
			again := got.DeepCopy()
			schedconfig.SetDefaults(again, tested)
			if !enablesTwice(got) && !equality.Semantic.DeepEqual(again, got) {
				t.Errorf("seed %d: defaulting twice changes the configuration:\n%s\nconfig:\n%s", seed, diff.Diff(got, again), data)
			}
			gotErr := schedconfig.Validate(got, tested.Features)
			if gotErr != nil {
				invalid++
			}
			gotText := ""
			if gotErr != nil {
				gotText = gotErr.Error()
			}
			if gotText != want.InvalidText && !sameUpToStageOrder(gotErr, want.Invalid) {
				t.Errorf("seed %d: validation\n got  %v\n want %v\nconfig:\n%s", seed, gotErr, want.InvalidText, data)
			}
			if want.InvalidText == "" {
				// What it runs with, as both write it.
				loaded, err := ours.LoadConfig(data)
				if err != nil {
					t.Fatalf("seed %d: LoadConfig: %v", seed, err)
				}
				var got, written any
				if err := json.Unmarshal(mustJSON(t, loaded), &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(want.Written, &written); err != nil {
					t.Fatal(err)
				}
				// The plugins' args; the plugin sets differ in form only,
				// the internal version having no nil weights.
				if got, want := pluginConfigs(got), pluginConfigs(written); !reflect.DeepEqual(got, want) {
					t.Errorf("seed %d: written plugin args differ (-upstream +kubesched):\n%s\nconfig:\n%s", seed, diff.Diff(want, got), data)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d configurations decoded alike (%d of them invalid alike), %d refused alike", decoded, invalid, failed)
	if decoded < seeds/2 || failed < seeds/20 || invalid < decoded/4 || invalid > decoded*3/4 {
		t.Errorf("the generator drifted: %d decoded, %d of them invalid, %d refused of %d", decoded, invalid, failed, seeds)
	}
}

// enablesTwice reports whether a profile of cfg enables one plugin twice
// at one extension point.
func enablesTwice(cfg *configv1.KubeSchedulerConfiguration) bool {
	for _, prof := range cfg.Profiles {
		p := prof.Plugins
		if p == nil {
			continue
		}
		for _, set := range []configv1.PluginSet{p.MultiPoint, p.PreEnqueue, p.QueueSort, p.PreFilter, p.Filter, p.PostFilter,
			p.PreScore, p.Score, p.Reserve, p.Permit, p.PreBind, p.Bind, p.PostBind, p.PlacementGenerate, p.PlacementScore} {
			seen := map[string]bool{}
			for _, pl := range set.Enabled {
				if seen[pl.Name] {
					return true
				}
				seen[pl.Name] = true
			}
		}
	}
	return false
}

// sameUpToStageOrder reports whether a validation error holds upstream's
// messages w, in an order that differs only where upstream's is random:
// it checks the extension points for removed plugins by ranging over a
// map.
func sameUpToStageOrder(got error, w []string) bool {
	var g []string
	if got != nil {
		g = errorMessages(got)
	}
	stages := 0
	for _, m := range w {
		if strings.Contains(m, ".plugins.") && strings.Contains(m, "was invalid in version") {
			stages++
		}
	}
	slices.Sort(g)
	slices.Sort(w)
	return stages > 1 && slices.Equal(g, w)
}

// extensionPointKeys are the plugins field's keys.
var extensionPointKeys = []string{"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
	"preScore", "score", "reserve", "permit", "preBind", "bind", "postBind"}

// configPluginNames are plugin names a generated configuration uses:
// default ones, and one out of tree.
var configPluginNames = []string{"NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "ImageLocality",
	"NodeAffinity", "TaintToleration", "DefaultPreemption", "VolumeBinding", "DynamicResources",
	"NodeResourcesBalancedAllocation", "PrioritySort", "DefaultBinder", "MyPlugin", "*", "EBSLimits"}

// generateConfig returns a KubeSchedulerConfiguration document, mostly
// valid to decode.
func generateConfig(r *rand.Rand) []byte {
	chance := func(p float64) bool { return r.Float64() < p }
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	doc := map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
	}
	if chance(0.3) {
		doc["parallelism"] = r.IntN(32) - 2
	}
	if chance(0.3) {
		doc["percentageOfNodesToScore"] = r.IntN(130) - 10
	}
	if chance(0.1) {
		doc["podInitialBackoffSeconds"] = r.IntN(5) - 1
	}
	if chance(0.1) {
		doc["podMaxBackoffSeconds"] = r.IntN(12)
	}
	if chance(0.1) {
		doc["enableProfiling"] = chance(0.5)
	}
	if chance(0.1) {
		le := map[string]any{"leaderElect": chance(0.5), "resourceLock": pick([]string{"leases", "endpointsleases"})}
		if chance(0.5) {
			le["leaseDuration"] = pick([]string{"5s", "0s", "20s"})
			le["renewDeadline"] = pick([]string{"10s", "-1s"})
		}
		doc["leaderElection"] = le
	}
	if chance(0.1) {
		doc["clientConnection"] = map[string]any{"qps": r.IntN(100), "burst": r.IntN(200) - 20}
	}
	if chance(0.1) {
		var extenders []any
		for range 1 + r.IntN(2) {
			ext := map[string]any{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter"}
			if chance(0.5) {
				ext["prioritizeVerb"] = "prioritize"
				ext["weight"] = r.IntN(3)
			}
			if chance(0.4) {
				ext["bindVerb"] = "bind"
			}
			if chance(0.4) {
				ext["managedResources"] = []any{map[string]any{"name": pick([]string{"example.com/foo", "cpu", "bad name", "kubernetes.io/x"})}}
			}
			extenders = append(extenders, ext)
		}
		doc["extenders"] = extenders
	}
	var profiles []any
	for i := range r.IntN(4) {
		prof := map[string]any{}
		if chance(0.8) {
			prof["schedulerName"] = fmt.Sprintf("scheduler-%d", i)
			if chance(0.1) {
				prof["schedulerName"] = "scheduler-0"
			}
		}
		if chance(0.2) {
			prof["percentageOfNodesToScore"] = r.IntN(110)
		}
		if chance(0.7) {
			plugins := map[string]any{}
			for range r.IntN(4) {
				set := map[string]any{}
				if chance(0.7) {
					var enabled []any
					for range 1 + r.IntN(3) {
						pl := map[string]any{"name": pick(configPluginNames)}
						if chance(0.4) {
							pl["weight"] = r.IntN(10)
							// A negative weight kube-scheduler accepts, and
							// which, before a positive one, trips its check
							// that the total cannot overflow.
							if chance(0.3) {
								pl["weight"] = -1 - r.IntN(3)
							}
						}
						enabled = append(enabled, pl)
					}
					set["enabled"] = enabled
				}
				if chance(0.5) {
					set["disabled"] = []any{map[string]any{"name": pick(configPluginNames)}}
				}
				plugins[pick(extensionPointKeys)] = set
			}
			prof["plugins"] = plugins
		}
		if chance(0.6) {
			var configs []any
			for range 1 + r.IntN(3) {
				configs = append(configs, generatePluginConfig(r))
			}
			prof["pluginConfig"] = configs
		}
		profiles = append(profiles, prof)
	}
	if profiles != nil {
		doc["profiles"] = profiles
	}
	switch {
	case chance(0.03):
		doc["unknownField"] = 1
	case chance(0.02):
		doc["apiVersion"] = "kubescheduler.config.k8s.io/v1beta3"
	case chance(0.02):
		doc["kind"] = "Pod"
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		panic(err)
	}
	if chance(0.02) {
		// Truncated.
		data = data[:r.IntN(len(data))]
	}
	if chance(0.5) {
		// JSON.
		if j, err := yaml.YAMLToJSON(data); err == nil {
			data = j
		}
	}
	return data
}

// generatePluginConfig returns a pluginConfig entry: args for a default
// plugin, drawn from its fields, sometimes with an unknown field, or
// args for a plugin out of tree.
func generatePluginConfig(r *rand.Rand) map[string]any {
	chance := func(p float64) bool { return r.Float64() < p }
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	resources := func() []any {
		var out []any
		for _, name := range []string{"cpu", "memory", "example.com/gpu"}[:r.IntN(4)] {
			res := map[string]any{"name": name}
			if chance(0.6) {
				res["weight"] = r.IntN(5)
			}
			out = append(out, res)
		}
		return out
	}
	var name string
	args := map[string]any{}
	switch r.IntN(9) {
	case 0:
		name = "NodeResourcesFit"
		if chance(0.5) {
			args["ignoredResources"] = []any{"example.com/foo"}
		}
		if chance(0.3) {
			args["ignoredResourceGroups"] = []any{"example.com"}
		}
		if chance(0.7) {
			strategy := map[string]any{"type": []string{"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}[r.IntN(3)]}
			if chance(0.6) {
				strategy["resources"] = resources()
			}
			if chance(0.3) {
				strategy["requestedToCapacityRatio"] = map[string]any{"shape": []any{
					map[string]any{"utilization": 0, "score": r.IntN(11)}, map[string]any{"utilization": 100, "score": r.IntN(11)}}}
			}
			args["scoringStrategy"] = strategy
		}
	case 1:
		name = "NodeResourcesBalancedAllocation"
		if chance(0.7) {
			args["resources"] = resources()
		}
	case 2:
		name = "PodTopologySpread"
		if chance(0.5) {
			args["defaultingType"] = []string{"List", "System"}[r.IntN(2)]
		}
		if chance(0.5) {
			var constraints []any
			for range 1 + r.IntN(2) {
				c := map[string]any{"maxSkew": r.IntN(3), "topologyKey": pick([]string{"topology.kubernetes.io/zone", "", "bad key!"}),
					"whenUnsatisfiable": pick([]string{"ScheduleAnyway", "DoNotSchedule", "", "Never"})}
				if chance(0.1) {
					c["labelSelector"] = map[string]any{"matchLabels": map[string]any{"a": "b"}}
				}
				constraints = append(constraints, c)
			}
			args["defaultConstraints"] = constraints
		}
	case 3:
		name = "InterPodAffinity"
		if chance(0.6) {
			args["hardPodAffinityWeight"] = r.IntN(110) - 5
		}
		if chance(0.3) {
			args["ignorePreferredTermsOfExistingPods"] = chance(0.5)
		}
	case 4:
		name = "NodeAffinity"
		if chance(0.6) {
			args["addedAffinity"] = map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": pick([]string{"In", "In", "Bogus"}), "values": []any{"a"}}}}}}}
		}
	case 5:
		name = "VolumeBinding"
		if chance(0.5) {
			args["bindTimeoutSeconds"] = r.IntN(1000) - 10
		}
		if chance(0.3) {
			args["shape"] = []any{map[string]any{"utilization": 0, "score": 0}, map[string]any{"utilization": 100, "score": 10}}
		}
	case 6:
		name = "DefaultPreemption"
		if chance(0.6) {
			args["minCandidateNodesPercentage"] = r.IntN(110) - 5
		}
		if chance(0.6) {
			args["minCandidateNodesAbsolute"] = r.IntN(200) - 5
		}
	case 7:
		name = "DynamicResources"
		if chance(0.5) {
			args["filterTimeout"] = fmt.Sprintf("%ds", r.IntN(20)-2)
		}
		if chance(0.3) {
			args["bindingTimeout"] = pick([]string{"500ms", "10m", "1s"})
		}
	case 8:
		name = "MyPlugin"
		args["anything"] = map[string]any{"goes": true}
	}
	if chance(0.05) {
		args["notAField"] = "x"
	}
	if chance(0.3) {
		args["apiVersion"] = "kubescheduler.config.k8s.io/v1"
		args["kind"] = name + "Args"
		if chance(0.05) {
			args["kind"] = "NodeAffinityArgs"
		}
	}
	return map[string]any{"name": name, "args": args}
}
