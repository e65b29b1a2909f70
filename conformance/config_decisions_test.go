package conformance

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// generateSchedulingConfig returns a valid configuration of one profile
// that changes decisions: scoring strategies, balanced resources, default
// spreading, affinity weights, an added node affinity, plugins disabled
// at one point or all, and weights.
func generateSchedulingConfig(r *rand.Rand) []byte {
	chance := func(p float64) bool { return r.Float64() < p }
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	resources := func() []any {
		out := []any{map[string]any{"name": "cpu", "weight": 1 + r.IntN(5)}}
		if chance(0.7) {
			out = append(out, map[string]any{"name": "memory", "weight": 1 + r.IntN(5)})
		}
		if chance(0.2) {
			out = append(out, map[string]any{"name": "example.com/gpu", "weight": 1 + r.IntN(3)})
		}
		return out
	}
	var configs []any
	if chance(0.7) {
		strategy := map[string]any{"type": pick([]string{"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"})}
		if chance(0.6) {
			strategy["resources"] = resources()
		}
		if strategy["type"] == "RequestedToCapacityRatio" {
			strategy["requestedToCapacityRatio"] = map[string]any{"shape": []any{
				map[string]any{"utilization": 0, "score": r.IntN(11)},
				map[string]any{"utilization": 20 + r.IntN(60), "score": r.IntN(11)},
				map[string]any{"utilization": 100, "score": r.IntN(11)}}}
		}
		args := map[string]any{"scoringStrategy": strategy}
		if chance(0.2) {
			args["ignoredResourceGroups"] = []any{"example.com"}
		}
		configs = append(configs, map[string]any{"name": "NodeResourcesFit", "args": args})
	}
	if chance(0.3) {
		var rs []any
		for _, res := range resources() {
			res.(map[string]any)["weight"] = 1
			rs = append(rs, res)
		}
		configs = append(configs, map[string]any{"name": "NodeResourcesBalancedAllocation", "args": map[string]any{"resources": rs}})
	}
	if chance(0.4) {
		args := map[string]any{"defaultingType": "List"}
		if chance(0.7) {
			args["defaultConstraints"] = []any{map[string]any{"maxSkew": 1 + r.IntN(3), "topologyKey": pick([]string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"}),
				"whenUnsatisfiable": pick([]string{"ScheduleAnyway", "DoNotSchedule"})}}
		}
		configs = append(configs, map[string]any{"name": "PodTopologySpread", "args": args})
	}
	if chance(0.3) {
		configs = append(configs, map[string]any{"name": "InterPodAffinity", "args": map[string]any{
			"hardPodAffinityWeight": r.IntN(101), "ignorePreferredTermsOfExistingPods": chance(0.5)}})
	}
	if chance(0.2) {
		configs = append(configs, map[string]any{"name": "NodeAffinity", "args": map[string]any{"addedAffinity": map[string]any{
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 1 + r.IntN(100), "preference": map[string]any{
				"matchExpressions": []any{map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{"zone-a"}}}}}}}}})
	}
	plugins := map[string]any{}
	scorers := []string{"TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"}
	if chance(0.5) {
		var enabled []any
		for range 1 + r.IntN(3) {
			// Mostly kube-scheduler's range of use; sometimes the largest
			// weight an int32 holds.
			weight := 1 + r.IntN(10)
			if chance(0.05) {
				weight = math.MaxInt32
			}
			enabled = append(enabled, map[string]any{"name": pick(scorers), "weight": weight})
		}
		score := map[string]any{"enabled": dedupeByName(enabled)}
		switch {
		case chance(0.4):
			score["disabled"] = []any{map[string]any{"name": pick(scorers)}}
		}
		plugins["score"] = score
	}
	if chance(0.3) {
		plugins["filter"] = map[string]any{"disabled": []any{map[string]any{"name": pick([]string{"TaintToleration", "NodePorts", "PodTopologySpread", "InterPodAffinity", "NodeAffinity"})}}}
	}
	if chance(0.2) {
		plugins["multiPoint"] = map[string]any{"disabled": []any{map[string]any{"name": pick([]string{"ImageLocality", "PodTopologySpread", "InterPodAffinity", "TaintToleration"})}}}
	}
	// A plugin's Filter without its PreFilter, or its Score without its
	// PreScore: each plugin then falls back or fails in its own way.
	if chance(0.3) {
		plugins["preFilter"] = map[string]any{"disabled": []any{map[string]any{"name": pick([]string{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
			"VolumeBinding", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "NodeName", "NodeUnschedulable", "TaintToleration",
			"NodeVolumeLimits", "VolumeZone", "NodeDeclaredFeatures"})}}}
	}
	if chance(0.3) {
		plugins["preScore"] = map[string]any{"disabled": []any{map[string]any{"name": pick([]string{"TaintToleration", "NodeAffinity", "PodTopologySpread",
			"InterPodAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "VolumeBinding", "DynamicResources"})}}}
	}
	prof := map[string]any{"schedulerName": "configured", "percentageOfNodesToScore": 100}
	if len(plugins) > 0 {
		prof["plugins"] = plugins
	}
	if len(configs) > 0 {
		prof["pluginConfig"] = configs
	}
	data, err := yaml.Marshal(map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
		"profiles":   []any{prof},
	})
	if err != nil {
		panic(err)
	}
	return data
}

// dedupeByName keeps the first plugin of each name.
func dedupeByName(plugins []any) []any {
	seen := map[string]bool{}
	var out []any
	for _, p := range plugins {
		name := p.(map[string]any)["name"].(string)
		if !seen[name] {
			seen[name] = true
			out = append(out, p)
		}
	}
	return out
}

// TestConfiguredProfilesMatchUpstream builds, for generated
// configurations, upstream's framework from its own decoding of the YAML
// and kubesched's with LoadConfig and FrameworksFromConfig, and compares
// their decisions on generated scenarios: feasibility, the rejecting
// plugin and its reasons, and every plugin's score.
func TestConfiguredProfilesMatchUpstream(t *testing.T) {
	t.Parallel()
	const configs, scenarios = 80, 25
	compared, unpaired, failed := 0, 0, 0
	for c := range uint64(configs) {
		data := generateSchedulingConfig(rand.New(rand.NewPCG(c, 0xc0de)))
		verdict, err := upstream.JudgeConfig(data)
		if err != nil {
			t.Fatalf("config %d: %v", c, err)
		}
		if verdict.DecodeError != "" || verdict.InvalidText != "" {
			t.Fatalf("config %d: upstream refuses it: %s%s\n%s", c, verdict.DecodeError, verdict.InvalidText, data)
		}
		cfg, err := ours.LoadConfig(data)
		if err != nil {
			t.Fatalf("config %d: LoadConfig: %v\n%s", c, err, data)
		}
		if bytes.Contains(data, []byte("preFilter:")) || bytes.Contains(data, []byte("preScore:")) {
			unpaired++
		}
		for i := range uint64(scenarios) {
			s := generate(7000000+c*1000+i, true)
			want, err := upstream.RunConfigured(context.Background(), data, s)
			if isPluginInit(err) {
				// A plugin refused its args; FrameworksFromConfig's
				// refusal is compared with upstream's elsewhere.
				break
			}
			if err != nil {
				t.Fatalf("config %d, seed %d: oracle: %v", c, s.Seed, err)
			}
			fws, err := ours.FrameworksFromConfig(cfg, framework.WithObjects(schedulingObjects(s.Objects)...))
			if err != nil {
				t.Fatalf("config %d: FrameworksFromConfig: %v\n%s", c, err, data)
			}
			got, err := fws["configured"].Schedule(context.Background(), s.Pod, nodeinfo.Build(s.Nodes, s.Pods))
			if len(want.Errors) > 0 {
				failed++
			}
			if diffs := diffResults(s, want, got, err); len(diffs) > 0 {
				t.Errorf("config %d, seed %d: %d disagreement(s):\n%s\nconfig:\n%s", c, s.Seed, len(diffs), formatDiffs(diffs, 10), data)
			}
			compared++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d scenarios under %d configurations agree, %d of the configurations with a phase disabled and not its partner; upstream failed %d of the scenarios with an error", compared, configs, unpaired, failed)
	if unpaired < configs/5 || failed == 0 {
		t.Errorf("the generator drifted: %d configurations disable a PreFilter or PreScore, %d scenarios fail upstream", unpaired, failed)
	}
}

// isPluginInit reports whether err is a plugin refusing its args.
func isPluginInit(err error) bool {
	return err != nil && strings.Contains(err.Error(), "initializing plugin")
}
