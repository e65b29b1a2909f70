package extender_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender"
	"github.com/kubesched/kubesched/nodeinfo"
)

// recorder is an extender that answers every call with answer (JSON) and
// status, and keeps the last request.
type recorder struct {
	mu     sync.Mutex
	method string
	path   string
	ctype  string
	body   []byte
	answer string
	status int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.method, r.path, r.ctype, r.body = req.Method, req.URL.Path, req.Header.Get("Content-Type"), body
	answer, status := r.answer, r.status
	r.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (r *recorder) request(t *testing.T) (method, path, ctype string, args map[string]json.RawMessage) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := json.Unmarshal(r.body, &args); err != nil {
		t.Fatalf("request body %q: %v", r.body, err)
	}
	return r.method, r.path, r.ctype, args
}

func serve(t *testing.T, answer string, status int) (*recorder, string) {
	t.Helper()
	rec := &recorder{answer: answer, status: status}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func client(t *testing.T, cfg configv1.Extender) *extender.Client {
	t.Helper()
	c, err := extender.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testNodes() []*nodeinfo.NodeInfo {
	busy := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: "default", UID: "u1"}}
	n1 := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Images: []v1.ContainerImage{{Names: []string{"nginx:1"}, SizeBytes: 1 << 30}}}}
	n2 := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}
	return []*nodeinfo.NodeInfo{nodeinfo.New(n1, busy), nodeinfo.New(n2)}
}

var testPod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"}}

func TestFilterSendsNamesToANodeCacheCapableExtenderAndKeepsItsNodeInfos(t *testing.T) {
	t.Parallel()
	rec, url := serve(t, `{"NodeNames":["n2"],"FailedNodes":{"n1":"too busy"}}`, 0)
	c := client(t, configv1.Extender{URLPrefix: url + "/", FilterVerb: "filter", NodeCacheCapable: true})
	nodes := testNodes()
	res, err := c.Filter(context.Background(), testPod, nodes)
	if err != nil {
		t.Fatal(err)
	}
	method, path, ctype, args := rec.request(t)
	if method != http.MethodPost || path != "/filter" || ctype != "application/json" {
		t.Errorf("request %s %s (%s), want POST /filter (application/json)", method, path, ctype)
	}
	if string(args["NodeNames"]) != `["n1","n2"]` || string(args["Nodes"]) != "null" || !strings.Contains(string(args["Pod"]), `"name":"p"`) {
		t.Errorf("request %v, want the pod and node names only", args)
	}
	if len(res.Nodes) != 1 || res.Nodes[0] != nodes[1] || res.Failed["n1"] != "too busy" {
		t.Errorf("result %+v, want n2's own NodeInfo and n1 failed", res)
	}
}

func TestFilterSendsWholeNodesAndWrapsTheAnswersInNewNodeInfos(t *testing.T) {
	t.Parallel()
	rec, url := serve(t, `{"Nodes":{"items":[{"metadata":{"name":"n1"}}]},"NodeNames":["n2"],"FailedAndUnresolvableNodes":{"n2":"no gpu"}}`, 0)
	c := client(t, configv1.Extender{URLPrefix: url, FilterVerb: "filter"})
	res, err := c.Filter(context.Background(), testPod, testNodes())
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, args := rec.request(t)
	if !strings.Contains(string(args["Nodes"]), `"name":"n1"`) || string(args["NodeNames"]) != "null" {
		t.Errorf("request %v, want whole nodes", args)
	}
	// As in kube-scheduler v1.36.3 the answer's Node objects are used, in
	// NodeInfos that know neither the pods nor the images.
	if len(res.Nodes) != 1 || res.Nodes[0].Name() != "n1" || len(res.Nodes[0].Pods()) != 0 || len(res.Nodes[0].ImageStates()) != 0 {
		t.Errorf("result nodes %+v, want a bare n1", res.Nodes)
	}
	if res.FailedAndUnresolvable["n2"] != "no gpu" {
		t.Errorf("FailedAndUnresolvable = %v", res.FailedAndUnresolvable)
	}
}

func TestFilterAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		cacheCapable bool
		answer       string
		wantNodes    int
		wantErr      string
	}{
		{"an answer with neither names nor nodes keeps no node", false, `{}`, 0, ""},
		{"names are ignored from an extender that is not node cache capable", false, `{"NodeNames":["n1"]}`, 0, ""},
		{"a cache capable extender's nodes are used when it sends no names", true, `{"Nodes":{"items":[{"metadata":{"name":"n2"}}]}}`, 1, ""},
		{"a name not sent is an error", true, `{"NodeNames":["n9"]}`, 0, `claims a filtered node "n9" which is not found in the input node list`},
		{"the answer's Error is the error, word for word", false, `{"Error":"all node do not have label priority.lixueduan.com"}`, 0, "all node do not have label priority.lixueduan.com"},
		{"a malformed answer is an error", false, `{"NodeNames":`, 0, "decoding the filter answer of extender at URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := serve(t, tc.answer, 0)
			c := client(t, configv1.Extender{URLPrefix: url, FilterVerb: "filter", NodeCacheCapable: tc.cacheCapable})
			res, err := c.Filter(context.Background(), testPod, testNodes())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(res.Nodes) != tc.wantNodes {
				t.Errorf("Filter = %+v, %v; want %d nodes", res, err, tc.wantNodes)
			}
		})
	}
}

func TestCallFailuresSayWhatHappened(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	_, failing := serve(t, `{"Error":"boom"}`, http.StatusServiceUnavailable)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		url  string
		ctx  context.Context
		want string
	}{
		{"a non-200 answer gives its code in kube-scheduler's words", failing, context.Background(), "failed filter with extender at URL " + failing + "/filter, code 503"},
		{"a dead server is a failed call", dead, context.Background(), "failed filter with extender at URL " + dead + "/filter: dial tcp"},
		{"a slow server runs out of httpTimeout", slow.URL, context.Background(), "failed filter with extender at URL " + slow.URL + "/filter: no answer within httpTimeout 50ms"},
		{"a cancelled context stops the call", slow.URL, cancelled, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Only the slow server may time out: a loaded machine can take
			// longer than a short timeout to answer the others.
			timeout := time.Minute
			if tc.url == slow.URL && tc.ctx == context.Background() {
				timeout = 50 * time.Millisecond
			}
			c := client(t, configv1.Extender{URLPrefix: tc.url, FilterVerb: "filter", HTTPTimeout: metav1.Duration{Duration: timeout}})
			_, err := c.Filter(tc.ctx, testPod, testNodes())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestANon200AnswerKeepsTheStartOfItsBodyBesideKubeSchedulersMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{name: "a short body is kept whole, trimmed", body: "  {\"Error\":\"boom\"}\n", want: `{"Error":"boom"}`, code: http.StatusServiceUnavailable},
		{name: "a long body is cut at 512 bytes", body: strings.Repeat("x", 4096), want: strings.Repeat("x", 512), code: http.StatusInternalServerError},
		{name: "an empty body leaves none", body: "", want: "", code: http.StatusBadGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := serve(t, tc.body, tc.code)
			_, err := client(t, configv1.Extender{URLPrefix: url, FilterVerb: "filter"}).Filter(context.Background(), testPod, testNodes())
			var se *extender.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want a *StatusError", err, err)
			}
			if want := fmt.Sprintf("failed filter with extender at URL %s/filter, code %d", url, tc.code); err.Error() != want {
				t.Errorf("err = %q, want kube-scheduler's %q", err, want)
			}
			if se.Body != tc.want || se.Code != tc.code || se.Verb != "filter" || se.URL != url+"/filter" {
				t.Errorf("StatusError %+v, want body %.40q, code %d", se, tc.want, tc.code)
			}
		})
	}
}

func TestPrioritize(t *testing.T) {
	t.Parallel()
	_, url := serve(t, `[{"Host":"n1","Score":3},{"Host":"n2","Score":10}]`, 0)
	c := client(t, configv1.Extender{URLPrefix: url, PrioritizeVerb: "prioritize", Weight: 4})
	list, weight, err := c.Prioritize(context.Background(), testPod, testNodes())
	if err != nil || weight != 4 || len(list) != 2 || list[1] != (extenderv1.HostPriority{Host: "n2", Score: 10}) {
		t.Errorf("Prioritize = %v, %d, %v", list, weight, err)
	}
	noVerb := client(t, configv1.Extender{URLPrefix: url, FilterVerb: "filter"})
	list, weight, err = noVerb.Prioritize(context.Background(), testPod, testNodes())
	if err != nil || weight != 0 || len(list) != 2 || list[0].Score != 0 {
		t.Errorf("without a verb Prioritize = %v, %d, %v; want zeros", list, weight, err)
	}
}

func TestBind(t *testing.T) {
	t.Parallel()
	binding := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}, Target: v1.ObjectReference{Kind: "Node", Name: "n1"}}
	rec, url := serve(t, `{}`, 0)
	c := client(t, configv1.Extender{URLPrefix: url, BindVerb: "bind"})
	if err := c.Bind(context.Background(), binding); err != nil {
		t.Fatal(err)
	}
	_, path, _, args := rec.request(t)
	if path != "/bind" || string(args["PodName"]) != `"p"` || string(args["PodNamespace"]) != `"ns"` || string(args["PodUID"]) != `"u"` || string(args["Node"]) != `"n1"` {
		t.Errorf("request %s %v", path, args)
	}
	_, refusing := serve(t, `{"Error":"pods \"p\" is forbidden"}`, 0)
	if err := client(t, configv1.Extender{URLPrefix: refusing, BindVerb: "bind"}).Bind(context.Background(), binding); err == nil || err.Error() != `pods "p" is forbidden` {
		t.Errorf("err = %v, want the answer's Error", err)
	}
	if err := client(t, configv1.Extender{URLPrefix: url}).Bind(context.Background(), binding); err == nil {
		t.Error("an extender without bindVerb bound")
	}
}

func TestIsInterested(t *testing.T) {
	t.Parallel()
	withResources := func(init bool, requests, limits v1.ResourceList) *v1.Pod {
		c := v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: requests, Limits: limits}}
		p := testPod.DeepCopy()
		if init {
			p.Spec.InitContainers = []v1.Container{c}
		} else {
			p.Spec.Containers = []v1.Container{c}
		}
		return p
	}
	gpu := v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	cpu := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	tests := []struct {
		name    string
		managed []string
		pod     *v1.Pod
		want    bool
	}{
		{"an extender managing nothing wants every pod", nil, testPod, true},
		{"a request of a managed resource", []string{"example.com/gpu"}, withResources(false, gpu, nil), true},
		{"a limit of a managed resource", []string{"example.com/gpu"}, withResources(false, nil, gpu), true},
		{"an init container's request", []string{"example.com/gpu"}, withResources(true, gpu, nil), true},
		{"only other resources", []string{"example.com/gpu"}, withResources(false, cpu, cpu), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := configv1.Extender{URLPrefix: "http://x"}
			for _, m := range tc.managed {
				cfg.ManagedResources = append(cfg.ManagedResources, configv1.ExtenderManagedResource{Name: m})
			}
			if got := client(t, cfg).IsInterested(tc.pod); got != tc.want {
				t.Errorf("IsInterested = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTheClientDescribesItsConfiguration(t *testing.T) {
	t.Parallel()
	c := client(t, configv1.Extender{URLPrefix: "http://x:1", FilterVerb: "f", BindVerb: "b", Ignorable: true})
	if c.Name() != "http://x:1" || !c.IsFilter() || c.IsPrioritizer() || !c.IsBinder() || !c.IsIgnorable() {
		t.Errorf("client %+v does not match its configuration", c)
	}
}

func TestWithTransportCarriesTheCalls(t *testing.T) {
	t.Parallel()
	var called bool
	rt := roundTripper(func(r *http.Request) (*http.Response, error) {
		called = true
		return nil, errors.New("no network here")
	})
	c, err := extender.New(configv1.Extender{URLPrefix: "http://x", FilterVerb: "filter"}, extender.WithTransport(rt))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Filter(context.Background(), testPod, testNodes()); err == nil || !called || !strings.Contains(err.Error(), "no network here") {
		t.Errorf("err = %v, called = %v", err, called)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestWithTransportRefusesNil(t *testing.T) {
	t.Parallel()
	_, err := extender.New(configv1.Extender{URLPrefix: "http://x", FilterVerb: "filter"}, extender.WithTransport(nil))
	if err == nil || !strings.Contains(err.Error(), "nil transport") {
		t.Fatalf("New with a nil transport: err = %v, want a nil transport error", err)
	}
}
