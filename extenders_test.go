package kubesched_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/nodeinfo"
)

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
		f, err := kubesched.DefaultFrameworkWithExtenders([]configv1.Extender{{
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
		case !ignored && (err == nil || err.Error() != "0/1 nodes are available: 1 Insufficient example.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."):
			t.Errorf("checked: err = %v, want Insufficient example.com/gpu", err)
		}
	}
}

func TestDefaultFrameworkWithExtendersSaysWhichExtenderIsWrong(t *testing.T) {
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
			if _, err := kubesched.DefaultFrameworkWithExtenders(tc.cfgs); err == nil || !strings.Contains(err.Error(), tc.want) {
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
	if _, err := kubesched.DefaultFrameworkWithExtenders(cfg.Extenders); err != nil {
		t.Fatal(err)
	}
}
