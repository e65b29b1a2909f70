package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func inNamespace(p *v1.Pod, namespace string, labels map[string]string) *v1.Pod {
	p.Namespace, p.Labels = namespace, labels
	return p
}

func ownedBy(p *v1.Pod, rs *appsv1.ReplicaSet) *v1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: new(true)}}
	return p
}

func withRequiredPodAffinity(p *v1.Pod, term v1.PodAffinityTerm) *v1.Pod {
	ensureAffinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}
	return p
}

func namespace(name string, labels map[string]string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func service(namespace, name string, selector map[string]string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: v1.ServiceSpec{Selector: selector}}
}

func replicaSet(namespace, name string, selector map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}},
	}
}

// summary is one line per node: the rejecting plugin, or "feasible" and
// PodTopologySpread's weighted score when it scored the node.
func summary(res *OracleResult) string {
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(res.Nodes)) {
		outcome := res.Nodes[name]
		switch spread, ok := outcome.Scores["PodTopologySpread"]; {
		case !outcome.Feasible:
			lines = append(lines, fmt.Sprintf("%s: rejected by %s", name, outcome.Plugin))
		case ok:
			lines = append(lines, fmt.Sprintf("%s: feasible, PodTopologySpread %d", name, spread))
		default:
			lines = append(lines, name+": feasible")
		}
	}
	return strings.Join(lines, "; ")
}

// TestOracleSeesScenarioObjects: upstream's plugins read Namespaces,
// Services and controllers from informers, so the oracle must install a
// scenario's objects before running it, and remove them for the next one.
// Each scenario runs with its objects and then without them.
func TestOracleSeesScenarioObjects(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	web := map[string]string{"app": "web"}
	rs := replicaSet(metav1.NamespaceDefault, "web", web)
	tests := []struct {
		name                 string
		scenario             *Scenario
		withObjects, without string
	}{
		{
			name: "a namespace selector selects pods by their namespace's labels",
			scenario: &Scenario{
				Nodes: []*v1.Node{node("a", 4000), node("b", 4000)},
				Pods:  []*v1.Pod{boundTo(inNamespace(podRequesting("web", 100), "team-a", web), "a")},
				Pod: withRequiredPodAffinity(podRequesting("p", 100), v1.PodAffinityTerm{
					LabelSelector:     &metav1.LabelSelector{MatchLabels: web},
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
					TopologyKey:       v1.LabelHostname,
				}),
				Objects: []runtime.Object{namespace("team-a", map[string]string{"team": "a"})},
			},
			withObjects: "a: feasible; b: rejected by InterPodAffinity",
			without:     "a: rejected by InterPodAffinity; b: rejected by InterPodAffinity",
		},
		{
			name: "a Service selecting the pod makes upstream spread it by default",
			scenario: &Scenario{
				Nodes: []*v1.Node{node("a", 4000), node("b", 4000)},
				Pods: []*v1.Pod{
					boundTo(inNamespace(podRequesting("web-1", 100), metav1.NamespaceDefault, web), "a"),
					boundTo(inNamespace(podRequesting("web-2", 100), metav1.NamespaceDefault, web), "a"),
				},
				Pod:     inNamespace(podRequesting("p", 100), metav1.NamespaceDefault, web),
				Objects: []runtime.Object{service(metav1.NamespaceDefault, "web", web)},
			},
			// The system default constraints spread over hostnames with
			// maxSkew 3 (and over zones, which these nodes lack), so the
			// emptier node wins, but the fuller one is not scored zero.
			withObjects: "a: feasible, PodTopologySpread 80; b: feasible, PodTopologySpread 200",
			without:     "a: feasible; b: feasible",
		},
		{
			name: "so does a ReplicaSet controlling the pod",
			scenario: &Scenario{
				Nodes: []*v1.Node{node("a", 4000), node("b", 4000)},
				Pods: []*v1.Pod{
					boundTo(inNamespace(podRequesting("web-1", 100), metav1.NamespaceDefault, web), "b"),
				},
				Pod:     ownedBy(inNamespace(podRequesting("p", 100), metav1.NamespaceDefault, web), rs),
				Objects: []runtime.Object{rs},
			},
			withObjects: "a: feasible, PodTopologySpread 200; b: feasible, PodTopologySpread 132",
			without:     "a: feasible; b: feasible",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			res, err := testOracle.RunScenario(ctx, tc.scenario)
			if err != nil {
				t.Fatalf("RunScenario: %v", err)
			}
			if got := summary(res); got != tc.withObjects {
				t.Errorf("with the objects:\n  got  %s\n  want %s", got, tc.withObjects)
			}
			res, err = testOracle.Run(ctx, tc.scenario.Nodes, tc.scenario.Pods, tc.scenario.Pod)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := summary(res); got != tc.without {
				t.Errorf("without them:\n  got  %s\n  want %s", got, tc.without)
			}
		})
	}
}

// TestOracleRejectsBadObjects: objects of other kinds, or two with one
// name, are a broken scenario, not an empty cluster.
func TestOracleRejectsBadObjects(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	tests := []struct {
		name    string
		objects []runtime.Object
	}{
		{"a kind the scheduler does not read", []runtime.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "d"}}}},
		{"two Services with one name", []runtime.Object{service("default", "s", nil), service("default", "s", nil)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &Scenario{Nodes: []*v1.Node{node("a", 1000)}, Pod: podRequesting("p", 1), Objects: tc.objects}
			if _, err := testOracle.RunScenario(context.Background(), s); err == nil {
				t.Error("RunScenario returned no error")
			}
		})
	}
}
