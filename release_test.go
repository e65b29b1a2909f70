package kubesched_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/queue"
)

func mustRelease(t *testing.T, version string) *kubesched.Release {
	t.Helper()
	r, err := kubesched.ReleaseFor(version)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReleasesAreNewestFirstAndTheTopLevelFunctionsAreTheNewest(t *testing.T) {
	t.Parallel()
	rs := kubesched.Releases()
	if len(rs) < 2 || rs[0].Version() != "v1.37.2" || rs[1].Version() != "v1.36.3" {
		t.Fatalf("Releases() = %v, want v1.37.2 then v1.36.3", rs)
	}
	if got, want := pluginNames(kubesched.DefaultPlugins()), pluginNames(rs[0].DefaultPlugins()); got != want {
		t.Errorf("DefaultPlugins() = %s, the newest release's %s", got, want)
	}
	if mustRelease(t, "1.37") != rs[0] || mustRelease(t, "v1.36.3") != rs[1] {
		t.Error("ReleaseFor does not return the listed releases")
	}
	if _, err := kubesched.ReleaseFor("1.33"); err == nil || !strings.Contains(err.Error(), "v1.37.2, v1.36.3") {
		t.Errorf("ReleaseFor(1.33) = %v, want an error naming the supported releases", err)
	}
}

// pluginNames lists a profile's parts by name, with weights for score parts.
func pluginNames(ps kubesched.Plugins) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Plugin.Name())
	}
	return strings.Join(out, " ")
}

func TestAReleasesDefaultProfileIsInItsOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ version, first string }{
		{"1.37", "SchedulingGates NodeName NodeUnschedulable"},
		{"1.36", "SchedulingGates NodeUnschedulable NodeName"},
	} {
		if got := pluginNames(mustRelease(t, tc.version).DefaultPlugins()); !strings.HasPrefix(got, tc.first+" ") {
			t.Errorf("%s's default plugins = %s, want them to start %s", tc.version, got, tc.first)
		}
	}
}

func TestEachReleaseDecidesAsItsKubeScheduler(t *testing.T) {
	t.Parallel()
	nodes := nodeinfo.Build([]*v1.Node{explainNode("a", 4, 8, nil), explainNode("b", 4, 8, nil)}, nil)
	named := explainPod("p", "5", "1Gi", 0)
	named.Spec.NodeName = "a"
	for _, tc := range []struct{ version, want string }{
		// v1.37's NodeName PreFilter leaves b out before any filter runs,
		// and DynamicResources' PostFilter says nothing for a pod without
		// claims.
		{"1.37", "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeName]."},
		{"1.36", "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match the requested node name. no new claims to deallocate"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			f, err := mustRelease(t, tc.version).DefaultFramework(framework.WithoutPreemption())
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Schedule(context.Background(), named, nodes)
			var fe *framework.FitError
			if !errors.As(err, &fe) || fe.Error() != tc.want {
				t.Errorf("Schedule = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEachReleaseLoadsAConfigurationAsItsKubeScheduler(t *testing.T) {
	t.Parallel()
	shaped := []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}
`)
	if _, err := mustRelease(t, "1.37").LoadConfig(shaped); err != nil {
		t.Errorf("v1.37 (StorageCapacityScoring on) refuses a shape: %v", err)
	}
	_, err := mustRelease(t, "1.36").LoadConfig(shaped)
	if err == nil || !strings.Contains(err.Error(), "turn on the feature gate StorageCapacityScoring") {
		t.Errorf("v1.36 LoadConfig = %v, want the shape refused", err)
	}
	cfg, err := mustRelease(t, "1.36").LoadConfig([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Profiles[0].Plugins.MultiPoint.Enabled[2].Name; got != "NodeUnschedulable" {
		t.Errorf("v1.36's defaulted profile has %s third, want NodeUnschedulable", got)
	}
	fws, err := mustRelease(t, "1.36").FrameworksFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fws[v1.DefaultSchedulerName]; !ok {
		t.Errorf("FrameworksFromConfig = %v, want the default profile", fws)
	}
}

func TestAReleasesPluginEventsAreItsDefaultPluginsRegistrations(t *testing.T) {
	t.Parallel()
	// Every default plugin that rejects or gates pods registers; the
	// score-only ones (ImageLocality, NodeResourcesBalancedAllocation)
	// and PrioritySort do not.
	registering := []string{"DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
		"NodeDeclaredFeatures", "NodeName", "NodePorts", "NodeResourcesFit", "NodeUnschedulable",
		"NodeVolumeLimits", "PodTopologySpread", "SchedulingGates", "TaintToleration", "VolumeBinding",
		"VolumeRestrictions", "VolumeZone"}
	labels := func(pe fwk.PluginEvents, plugin string) string {
		var out []string
		for _, e := range pe[plugin] {
			out = append(out, e.Event.Label())
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		release, nodePorts string
	}{
		{release: "1.37", nodePorts: "AssignedPodDelete NodeAdd"},
		{release: "1.36", nodePorts: "PodDelete NodeAdd"},
	}
	for _, tc := range tests {
		t.Run("v"+tc.release+" registers its default plugins' events", func(t *testing.T) {
			pe := mustRelease(t, tc.release).PluginEvents(fwk.Listers{})
			if got := slices.Sorted(maps.Keys(pe)); !slices.Equal(got, registering) {
				t.Errorf("registered plugins %v, want %v", got, registering)
			}
			if got := labels(pe, "NodePorts"); got != tc.nodePorts {
				t.Errorf("NodePorts registers %q, want %q", got, tc.nodePorts)
			}
		})
	}
}

func TestQueueOptionsGiveTheQueueTheReleasesGatesAndHints(t *testing.T) {
	t.Parallel()
	gated := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gated", Namespace: "default", UID: "gated"},
		Spec: v1.PodSpec{SchedulingGates: []v1.PodSchedulingGate{{Name: "wait"}}}}
	tests := []struct {
		name      string
		opts      []queue.Option
		wantGated bool
	}{
		{name: "a queue with QueueOptions holds a gated pod back", opts: kubesched.QueueOptions(fwk.Listers{}), wantGated: true},
		{name: "a queue with v1.36's holds it back too", opts: mustRelease(t, "1.36").QueueOptions(fwk.Listers{}), wantGated: true},
		{name: "a queue without runs no PreEnqueue plugin", opts: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := queue.New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Add(gated); err != nil {
				t.Fatal(err)
			}
			if got := len(q.UnschedulablePods()) == 1 && len(q.PodsInActiveQ()) == 0; got != tc.wantGated {
				t.Errorf("gated: %v, want %v (active %d, unschedulable %d)", got, tc.wantGated, len(q.PodsInActiveQ()), len(q.UnschedulablePods()))
			}
		})
	}
}
