package filter_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestNodeDeclaredFeatures(t *testing.T) {
	t.Parallel()
	restartAll := v1.PodSpec{Containers: []v1.Container{{Name: "c", RestartPolicyRules: []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}}}}
	hostUsers := false
	userNSHostNet := v1.PodSpec{HostNetwork: true, HostUsers: &hostUsers, Containers: []v1.Container{{Name: "c"}}}
	tests := []struct {
		name     string
		spec     v1.PodSpec
		declared []string
		wantSkip bool
		want     string // Filter's status as a string; empty for nil
	}{
		{name: "a pod that needs no feature is skipped", spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}, wantSkip: true},
		{name: "a host-network pod with host users needs no feature", spec: v1.PodSpec{HostNetwork: true, Containers: []v1.Container{{Name: "c"}}}, wantSkip: true},
		{name: "restarting all containers needs a node that declares it", spec: restartAll, want: "UnschedulableAndUnresolvable (NodeDeclaredFeatures): node(s) didn't match Pod's required features"},
		{name: "a node declaring the feature fits", spec: restartAll, declared: []string{"RestartAllContainersOnContainerExits"}},
		{name: "unknown declared features are ignored", spec: restartAll, declared: []string{"Aardvark", "RestartAllContainersOnContainerExits", "Zebra"}},
		{name: "a user namespace in the host network needs its feature", spec: userNSHostNet, declared: []string{"RestartAllContainersOnContainerExits"}, want: "UnschedulableAndUnresolvable (NodeDeclaredFeatures): node(s) didn't match Pod's required features"},
		{name: "a node declaring both fits either", spec: userNSHostNet, declared: []string{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: tc.spec}
			ni := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{DeclaredFeatures: tc.declared}})
			pl := &filter.NodeDeclaredFeatures{}
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{ni})
			_, s := pl.PreFilter(context.Background(), state, pod, state.AllNodes())
			if s.IsSkip() != tc.wantSkip || (!tc.wantSkip && !s.IsSuccess()) {
				t.Fatalf("PreFilter = %v, want skip %v", s, tc.wantSkip)
			}
			if tc.wantSkip {
				return
			}
			got := ""
			if s := pl.Filter(context.Background(), state, pod, ni); s != nil {
				got = s.String()
			}
			if got != tc.want {
				t.Errorf("Filter = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNodeDeclaredFeaturesFilterWithoutPreFilterIsAnError(t *testing.T) {
	t.Parallel()
	ni := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	s := (&filter.NodeDeclaredFeatures{}).Filter(context.Background(), fwk.NewCycleState(nil), &v1.Pod{}, ni)
	if s.Code() != fwk.Error {
		t.Errorf("Filter = %v, want Error", s)
	}
}
