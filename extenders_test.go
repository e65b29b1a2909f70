package kubesched_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// withExtenders is the default profile with the extenders cfgs, built as
// kube-scheduler builds a configuration that lists them.
func withExtenders(cfgs []configv1.Extender) (*framework.Framework, error) {
	fws, err := kubesched.FrameworksFromConfig(&configv1.KubeSchedulerConfiguration{Extenders: cfgs})
	if err != nil {
		return nil, err
	}
	return fws["default-scheduler"], nil
}

func TestExtendersIgnoredBySchedulerAreNotCheckedByNodeResourcesFit(t *testing.T) {
	t.Parallel()
	const gpu = "example.com/gpu"
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("10"),
	}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{gpu: resource.MustParse("1")}},
	}}}}
	for _, ignored := range []bool{true, false} {
		// A binder only: scheduling makes no call to it.
		f, err := withExtenders([]configv1.Extender{{
			URLPrefix: "http://127.0.0.1:1", BindVerb: "bind",
			ManagedResources: []configv1.ExtenderManagedResource{{Name: gpu, IgnoredByScheduler: ignored}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.Schedule(context.Background(), pod, nodeinfo.Build([]*v1.Node{node}, nil))
		switch {
		case ignored && (err != nil || res.SuggestedHost != "n1"):
			t.Errorf("ignored: %v, %v; want n1", res, err)
		case !ignored && (err == nil || err.Error() != "0/1 nodes are available: 1 Insufficient example.com/gpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."):
			t.Errorf("checked: err = %v, want Insufficient example.com/gpu", err)
		}
	}
}

func TestAConfigurationsExtendersAreCheckedAsKubeSchedulerChecksThem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfgs []configv1.Extender
		want string
	}{
		{"two binders", []configv1.Extender{{URLPrefix: "http://a", BindVerb: "bind"}, {URLPrefix: "http://b", BindVerb: "bind"}}, "only one extender can implement bind"},
		{"a bad weight", []configv1.Extender{{URLPrefix: "http://a"}, {URLPrefix: "http://b", PrioritizeVerb: "p"}}, "extenders[1].weight"},
		{"a bad TLS configuration", []configv1.Extender{{URLPrefix: "https://a", TLSConfig: &configv1.ExtenderTLSConfig{Insecure: true, CAData: []byte("x")}}}, "insecure flag is not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := withExtenders(tc.cfgs); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The seed's configuration, as a ConfigMap would hold it.
const seedConfig = `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: i-scheduler-extender
leaderElection:
  leaderElect: false
extenders:
- urlPrefix: "http://localhost:8080"
  enableHTTPS: false
  filterVerb: "filter_onlyone"
  prioritizeVerb: "prioritize"
  bindVerb: "bind"
  weight: 1
  nodeCacheCapable: true
  httpTimeout: 30s
  managedResources:
  - name: nvidia.com/gpu
    ignoredByScheduler: true
`

func TestAKubeSchedulerConfigurationsExtendersBuildAFramework(t *testing.T) {
	t.Parallel()
	var cfg configv1.KubeSchedulerConfiguration
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(seedConfig), 4096).Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Extenders) != 1 || cfg.Extenders[0].HTTPTimeout.Duration != 30*time.Second || !cfg.Extenders[0].ManagedResources[0].IgnoredByScheduler {
		t.Fatalf("decoded %+v", cfg.Extenders)
	}
	if _, err := withExtenders(cfg.Extenders); err != nil {
		t.Fatal(err)
	}
	loaded, err := kubesched.LoadConfig([]byte(seedConfig))
	if err != nil {
		t.Fatal(err)
	}
	fws, err := kubesched.FrameworksFromConfig(loaded)
	if err != nil || fws["i-scheduler-extender"] == nil || len(fws) != 1 {
		t.Fatalf("FrameworksFromConfig = %v, %v; want the profile i-scheduler-extender", fws, err)
	}
}

func TestAPreemptingExtenderChoosesAmongDefaultPreemptionsCandidates(t *testing.T) {
	t.Parallel()
	newNode := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("2"), v1.ResourcePods: resource.MustParse("10"),
		}}}
	}
	newPod := func(name, node, cpu string, priority int32) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: v1.PodSpec{NodeName: node, Priority: &priority, Containers: []v1.Container{{
				Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
			}}},
		}
	}
	// Both nodes are full; evicting a from n1, or b1 and b2 from n2, makes
	// room. DefaultPreemption alone prefers n1, the node with fewer victims.
	nodes := nodeinfo.Build([]*v1.Node{newNode("n1"), newNode("n2")}, []*v1.Pod{
		newPod("a", "n1", "2", 0), newPod("b1", "n2", "1", 0), newPod("b2", "n2", "1", 0),
	})
	byName := map[string]*nodeinfo.NodeInfo{}
	for _, ni := range nodes {
		byName[ni.Name()] = ni
	}
	preemptor := newPod("critical", "", "2", 100)

	// preemption returns the nomination and the victims, as names.
	preemption := func(t *testing.T, cfgs []configv1.Extender) (string, []string) {
		t.Helper()
		f, err := withExtenders(cfgs)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Schedule(context.Background(), preemptor, nodes)
		var fitErr *framework.FitError
		if !errors.As(err, &fitErr) || fitErr.Preemption == nil {
			t.Fatalf("Schedule: %v; want a FitError with a Preemption", err)
		}
		var victims []string
		for _, p := range fitErr.Preemption.Victims {
			if ni := byName[fitErr.Preemption.NominatedNodeName]; !slices.ContainsFunc(ni.Pods(), func(pi *nodeinfo.PodInfo) bool { return pi.Pod == p }) {
				t.Errorf("victim %s is not the nominated node's own pod", p.Name)
			}
			victims = append(victims, p.Name)
		}
		return fitErr.Preemption.NominatedNodeName, victims
	}
	if node, victims := preemption(t, nil); node != "n1" || !slices.Equal(victims, []string{"a"}) {
		t.Fatalf("without an extender: %s %v, want n1 [a]", node, victims)
	}

	tests := []struct {
		name         string
		cacheCapable bool
	}{
		{"an extender sent whole pods", false},
		{"a node cache capable extender sent UIDs", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked, given []string
			// The extender accepts n2 alone, with its victims in an order
			// of its own.
			onlyN2 := func(_ context.Context, _ *v1.Pod, victims map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
				mu.Lock()
				asked = slices.Sorted(maps.Keys(victims))
				mu.Unlock()
				v := victims["n2"]
				if v == nil || len(v.Pods) != 2 {
					return nil, fmt.Errorf("n2's victims are %v, want b1 and b2", v)
				}
				given = []string{v.Pods[0].Name, v.Pods[1].Name}
				return map[string]*extenderv1.Victims{"n2": {Pods: []*v1.Pod{v.Pods[1], v.Pods[0]}}}, nil
			}
			h, err := server.New(server.Preempt("preempt", onlyN2), server.WithNodes(func(_ context.Context, name string) (*nodeinfo.NodeInfo, error) {
				if ni, ok := byName[name]; ok {
					return ni, nil
				}
				return nil, fmt.Errorf("no node %q", name)
			}))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)

			node, victims := preemption(t, []configv1.Extender{{URLPrefix: srv.URL, PreemptVerb: "preempt", NodeCacheCapable: tc.cacheCapable}})
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(asked, []string{"n1", "n2"}) || len(given) != 2 {
				t.Fatalf("the extender was asked about %v, want both candidates", asked)
			}
			if want := []string{given[1], given[0]}; node != "n2" || !slices.Equal(victims, want) {
				t.Errorf("preemption %s %v, want n2 %v, the extender's answer", node, victims, want)
			}
		})
	}
}
