package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched"
)

// configHeader starts every KubeSchedulerConfiguration of the tests.
const configHeader = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// loadTestConfig loads the KubeSchedulerConfiguration whose body is body,
// as the controller's -config does.
func loadTestConfig(t *testing.T, body string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := kubesched.LoadConfig([]byte(configHeader + body))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return cfg
}

// withMemory makes pod request memory too.
func withMemory(pod *v1.Pod, memory string) *v1.Pod {
	pod.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(memory)
	return pod
}

func tainted(node *v1.Node) *v1.Node {
	node.Spec.Taints = []v1.Taint{{Key: "example.com/reserved", Effect: v1.TaintEffectNoSchedule}}
	return node
}

// testConfig is a controller Config serving the profiles of the
// KubeSchedulerConfiguration whose body is body.
func testConfig(t *testing.T, body string) Config {
	t.Helper()
	return Config{
		SchedulerConfig: loadTestConfig(t, body),
		QueueOptions:    fakeClockQueue(),
	}
}

func TestControllerSchedulesEachPodWithItsProfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		objs   []runtime.Object
		pods   []*v1.Pod
		// want maps each pod to the node it is bound to; "" for a pod
		// the controller must leave alone.
		want map[string]string
	}{
		{
			// Half of busy is in use. Pods request CPU and memory in
			// the nodes' proportions, so that only NodeResourcesFit's
			// strategy tells the nodes apart.
			name: "the default profile spreads its pod to the idle node and a MostAllocated profile packs its pod onto the busy one",
			config: "profiles:\n- schedulerName: spread\n- schedulerName: packing\n  pluginConfig:\n  - name: NodeResourcesFit\n" +
				"    args: {scoringStrategy: {type: MostAllocated}}\n",
			objs: []runtime.Object{
				testNode("busy", "4"), testNode("idle", "4"),
				withMemory(boundPod("running", "2", "busy"), "4Gi"),
			},
			pods: []*v1.Pod{
				withMemory(testPod("spread-me", "1", "spread"), "2Gi"),
				withMemory(testPod("pack-me", "1", "packing"), "2Gi"),
				testPod("theirs", "100m", "default-scheduler"),
				// The default -scheduler-name is no profile of the file.
				testPod("unnamed", "100m", "kubesched"),
			},
			want: map[string]string{"spread-me": "idle", "pack-me": "busy", "theirs": "", "unnamed": ""},
		},
		{
			// Only small fits the default profile's pod; the other
			// profile's pod prefers the emptier tainted node.
			name: "a profile without TaintToleration places its pod on the tainted node the default profile keeps its pod off",
			config: "profiles:\n- schedulerName: spread\n- schedulerName: tolerant\n" +
				"  plugins:\n    multiPoint:\n      disabled: [{name: TaintToleration}]\n",
			objs: []runtime.Object{testNode("small", "1"), tainted(testNode("reserved", "4"))},
			pods: []*v1.Pod{testPod("spread-me", "500m", "spread"), testPod("tolerate-me", "500m", "tolerant")},
			want: map[string]string{"spread-me": "small", "tolerate-me": "reserved"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs := slices.Clone(tt.objs)
			for _, p := range tt.pods {
				objs = append(objs, p)
			}
			client := newFakeCluster(objs...)
			runControllerWith(t, client, testConfig(t, tt.config))

			eventually(t, "the profiles' pods are bound", func() bool {
				for name, node := range tt.want {
					if node != "" && getPod(t, client, name).Spec.NodeName == "" {
						return false
					}
				}
				return true
			})
			for name, want := range tt.want {
				if got := getPod(t, client, name).Spec.NodeName; got != want {
					t.Errorf("%s is bound to %q, want %q", name, got, want)
				}
			}
		})
	}
}

// bindingExtender is a scheduler extender whose bind verb binds through
// client, as a real one tells the API server, and remembers the pods it
// bound.
type bindingExtender struct {
	client *fake.Clientset
	mu     sync.Mutex
	bound  map[string]string
}

func (e *bindingExtender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderBindingArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || r.URL.Path != "/bind" {
		http.Error(w, fmt.Sprintf("want a bind call, got %s: %v", r.URL.Path, err), http.StatusBadRequest)
		return
	}
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: args.PodNamespace, Name: args.PodName, UID: args.PodUID},
		Target:     v1.ObjectReference{Kind: "Node", Name: args.Node},
	}
	var res extenderv1.ExtenderBindingResult
	if err := e.client.CoreV1().Pods(args.PodNamespace).Bind(r.Context(), binding, metav1.CreateOptions{}); err != nil {
		res.Error = err.Error()
	} else {
		e.mu.Lock()
		e.bound[args.PodName] = args.Node
		e.mu.Unlock()
	}
	if err := json.NewEncoder(w).Encode(res); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (e *bindingExtender) boundBy(pod string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bound[pod]
}

func TestControllerBindsThroughTheConfigurationsBindingExtender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// managed is the extender's managedResources entry, "" for none:
		// then it is interested in every pod.
		managed string
		// wantByExtender is whether the extender, not the controller,
		// binds the pod.
		wantByExtender bool
	}{
		{name: "an extender with a bindVerb binds every pod when it manages no resources", wantByExtender: true},
		{
			name:    "a pod that requests none of the binding extender's managed resources is bound through the API",
			managed: "\n  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := newFakeCluster(testNode("node", "2"), testPod("web", "500m", "kubesched"))
			ext := &bindingExtender{client: client, bound: map[string]string{}}
			server := httptest.NewServer(ext)
			t.Cleanup(server.Close)
			runControllerWith(t, client, testConfig(t, fmt.Sprintf(
				"profiles:\n- schedulerName: kubesched\nextenders:\n- urlPrefix: %s\n  bindVerb: bind%s\n", server.URL, tt.managed)))

			eventually(t, "web is bound", func() bool { return getPod(t, client, "web").Spec.NodeName == "node" })
			if got := ext.boundBy("web"); (got == "node") != tt.wantByExtender {
				t.Errorf("the extender bound web to %q; want it to bind web: %t", got, tt.wantByExtender)
			}
			bindings := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
					bindings++
				}
			}
			if bindings != 1 {
				t.Errorf("web was bound %d times, want once", bindings)
			}
		})
	}
}
