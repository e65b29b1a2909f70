package main

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/queue"
)

func testNode(name, cpu string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
}

func testPod(name, cpu, scheduler string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{SchedulerName: scheduler, Containers: []v1.Container{{
			Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

// newFakeCluster returns a fake clientset holding objs whose pods/binding
// subresource binds the pod, as the API server does.
func newFakeCluster(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	pods := v1.SchemeGroupVersion.WithResource("pods")
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		obj, err := client.Tracker().Get(pods, b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		pod.Spec.NodeName = b.Target.Name
		return true, b, client.Tracker().Update(pods, pod, b.Namespace)
	})
	return client
}

// versioned makes client give the objects of resources a new
// resourceVersion with each create and update (of the status too),
// refuse with a conflict an update of another version than the stored
// one, and name one created with a generateName alone (and give it a
// UID), as the API server does; the fake does none of it. The controller
// waits for its informers to show what it wrote, which it tells by the
// version.
func versioned(client *fake.Clientset, resources ...schema.GroupVersionResource) *fake.Clientset {
	var version atomic.Int64
	version.Store(100)
	for _, gvr := range resources {
		for _, verb := range []string{"create", "update"} {
			client.PrependReactor(verb, gvr.Resource, func(action clienttesting.Action) (bool, runtime.Object, error) {
				if sub := action.GetSubresource(); sub != "" && sub != "status" {
					return false, nil, nil
				}
				obj := action.(interface{ GetObject() runtime.Object }).GetObject().DeepCopyObject()
				meta := obj.(metav1.Object)
				if rv := meta.GetResourceVersion(); verb == "update" && rv != "" {
					stored, err := client.Tracker().Get(gvr, meta.GetNamespace(), meta.GetName())
					if err == nil && stored.(metav1.Object).GetResourceVersion() != rv {
						return true, nil, apierrors.NewConflict(gvr.GroupResource(), meta.GetName(), errors.New("the object has been modified"))
					}
				}
				v := version.Add(1)
				meta.SetResourceVersion(strconv.FormatInt(v, 10))
				var err error
				if verb == "create" {
					if meta.GetName() == "" && meta.GetGenerateName() != "" {
						meta.SetName(meta.GetGenerateName() + strconv.FormatInt(v, 36))
						meta.SetUID(types.UID("uid-" + meta.GetName()))
					}
					err = client.Tracker().Create(gvr, obj, meta.GetNamespace())
				} else {
					err = client.Tracker().Update(gvr, obj, meta.GetNamespace())
				}
				if err != nil {
					return true, nil, err
				}
				return true, obj, nil
			})
		}
	}
	return client
}

// startController runs ctrl until t ends, failing t if Run fails, and
// returns the context it runs under.
func startController(t *testing.T, ctrl *Controller) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- ctrl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	})
	return ctx
}

// podGetter returns a function reading the pod called name, in the
// namespace default, from client, which fails t if it cannot.
func podGetter(ctx context.Context, t *testing.T, client *fake.Clientset) func(name string) *v1.Pod {
	return func(name string) *v1.Pod {
		t.Helper()
		p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// eventually polls cond until it holds. Informers deliver events on
// their own goroutines, so the test waits for state rather than time;
// the deadline only guards against a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestControllerSchedulesBindsAndRequeues(t *testing.T) {
	t.Parallel()
	gated := testPod("gated", "100m", "kubesched")
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	client := newFakeCluster(
		testNode("small", "1"), testNode("big", "4"),
		testPod("web", "500m", "kubesched"),
		testPod("batch", "3", "kubesched"),
		testPod("huge", "8", "kubesched"),
		testPod("theirs", "100m", "default-scheduler"),
		gated,
	)
	ctrl, err := New(client, Config{SchedulerName: "kubesched", QueueOptions: fakeClockQueue()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)

	get := func(name string) *v1.Pod {
		pod, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pod
	}
	nodeOf := func(name string) string { return get(name).Spec.NodeName }

	eventually(t, "web and batch are bound", func() bool { return nodeOf("web") != "" && nodeOf("batch") != "" })
	if got := nodeOf("batch"); got != "big" {
		t.Errorf("batch (3 cpu) went to %q, want big", got)
	}

	eventually(t, "huge is marked unschedulable", func() bool {
		for _, c := range get("huge").Status.Conditions {
			if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonUnschedulable {
				return strings.HasPrefix(c.Message, "0/2 nodes are available") && strings.Contains(c.Message, "Insufficient cpu")
			}
		}
		return false
	})
	if _, err := client.CoreV1().Nodes().Create(ctx, testNode("giant", "16"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "huge is bound once a node fits it", func() bool { return nodeOf("huge") == "giant" })

	if got := nodeOf("gated"); got != "" {
		t.Errorf("a gated pod was bound to %s", got)
	}
	ungated := get("gated")
	ungated.Spec.SchedulingGates = nil
	ungated.ResourceVersion = "ungated"
	if _, err := client.CoreV1().Pods("default").Update(ctx, ungated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "gated is bound once its gate is removed", func() bool { return nodeOf("gated") != "" })

	if got := nodeOf("theirs"); got != "" {
		t.Errorf("a pod for another scheduler was bound to %s", got)
	}
	// The cache holds what the API server holds: every bound pod, no
	// assumed pod left over.
	eventually(t, "the cache has confirmed every binding", func() bool {
		for _, name := range []string{"web", "batch", "huge", "gated"} {
			if assumed, _ := ctrl.cache.IsAssumedPod(get(name)); assumed {
				return false
			}
		}
		return ctrl.cache.PodCount() == 4
	})

	if err := client.CoreV1().Pods("default").Delete(ctx, "batch", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache forgets a deleted pod", func() bool { return ctrl.cache.PodCount() == 3 })
}

func TestNewRefusesAConfigItCannotServe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// config is a KubeSchedulerConfiguration's body for
		// Config.SchedulerConfig; "" for none.
		config        string
		schedulerName string
		wantErr       string
	}{
		{name: "a config that names no scheduler is refused", wantErr: "no scheduler name"},
		{
			name:          "a config with both a scheduler name and a scheduler configuration is refused",
			config:        "profiles:\n- schedulerName: a\n",
			schedulerName: "kubesched",
			wantErr:       `Config.SchedulerName "kubesched" and Config.SchedulerConfig both name schedulers`,
		},
		{
			name:    "a profile kubesched cannot build is refused with its error",
			config:  "profiles:\n- schedulerName: a\n  plugins:\n    filter:\n      enabled: [{name: Mine}]\n",
			wantErr: `initializing profiles: creating profile for scheduler name a: FilterPlugin "Mine" does not exist`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{SchedulerName: tt.schedulerName}
			if tt.config != "" {
				cfg.SchedulerConfig = loadTestConfig(t, tt.config)
			}
			_, err := New(fake.NewClientset(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New: %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestControllerRecordsEventsAsKubeScheduler(t *testing.T) {
	t.Parallel()
	client := newFakeCluster(testNode("small", "1"), testPod("web", "500m", "kubesched"), testPod("huge", "8", "kubesched"))
	// Events go through a client of their own, as kube-scheduler's, to
	// events.k8s.io/v1 where the server has it, as a real one does.
	eventClient := fake.NewClientset()
	eventClient.Resources = []*metav1.APIResourceList{{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "events", Namespaced: true, Kind: "Event"}}}}
	ctrl, err := New(client, Config{SchedulerName: "kubesched", EventClient: eventClient})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)

	type event struct{ pod, typ, reason, action, note, controller string }
	want := []event{
		{"web", v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned default/web to small", "kubesched"},
		{"huge", v1.EventTypeWarning, "FailedScheduling", "Scheduling",
			"0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", "kubesched"},
	}
	var got []event
	eventually(t, "both events are recorded", func() bool {
		list, err := eventClient.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range list.Items {
			got = append(got, event{e.Regarding.Name, e.Type, e.Reason, e.Action, e.Note, e.ReportingController})
		}
		return len(got) >= len(want)
	})
	slices.SortFunc(got, func(a, b event) int { return strings.Compare(b.pod, a.pod) })
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	if list, _ := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{}); len(list.Items) > 0 {
		t.Errorf("%d events went through the scheduling client", len(list.Items))
	}
}

func TestTruncateNoteCutsAsKubeScheduler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"a short message is kept", "0/3 nodes are available", len("0/3 nodes are available")},
		{"a message at the limit is kept", strings.Repeat("x", 1024), 1024},
		{"a longer one is cut to the limit with an ellipsis", strings.Repeat("x", 2000), 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := truncateNote(tt.in)
			if len(got) != tt.want {
				t.Errorf("len = %d, want %d", len(got), tt.want)
			}
			if len(tt.in) > 1024 && !strings.HasSuffix(got, " ...") {
				t.Errorf("cut message ends %q, want \" ...\"", got[len(got)-8:])
			}
		})
	}
}

// fakeClockQueue is a test controller's queue options: a fake clock
// standing still, so that no backoff ends and no flush happens unless
// the test moves it.
func fakeClockQueue() []queue.Option {
	return []queue.Option{queue.WithClock(testingclock.NewFakeClock(time.Unix(0, 0)))}
}

// closeOnce returns a function that closes ch the first time it is
// called, and calls it when t ends, so that whatever waits on ch is let
// go before the test's other cleanups run.
func closeOnce(t *testing.T, ch chan struct{}) func() {
	var once sync.Once
	f := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(f)
	return f
}
