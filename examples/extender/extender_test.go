package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// node is a 4-cpu node; priority "" leaves the label off.
func node(name, priority string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("4"),
			v1.ResourceMemory: resource.MustParse("8Gi"),
			v1.ResourcePods:   resource.MustParse("10"),
		}},
	}
	if priority != "" {
		n.Labels[priorityLabel] = priority
	}
	return n
}

// cluster is n1 without a priority, n2 of priority 3, n3 of 9, n4 of 5.
func cluster() []*nodeinfo.NodeInfo {
	return nodeinfo.Build([]*v1.Node{node("n1", ""), node("n2", "3"), node("n3", "9"), node("n4", "5")}, nil)
}

// pod requests cpu; 3 cpus fill a node.
func pod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

// demo serves the demo extender over loopback. Its node source reads the
// nodes given, as an informer would; calls counts requests by path.
type demo struct {
	*httptest.Server
	calls sync.Map // path -> *atomic.Int64
	bound chan *v1.Binding
}

func startDemo(t *testing.T, nodes []*nodeinfo.NodeInfo, wrap func(http.Handler) http.Handler) *demo {
	t.Helper()
	d := &demo{bound: make(chan *v1.Binding, 10)}
	byName := map[string]*nodeinfo.NodeInfo{}
	for _, ni := range nodes {
		byName[ni.Name()] = ni
	}
	src := func(_ context.Context, name string) (*nodeinfo.NodeInfo, error) {
		if ni, ok := byName[name]; ok {
			return ni, nil
		}
		return nil, errors.New("not in the cache")
	}
	bind := func(_ context.Context, b *v1.Binding) error {
		d.bound <- b
		return nil
	}
	h, err := newHandler(src, bind)
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := d.calls.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		h.ServeHTTP(w, r)
	})
	if wrap != nil {
		handler = wrap(handler)
	}
	d.Server = httptest.NewServer(handler)
	t.Cleanup(d.Close)
	return d
}

func (d *demo) count(path string) int64 {
	n, ok := d.calls.Load(path)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

func newFramework(t *testing.T, cfgs ...configv1.Extender) *framework.Framework {
	t.Helper()
	fws, err := kubesched.FrameworksFromConfig(&configv1.KubeSchedulerConfiguration{Extenders: cfgs},
		framework.WithPercentageOfNodesToScore(100),
		framework.WithRandSource(rand.NewPCG(6, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return fws["default-scheduler"]
}

func TestPodsFillTheNodesInTheOrderOfTheirPriority(t *testing.T) {
	t.Parallel()
	for _, cacheCapable := range []bool{false, true} {
		name := "whole nodes"
		if cacheCapable {
			name = "node names (nodeCacheCapable)"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nodes := cluster()
			d := startDemo(t, nodes, nil)
			f := newFramework(t, configv1.Extender{
				URLPrefix: d.URL, FilterVerb: verbFilter, PrioritizeVerb: verbPrioritize, Weight: 1,
				NodeCacheCapable: cacheCapable,
			})
			byName := map[string]*nodeinfo.NodeInfo{}
			for _, ni := range nodes {
				byName[ni.Name()] = ni
			}
			var placed []string
			for i, want := range []string{"n3", "n4", "n2"} {
				p := pod("p"+string(rune('0'+i)), "3")
				res, err := f.Schedule(context.Background(), p, nodes)
				if err != nil {
					t.Fatalf("pod %d: %v", i, err)
				}
				placed = append(placed, res.SuggestedHost)
				if res.SuggestedHost != want {
					t.Fatalf("placements %v, want n3, n4, n2 (priorities 9, 5, 3)", placed)
				}
				if s := res.Diagnosis.NodeStatus("n1"); s.Code() != fwk.UnschedulableAndUnresolvable || s.Message() != errReasonNoPriority {
					t.Errorf("pod %d: n1 status %v, want the extender's rejection", i, s)
				}
				byName[want].AddPod(p)
			}
			_, err := f.Schedule(context.Background(), pod("last", "3"), nodes)
			var fitErr *framework.FitError
			if !errors.As(err, &fitErr) {
				t.Fatalf("fourth pod: err = %v, want a FitError", err)
			}
			if got, want := fitErr.Error(), "0/4 nodes are available: 1 "+errReasonNoPriority+", 3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			if !fitErr.Diagnosis.UnschedulablePlugins.Has(framework.ExtenderName) {
				t.Errorf("UnschedulablePlugins = %v, want Extender among them", fitErr.Diagnosis.UnschedulablePlugins)
			}
		})
	}
}

func TestTheExtendersScoresAreWeightedAndListedUnderItsURL(t *testing.T) {
	t.Parallel()
	d := startDemo(t, nil, nil)
	f := newFramework(t, configv1.Extender{URLPrefix: d.URL, FilterVerb: verbFilter, PrioritizeVerb: verbPrioritize, Weight: 2})
	res, err := f.Schedule(context.Background(), pod("p", "1"), cluster())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"n2": 60, "n3": 180, "n4": 100} // priority × weight 2 × 10
	for _, ns := range res.NodeScores() {
		last := ns.Scores[len(ns.Scores)-1]
		if last.Name != d.URL || last.Score != want[ns.Name] {
			t.Errorf("%s: last score %+v, want %s=%d", ns.Name, last, d.URL, want[ns.Name])
		}
	}
}

func TestFilterOnlyOneDecidesWhateverThePluginsPrefer(t *testing.T) {
	t.Parallel()
	// The pod prefers n2 (priority 3): NodeAffinity gives it 100 × 2.
	p := pod("p", "1")
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
		Weight:     100,
		Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}}}},
	}}}}
	tests := []struct {
		name       string
		filterVerb string
		want       string
	}{
		{"scores only add to the plugins', which prefer n2", verbFilter, "n2"},
		{"filter_onlyone leaves only the highest priority", verbFilterOnlyOne, "n3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := startDemo(t, nil, nil)
			f := newFramework(t, configv1.Extender{URLPrefix: d.URL, FilterVerb: tc.filterVerb, PrioritizeVerb: verbPrioritize, Weight: 1})
			res, err := f.Schedule(context.Background(), p, cluster())
			if err != nil {
				t.Fatal(err)
			}
			if res.SuggestedHost != tc.want {
				t.Errorf("SuggestedHost = %s, want %s", res.SuggestedHost, tc.want)
			}
		})
	}
}

func TestManagedResources(t *testing.T) {
	t.Parallel()
	const gpu = "example.com/gpu"
	gpuPod := pod("gpu", "1")
	gpuPod.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpu: resource.MustParse("1")}
	gpuPod.Spec.Containers[0].Resources.Requests[gpu] = resource.MustParse("1")
	tests := []struct {
		name      string
		pod       *v1.Pod
		ignored   bool
		wantCalls int64
		wantErr   string // FitError message, or "" for placed on a labelled node
	}{
		{"a pod asking for an ignored resource fits and the extender decides", gpuPod, true, 1, ""},
		{"a resource the scheduler does not ignore must be on the node", gpuPod, false, 0, "0/4 nodes are available: 4 Insufficient example.com/gpu. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."},
		{"a pod not asking for a managed resource is not sent to the extender", pod("plain", "1"), true, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := startDemo(t, nil, nil)
			f := newFramework(t, configv1.Extender{
				URLPrefix: d.URL, FilterVerb: verbFilterOnlyOne,
				ManagedResources: []configv1.ExtenderManagedResource{{Name: gpu, IgnoredByScheduler: tc.ignored}},
			})
			res, err := f.Schedule(context.Background(), tc.pod, cluster())
			switch {
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantCalls > 0 && res.SuggestedHost != "n3":
				t.Errorf("SuggestedHost = %s, want n3, the extender's choice", res.SuggestedHost)
			case tc.wantCalls == 0 && res.FeasibleNodes != 4:
				t.Errorf("%d feasible nodes, want all 4 without the extender", res.FeasibleNodes)
			}
			if got := d.count("/" + verbFilterOnlyOne); got != tc.wantCalls {
				t.Errorf("extender called %d times, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestAnIgnorableExtenderThatIsDownIsSkipped(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	for _, ignorable := range []bool{true, false} {
		f := newFramework(t, configv1.Extender{URLPrefix: dead, FilterVerb: verbFilter, PrioritizeVerb: verbPrioritize, Weight: 1, Ignorable: ignorable})
		res, err := f.Schedule(context.Background(), pod("p", "1"), cluster())
		if ignorable {
			if err != nil || res.FeasibleNodes != 4 {
				t.Errorf("ignorable: %+v, %v; want all 4 nodes feasible", res, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "failed filter with extender at URL "+dead+"/filter") {
			t.Errorf("not ignorable: err = %v, want the failed call", err)
		}
	}
}

func TestASlowExtenderRunsOutOfHTTPTimeout(t *testing.T) {
	t.Parallel()
	slowOn := func(path string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == path {
					// Once the body is read, the server notices the
					// client hanging up and cancels the context.
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					select {
					case <-r.Context().Done():
						return
					case <-time.After(5 * time.Second):
					}
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	cfg := func(url string) configv1.Extender {
		return configv1.Extender{URLPrefix: url, FilterVerb: verbFilter, PrioritizeVerb: verbPrioritize, Weight: 1,
			HTTPTimeout: metav1.Duration{Duration: time.Second}}
	}
	t.Run("a slow filter fails the pod", func(t *testing.T) {
		t.Parallel()
		d := startDemo(t, nil, slowOn("/filter"))
		start := time.Now()
		_, err := newFramework(t, cfg(d.URL)).Schedule(context.Background(), pod("p", "1"), cluster())
		if err == nil || !strings.Contains(err.Error(), "no answer within httpTimeout 1s") {
			t.Errorf("err = %v, want the timeout", err)
		}
		if elapsed := time.Since(start); elapsed > 3*time.Second {
			t.Errorf("took %v", elapsed)
		}
	})
	t.Run("a slow prioritize only loses its scores", func(t *testing.T) {
		t.Parallel()
		d := startDemo(t, nil, slowOn("/prioritize"))
		res, err := newFramework(t, cfg(d.URL)).Schedule(context.Background(), pod("p", "1"), cluster())
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range res.NodeScores() {
			if slices.ContainsFunc(ns.Scores, func(s framework.PluginScore) bool { return s.Name == d.URL }) {
				t.Errorf("%s has a score from the timed-out extender", ns.Name)
			}
		}
	})
}

func TestBindingIsDelegatedToTheDemo(t *testing.T) {
	t.Parallel()
	d := startDemo(t, nil, nil)
	f := newFramework(t, configv1.Extender{URLPrefix: d.URL, BindVerb: verbBind})
	p := pod("p", "1")
	bound, err := f.BindWithExtenders(context.Background(), p, "n3")
	if !bound || err != nil {
		t.Fatalf("BindWithExtenders = %v, %v", bound, err)
	}
	b := <-d.bound
	if b.Namespace != "default" || b.Name != "p" || b.UID != p.UID || b.Target.Name != "n3" {
		t.Errorf("binding %+v, want default/p to n3", b)
	}
}

func TestOnlyHighest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []*v1.Node
		want  string // "" for none
	}{
		{"the highest priority wins", []*v1.Node{node("a", "2"), node("b", "10"), node("c", "7")}, "b"},
		{"among equals the first name wins", []*v1.Node{node("z", "4"), node("y", "4")}, "y"},
		{"a malformed priority counts as 0", []*v1.Node{node("a", "high"), node("b", "0")}, "a"},
		{"without a labelled node nothing is kept", []*v1.Node{node("a", ""), node("b", "")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := nodeinfo.Build(tc.nodes, nil)
			kept, d, err := onlyHighest(context.Background(), pod("p", "1"), nodes)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if len(kept) == 1 {
				got = kept[0].Name()
			}
			if got != tc.want || len(kept) > 1 || len(maps.Collect(d.Rejected())) != len(nodes)-len(kept) {
				t.Errorf("kept %v with %d statuses, want %q and the others rejected", kept, len(maps.Collect(d.Rejected())), tc.want)
			}
		})
	}
}

func TestTheDemoServesBindOnlyWithTheBindFlag(t *testing.T) {
	t.Parallel()
	for _, bind := range []bool{false, true} {
		o := options{bind: bind, maxRequest: 1 << 20, maxCalls: 1}
		h, err := o.handler()
		if err != nil {
			t.Fatal(err)
		}
		// GET is not an extender call: 405 where a verb is served, 404
		// elsewhere.
		for verb, want := range map[string]int{verbFilter: 405, verbFilterOnlyOne: 405, verbPrioritize: 405, verbBind: map[bool]int{false: 404, true: 405}[bind]} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+verb, nil))
			if rec.Code != want {
				t.Errorf("-bind=%v: GET /%s: %d, want %d", bind, verb, rec.Code, want)
			}
		}
	}
}

func TestTheHealthAddressAnswersProbesAndNothingElse(t *testing.T) {
	t.Parallel()
	h, err := options{maxRequest: 1 << 20, maxCalls: 1}.handler()
	if err != nil {
		t.Fatal(err)
	}
	health := healthOnly(h)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/healthz", 200},
		{"HEAD", "/healthz", 200},
		{"POST", "/healthz", 404},
		{"POST", "/" + verbFilter, 404},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{"Pod":{},"Nodes":{"items":[]}}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		health.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
	}
}

func TestByteSizeFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg     string
		want    byteSize
		wantErr bool
	}{
		{"33554432", 32 << 20, false},
		{"32Mi", 32 << 20, false},
		{"1G", 1e9, false},
		{"0", 0, true},
		{"-1Mi", 0, true},
		{"lots", 0, true},
	} {
		var b byteSize
		if err := b.Set(tc.arg); (err != nil) != tc.wantErr || b != tc.want {
			t.Errorf("Set(%q) = %d, %v; want %d (error: %v)", tc.arg, b, err, tc.want, tc.wantErr)
		}
	}
}

func TestPriorityScoresLieInTheExtenderRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, label string
		want        int64
	}{
		{"a priority in range is the score", "7", 7},
		{"a priority above 10 scores 10", "20", 10},
		{"the largest integer scores 10", "9223372036854775807", 10},
		{"a negative priority scores 0", "-7", 0},
		{"a malformed priority scores 0", "high", 0},
		{"no priority scores 0", "", 0},
	} {
		got, err := priorityScore(context.Background(), pod("p", "1"), nodeinfo.New(node("n", tc.label)))
		if err != nil || got != tc.want {
			t.Errorf("%s: score %d (%v), want %d", tc.name, got, err, tc.want)
		}
	}
}
