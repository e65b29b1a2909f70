package framework_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// rackFilter is a user's own filter: pods labelled with a rack only fit
// nodes in that rack.
type rackFilter struct{}

func (rackFilter) Name() string { return "Rack" }

func (rackFilter) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *framework.Status {
	want, ok := pod.Labels["rack"]
	if !ok || ni.Node().Labels["rack"] == want {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) in another rack")
}

// A framework built from a single custom filter.
func ExampleNew() {
	f, err := framework.New(framework.WithPlugin(rackFilter{}, 0))
	if err != nil {
		fmt.Println(err)
		return
	}
	node := func(name, rack string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rack": rack}}}
	}
	nodes := nodeinfo.Build([]*v1.Node{node("n1", "r1"), node("n2", "r2")}, nil)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"rack": "r2"}}}

	res, err := f.Schedule(context.Background(), pod, nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost, res.Diagnosis.NodeToStatus["n1"])
	// Output: n2 UnschedulableAndUnresolvable (Rack): node(s) in another rack
}

// A StateKey gives a plugin a typed per-pod slot: written once in
// PreFilter or PreScore, read for every node.
func ExampleStateKey() {
	key := framework.NewStateKey[[]string]()
	state := framework.NewCycleState(nil)
	key.Write(state, []string{"computed", "once"})
	v, ok := key.Read(state)
	fmt.Println(v, ok)
	_, ok = key.Read(nil)
	fmt.Println(ok)
	// Output:
	// [computed once] true
	// false
}
