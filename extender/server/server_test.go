package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// zoneA keeps the nodes labelled zone=a; others are Unschedulable, except
// those labelled zone=none, which are UnschedulableAndUnresolvable.
func zoneA(_ context.Context, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	switch ni.Labels()["zone"] {
	case "a":
		return nil
	case "none":
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "no zone")
	}
	return fwk.NewStatus(fwk.Unschedulable, "wrong zone")
}

// podCount scores a node by its pods, to show what the node source adds.
func podCount(_ context.Context, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, error) {
	return int64(len(ni.Pods())), nil
}

func newHandler(t testing.TB, opts ...server.Option) *server.Handler {
	t.Helper()
	h, err := server.New(append([]server.Option{
		server.WithLogger(logr.Discard()),
		server.Filter("filter", server.EachNode(zoneA)),
		server.Prioritize("prioritize", server.EachNodeScore(podCount)),
		server.Bind("bind", func(_ context.Context, b *v1.Binding) error {
			if b.Target.Name == "refused" {
				return errors.New("binding refused")
			}
			return nil
		}),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func node(name, zone string) v1.Node {
	return v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": zone}}}
}

// source knows n1 (zone a, two pods) and n2 (zone b).
func source(_ context.Context, name string) (*nodeinfo.NodeInfo, error) {
	switch name {
	case "n1":
		n := node("n1", "a")
		return nodeinfo.New(&n, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "x"}}, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "y", UID: "y"}}), nil
	case "n2":
		n := node("n2", "b")
		return nodeinfo.New(&n), nil
	}
	return nil, fmt.Errorf("no node %q", name)
}

// post is a POST of body as kube-scheduler sends it, as JSON.
func post(path string, body io.Reader) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, body)
	r.Header.Set("Content-Type", "application/json")
	return r
}

func body(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var testPod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}

func wholeNodes(nodes ...v1.Node) string {
	return body(extenderv1.ExtenderArgs{Pod: testPod, Nodes: &v1.NodeList{Items: nodes}})
}

func nodeNames(names ...string) string {
	return body(extenderv1.ExtenderArgs{Pod: testPod, NodeNames: &names})
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     []server.Option
		method   string
		path     string
		body     string
		wantCode int
		want     string // the answer, compacted JSON; parts split by \x00 must appear in order
	}{
		{"a filter call with whole nodes is answered with names and nodes", nil, "POST", "/filter",
			wholeNodes(node("n1", "a"), node("n2", "b"), node("n3", "none")), 200,
			`{"Nodes":{"metadata":{},"items":[{"metadata":{"name":"n1",` + "\x00" + `"NodeNames":["n1"],"FailedNodes":{"n2":"wrong zone"},"FailedAndUnresolvableNodes":{"n3":"no zone"},"Error":""}`},
		{"a filter call with names is answered with names", []server.Option{server.WithNodes(source)}, "POST", "/filter",
			nodeNames("n1", "n2", "n9"), 200,
			`{"Nodes":null,"NodeNames":["n1"],"FailedNodes":{"n2":"wrong zone","n9":"node \"n9\" unknown to the extender: no node \"n9\""},"FailedAndUnresolvableNodes":{},"Error":""}`},
		{"names need a node source", nil, "POST", "/filter", nodeNames("n1"), 400,
			`{"Error":"request names nodes (nodeCacheCapable) but this extender has no node source: serve it WithNodes, or configure nodeCacheCapable: false"}`},
		{"the node source adds pods to whole nodes", []server.Option{server.WithNodes(source)}, "POST", "/prioritize",
			wholeNodes(node("n1", "a"), node("n3", "a")), 200, `[{"Host":"n1","Score":2},{"Host":"n3","Score":0}]`},
		{"a bind call", nil, "POST", "/bind", `{"PodName":"p","PodNamespace":"ns","PodUID":"u","Node":"n1"}`, 200, `{"Error":""}`},
		{"a refused binding is the answer's Error", nil, "POST", "/bind", `{"PodName":"p","Node":"refused"}`, 200, `{"Error":"binding refused"}`},
		{"a binding needs a pod and a node", nil, "POST", "/bind", `{"PodName":"p"}`, 400,
			`{"Error":"bind request must name the pod (PodName) and the node (Node)"}`},
		{"a call needs a pod", nil, "POST", "/filter", `{"NodeNames":[]}`, 400, `{"Error":"request has no Pod"}`},
		{"a call needs nodes", nil, "POST", "/prioritize", `{"Pod":{}}`, 400, `{"Error":"request has neither Nodes nor NodeNames"}`},
		{"malformed JSON", nil, "POST", "/filter", `{"Pod":`, 400, `{"Error":"malformed request body: Pod: unexpected EOF"}`},
		{"an empty body", nil, "POST", "/prioritize", ``, 400, `{"Error":"malformed request body: unexpected EOF"}`},
		{"a body that is not an object", nil, "POST", "/filter", `[]`, 400, `{"Error":"malformed request body: not a JSON object"}`},
		{"a null body is a call without a pod", nil, "POST", "/filter", `null`, 400, `{"Error":"request has no Pod"}`},
		{"keys match in any case, as encoding/json matches them", nil, "POST", "/prioritize",
			`{"pod":{},"NODES":{"ITEMS":[{"metadata":{"name":"n1"}}],"metadata":{}},"other":[1]}`, 200, `[{"Host":"n1","Score":0}]`},
		{"a null node list is as if absent", []server.Option{server.WithNodes(source)}, "POST", "/prioritize",
			`{"Pod":{},"Nodes":null,"NodeNames":["n1"]}`, 200, `[{"Host":"n1","Score":2}]`},
		{"a second value after the first", nil, "POST", "/bind", `{"PodName":"p","Node":"n"} {}`, 400,
			`{"Error":"malformed request body: data after the JSON value"}`},
		{"wrong types", nil, "POST", "/filter", `{"Pod":[]}`, 400,
			`{"Error":"malformed request body: Pod: json: cannot unmarshal array into Go value of type v1.Pod"}`},
		{"GET is not an extender call", nil, "GET", "/filter", "", 405, `{"Error":"method GET not allowed; extender calls are POST"}`},
		{"an unknown verb", nil, "POST", "/preempt", "{}", 404, `{"Error":"no extender verb at /preempt"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, tc.opts...)
			rec := httptest.NewRecorder()
			req := post(tc.path, strings.NewReader(tc.body))
			req.Method = tc.method
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Errorf("code %d, want %d", rec.Code, tc.wantCode)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			got := strings.TrimSpace(rec.Body.String())
			parts := strings.Split(tc.want, "\x00")
			if !strings.HasPrefix(got, parts[0]) || !strings.HasSuffix(got, parts[len(parts)-1]) {
				t.Errorf("answer\n%s\nwant\n%s", got, strings.Join(parts, " ... "))
			}
			if tc.wantCode == 405 && rec.Header().Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", rec.Header().Get("Allow"))
			}
		})
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	for _, tc := range []struct {
		name, method string
		code         int
		body         string
	}{
		{"a probe's GET is answered ok", "GET", 200, "ok\n"},
		{"HEAD is answered too", "HEAD", 200, "ok\n"},
		{"POST is not a probe", "POST", 404, `{"Error":"no extender verb at /healthz"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/healthz", nil))
			if rec.Code != tc.code || rec.Body.String() != tc.body {
				t.Errorf("%s /healthz: %d %q, want %d %q", tc.method, rec.Code, rec.Body.String(), tc.code, tc.body)
			}
		})
	}
}

func TestFunctionFailures(t *testing.T) {
	t.Parallel()
	failFilter := func(context.Context, *v1.Pod, []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error) {
		return nil, framework.Diagnosis{}, errors.New("cannot filter")
	}
	failScore := func(context.Context, *v1.Pod, *nodeinfo.NodeInfo) (int64, error) {
		return 0, errors.New("cannot score")
	}
	brokenCheck := func(context.Context, *v1.Pod, *nodeinfo.NodeInfo) *fwk.Status {
		return fwk.AsStatus(errors.New("broken"))
	}
	log, lines := captureLog()
	h, err := server.New(
		server.WithLogger(log),
		server.Filter("filter", failFilter),
		server.Filter("check", server.EachNode(brokenCheck)),
		server.Prioritize("prioritize", server.EachNodeScore(failScore)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The protocol's answers are not logged; a 500 is.
	tests := []struct {
		path     string
		wantCode int
		want     string
		logged   string
	}{
		{"/filter", 200, `"Error":"cannot filter"`, ""},
		{"/check", 200, `"Error":"checking node \"n1\": Error: broken"`, ""},
		{"/prioritize", 500, `{"Error":"scoring node \"n1\": cannot score"}`,
			`"msg"="Extender function failed; answered 500" "path"="/prioritize" "remote"="192.0.2.1:1234" "reason"="scoring node \"n1\": cannot score"`},
	}
	logged := 0
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, post(tc.path, strings.NewReader(wholeNodes(node("n1", "a")))))
		if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.path, rec.Code, rec.Body.String(), tc.wantCode, tc.want)
		}
		l := lines()[logged:]
		logged += len(l)
		if (tc.logged == "" && len(l) != 0) || (tc.logged != "" && (len(l) != 1 || !strings.Contains(l[0], tc.logged))) {
			t.Errorf("%s: logged %q, want %q", tc.path, l, tc.logged)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	filterFn := server.EachNode(zoneA)
	tests := []struct {
		name string
		opts []server.Option
		want string
	}{
		{"no verb at all", nil, "no verb to serve"},
		{"an empty verb", []server.Option{server.Filter("", filterFn)}, `verb "": must be non-empty`},
		{"a verb with a leading slash", []server.Option{server.Filter("/filter", filterFn)}, "not start with '/'"},
		{"a verb served twice", []server.Option{server.Filter("f", filterFn), server.Prioritize("f", server.EachNodeScore(podCount))}, `verb "f" served twice`},
		{"a nil function", []server.Option{server.Bind("bind", nil)}, `verb "bind": nil function`},
		{"a nil node source", []server.Option{server.Filter("f", filterFn), server.WithNodes(nil)}, "nil source"},
		{"no room for a body", []server.Option{server.Filter("f", filterFn), server.WithMaxRequestBytes(0)}, "need at least 1"},
		{"no time to answer", []server.Option{server.Filter("f", filterFn), server.WithTimeouts(time.Second, 0)}, "both must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := server.New(tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestTheFunctionsContextEndsWithTheWriteTimeout(t *testing.T) {
	t.Parallel()
	waited := make(chan error, 1)
	wait := func(ctx context.Context, _ *v1.Pod, _ []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error) {
		select {
		case <-ctx.Done():
			waited <- ctx.Err()
		case <-time.After(5 * time.Second):
			waited <- nil
		}
		return nil, framework.Diagnosis{}, ctx.Err()
	}
	log, lines := captureLog()
	h, err := server.New(server.Filter("filter", wait), server.WithTimeouts(time.Second, 50*time.Millisecond), server.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/filter", "application/json", strings.NewReader(wholeNodes(node("n1", "a"))))
	if err := <-waited; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the function's context ended with %v, want the deadline", err)
	}
	// The answer still goes out: the connection's deadline is a second
	// later than the function's.
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	var res extenderv1.ExtenderFilterResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 || res.Error != "context deadline exceeded" {
		t.Errorf("answer %d %+v (%v), want the function's error", resp.StatusCode, res, err)
	}
	if got := lines(); len(got) != 1 || !strings.Contains(got[0], `"msg"="Extender call answered after its write timeout`) {
		t.Errorf("logged %q, want the late answer once", got)
	}
	hs := h.HTTPServer("127.0.0.1:0")
	if hs.Handler != h || hs.ReadTimeout != time.Second || hs.WriteTimeout != 50*time.Millisecond+time.Second || hs.ReadHeaderTimeout == 0 || hs.ErrorLog == nil {
		t.Errorf("HTTPServer = %+v, want the handler's timeouts and logger", hs)
	}
}

func TestConcurrentRequestsShareNothing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newHandler(t))
	t.Cleanup(srv.Close)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			name := fmt.Sprintf("node-%d", i)
			resp, err := http.Post(srv.URL+"/filter", "application/json", strings.NewReader(wholeNodes(node(name, "a"))))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var res extenderv1.ExtenderFilterResult
			if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
				t.Error(err)
				return
			}
			if res.NodeNames == nil || len(*res.NodeNames) != 1 || (*res.NodeNames)[0] != name {
				t.Errorf("request for %s answered %v", name, res.NodeNames)
			}
		})
	}
	wg.Wait()
}

func TestAFrameworkServesItsPlugins(t *testing.T) {
	t.Parallel()
	f, err := framework.New(
		framework.WithPlugin(&filter.NodeUnschedulable{}, 0),
		framework.WithPlugin(&prefer{"n2": 80, "n3": 20}, 1),
	)
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(server.Filter("filter", f.Filter), server.Prioritize("prioritize", server.FrameworkPrioritize(f)))
	if err != nil {
		t.Fatal(err)
	}
	cordoned := node("n1", "a")
	cordoned.Spec.Unschedulable = true
	call := func(path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, post(path, strings.NewReader(wholeNodes(cordoned, node("n2", "a"), node("n3", "a")))))
		return rec.Body.String()
	}
	if got := call("/filter"); !strings.Contains(got, `"NodeNames":["n2","n3"]`) || !strings.Contains(got, `"FailedAndUnresolvableNodes":{"n1":"node(s) were unschedulable"}`) {
		t.Errorf("filter answered %s", got)
	}
	// Totals 0, 80 and 20 are rescaled so that the best is 10.
	if got, want := strings.TrimSpace(call("/prioritize")), `[{"Host":"n1","Score":0},{"Host":"n2","Score":10},{"Host":"n3","Score":2}]`; got != want {
		t.Errorf("prioritize answered %s, want %s", got, want)
	}
}

// prefer scores nodes from a table.
type prefer map[string]int64

func (prefer) Name() string { return "Prefer" }
func (p prefer) Score(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return p[ni.Name()], nil
}
