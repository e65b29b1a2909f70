package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// An extender served by this package keeps the nodes with a GPU; a
// kubesched framework configured as kube-scheduler would be calls it over
// HTTP after its own filters.
func Example() {
	hasGPU := func(_ context.Context, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
		if ni.Labels()["gpu"] == "true" {
			return nil
		}
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had no GPU")
	}
	h, err := server.New(server.Filter("filter", server.EachNode(hasGPU)))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// The default profile with the extender, as a KubeSchedulerConfiguration
	// listing it makes kube-scheduler call it.
	fws, err := kubesched.FrameworksFromConfig(&configv1.KubeSchedulerConfiguration{
		Extenders: []configv1.Extender{{URLPrefix: srv.URL, FilterVerb: "filter"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	f := fws["default-scheduler"]
	node := func(name string, labels map[string]string) *v1.Node {
		return &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}},
		}
	}
	nodes := nodeinfo.Build([]*v1.Node{node("cpu-1", nil), node("gpu-1", map[string]string{"gpu": "true"})}, nil)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "default"}}

	res, err := f.Schedule(context.Background(), pod, nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost)
	fmt.Println(res.Diagnosis.NodeStatus("cpu-1"))
	// Output:
	// gpu-1
	// UnschedulableAndUnresolvable: node(s) had no GPU
}
