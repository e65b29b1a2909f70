package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		wantConn connection
		wantRest []string
		wantErr  string
	}{
		{name: "a pod named as kubectl names it, in a namespace", args: []string{"explain", "pod/web", "-n", "prod"},
			wantConn: connection{namespace: "prod"}, wantRest: []string{"explain", "--pod", "web"}},
		{name: "a bare name is a pod, flags keep their values", args: []string{"explain", "-o", "json", "web", "--max-nodes=0"},
			wantRest: []string{"explain", "-o", "json", "--max-nodes=0", "--pod", "web"}},
		{name: "the connection flags are the plugin's", args: []string{"place", "--kubeconfig=/k", "--context", "staging", "--namespace=ns", "-q"},
			wantConn: connection{kubeconfig: "/k", context: "staging", namespace: "ns"}, wantRest: []string{"place", "-q"}},
		{name: "every namespace is the default already", args: []string{"explain", "-A"}, wantRest: []string{"explain"}},
		{name: "another kind is refused", args: []string{"explain", "deployment/web"}, wantErr: "explain explains pods"},
		{name: "a connection flag needs its value", args: []string{"explain", "-n"}, wantErr: "-n needs a value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, rest, err := parseArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || conn != tc.wantConn || !slices.Equal(rest, tc.wantRest) {
				t.Errorf("parseArgs = %+v, %q, %v; want %+v, %q", conn, rest, err, tc.wantConn, tc.wantRest)
			}
		})
	}
}

// TestTheRoleGrantsReadingWhatThePluginLists: rbac.yaml grants get and
// list on exactly the kinds the plugin lists, and nothing else.
func TestTheRoleGrantsReadingWhatThePluginLists(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	var granted []string
	for _, r := range role.Rules {
		if !slices.Equal(r.Verbs, []string{"get", "list"}) || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("rule %+v grants more than get and list", r)
		}
		granted = append(granted, r.Resources...)
	}
	var listed []string
	for _, k := range kinds {
		listed = append(listed, k.resource)
	}
	slices.Sort(granted)
	slices.Sort(listed)
	if !slices.Equal(granted, listed) {
		t.Errorf("the role grants %v; the plugin lists %v", granted, listed)
	}
}

func node(name, cpu string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
	}}}
}

func pod(namespace, name, cpu string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name), ResourceVersion: "1"},
		Spec: v1.PodSpec{SchedulerName: v1.DefaultSchedulerName, Containers: []v1.Container{{Name: "c", Image: "i", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		}}}}}
}

// TestExplainReadsTheClusterThroughTheAPI explains pods of a fake API
// server's cluster, as on a dump of it; DeviceTaintRules, which an older
// cluster does not serve, are left out with a note.
func TestExplainReadsTheClusterThroughTheAPI(t *testing.T) {
	t.Parallel()
	objs := []runtime.Object{
		node("small", "2"), node("big", "8"),
		pod("prod", "web", "4"), pod("prod", "huge", "16"),
		&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu", ResourceVersion: "1"}},
	}
	client := fake.NewClientset(objs...)
	client.PrependReactor("list", "devicetaintrules", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(resourceapi.Resource("devicetaintrules"), "")
	})
	connect := func() (kubernetes.Interface, error) { return client, nil }
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{name: "a pod that fits", args: []string{"explain", "-q", "--namespace", "prod", "--pod", "web"}, wantCode: 0,
			want: []string{"Pod prod/web", "binds it to big"}},
		{name: "a pod that fits nowhere", args: []string{"explain", "-q", "--namespace", "prod", "--pod", "huge"}, wantCode: 1,
			want: []string{"0/2 nodes are available: 2 Insufficient cpu."}},
		{name: "every pending pod placed", args: []string{"place", "-q"}, wantCode: 1,
			want: []string{"Placed 1 of 2 pending pods", "prod/web   big"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut strings.Builder
			code := command(connect, &errOut).Run(context.Background(), tc.args, strings.NewReader(""), &out, &errOut)
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d; stderr %s", code, tc.wantCode, errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the output lacks %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), "the cluster serves no devicetaintrules; read without them") {
				t.Errorf("stderr %q; want the missing kind noted", errOut.String())
			}
		})
	}
}
