package extender_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender"
	"github.com/kubesched/kubesched/nodeinfo"
)

func victimPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
}

// cluster is n1 running a and b, and n2 running c; lookup finds its nodes
// as a cycle's state does.
type cluster map[string]*nodeinfo.NodeInfo

func newCluster() cluster {
	return cluster{
		"n1": nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, victimPod("a"), victimPod("b")),
		"n2": nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, victimPod("c")),
	}
}

func (c cluster) lookup(name string) (*nodeinfo.NodeInfo, bool) {
	ni, ok := c[name]
	return ni, ok
}

// pod returns the pod called name on node, the very pointer.
func (c cluster) pod(node, name string) *v1.Pod {
	for _, pi := range c[node].Pods() {
		if pi.Pod.Name == name {
			return pi.Pod
		}
	}
	panic("no pod " + name + " on " + node)
}

// candidates are DefaultPreemption's: a and b on n1 (one PDB violation),
// c on n2.
func (c cluster) candidates() map[string]*extenderv1.Victims {
	return map[string]*extenderv1.Victims{
		"n1": {Pods: []*v1.Pod{c.pod("n1", "a"), c.pod("n1", "b")}, NumPDBViolations: 1},
		"n2": {Pods: []*v1.Pod{c.pod("n2", "c")}},
	}
}

// describe renders victims as "n1:[a b]/1 n2:[]/0", in node order, and
// checks that every pod is its node's own.
func (c cluster) describe(t *testing.T, victims map[string]*extenderv1.Victims) string {
	t.Helper()
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(victims)) {
		v := victims[name]
		var pods []string
		for _, p := range v.Pods {
			if p != c.pod(name, p.Name) {
				t.Errorf("victim %s of %s is a copy, not the node's pod", p.Name, name)
			}
			pods = append(pods, p.Name)
		}
		parts = append(parts, fmt.Sprintf("%s:[%s]/%d", name, strings.Join(pods, " "), v.NumPDBViolations))
	}
	return strings.Join(parts, " ")
}

const preemptor = `{"metadata":{"name":"p","namespace":"default","uid":"uid-p"},"spec":{"containers":null},"status":{}}`

func podJSON(name string) string {
	return `{"metadata":{"name":"` + name + `","namespace":"default","uid":"uid-` + name + `"},"spec":{"containers":null},"status":{}}`
}

func TestProcessPreemptionSendsVictimsAsTheExtenderIsConfiguredAndReadsUIDsBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		cacheCapable bool
		wantRequest  string
	}{
		{"a node cache capable extender is sent the victims' UIDs", true,
			`{"Pod":` + preemptor + `,"NodeNameToVictims":null,"NodeNameToMetaVictims":{` +
				`"n1":{"Pods":[{"UID":"uid-a"},{"UID":"uid-b"}],"NumPDBViolations":1},` +
				`"n2":{"Pods":[{"UID":"uid-c"}],"NumPDBViolations":0}}}`},
		{"any other extender is sent the whole pods", false,
			`{"Pod":` + preemptor + `,"NodeNameToVictims":{` +
				`"n1":{"Pods":[` + podJSON("a") + `,` + podJSON("b") + `],"NumPDBViolations":1},` +
				`"n2":{"Pods":[` + podJSON("c") + `],"NumPDBViolations":0}},"NodeNameToMetaVictims":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Both answer with UIDs: the protocol has no other way back.
			rec, url := serve(t, `{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-b"}],"NumPDBViolations":3}}}`, 0)
			c := client(t, configv1.Extender{URLPrefix: url + "/", PreemptVerb: "preempt", NodeCacheCapable: tc.cacheCapable})
			cl := newCluster()
			victims := cl.candidates()
			got, err := c.ProcessPreemption(context.Background(), testPod, victims, cl.lookup)
			if err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			method, path, ctype, body := rec.method, rec.path, rec.ctype, string(rec.body)
			rec.mu.Unlock()
			if method != http.MethodPost || path != "/preempt" || ctype != "application/json" {
				t.Errorf("request %s %s (%s), want POST /preempt (application/json)", method, path, ctype)
			}
			if body != tc.wantRequest {
				t.Errorf("request\n%s\nwant\n%s", body, tc.wantRequest)
			}
			if d := cl.describe(t, got); d != "n1:[b]/3" {
				t.Errorf("result %s, want n1:[b]/3", d)
			}
			if d := cl.describe(t, victims); d != "n1:[a b]/1 n2:[c]/0" {
				t.Errorf("the candidates became %s", d)
			}
		})
	}
}

func TestProcessPreemptionAnswers(t *testing.T) {
	t.Parallel()
	many := strings.Repeat(`{"UID":"uid-a"},`, 1<<16)
	tests := []struct {
		name    string
		answer  string
		want    string
		wantErr string // the error, from the start; %s is the extender's URL
	}{
		{"an answer without nodes accepts none", `{}`, "", ""},
		{"an answer with an empty map accepts none", `{"NodeNameToMetaVictims":{}}`, "", ""},
		{"victims are the node's pods in the extender's order, with its PDB violations", `{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-b"},{"UID":"uid-a"}],"NumPDBViolations":2},"n2":{"Pods":[{"UID":"uid-c"}]}}}`,
			"n1:[b a]/2 n2:[c]/0", ""},
		{"a pod named twice is a victim twice, as in kube-scheduler", `{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-a"},{"UID":"uid-a"}]}}}`, "n1:[a a]/0", ""},
		{"a node returned with an empty list is kept, for the caller to judge", `{"NodeNameToMetaVictims":{"n2":{"Pods":[]}}}`, "n2:[]/0", ""},
		{"a node returned as null is kept without victims", `{"NodeNameToMetaVictims":{"n2":null}}`, "n2:[]/0", ""},
		{"victims sent in the wrong field are not read", `{"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"uid":"uid-a"}}]}}}`, "", ""},
		{"a node not in the cluster is an error", `{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-a"}]},"n9":{"Pods":[]}}}`, "",
			`nodeinfo not found for node name "n9"`},
		{"a pod of another node is an error, in kube-scheduler's words", `{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-c"}]}}}`, "",
			"extender: %s claims to preempt pod (UID: &{uid-c}) on node: n1, but the pod is not found on that node"},
		{"a null pod is a pod not found", `{"NodeNameToMetaVictims":{"n1":{"Pods":[null]}}}`, "",
			"extender: %s claims to preempt pod (UID: <nil>) on node: n1, but the pod is not found on that node"},
		{"of several bad nodes the first by name is named", `{"NodeNameToMetaVictims":{"n2":{"Pods":[{"UID":"x"}]},"n1":{"Pods":[{"UID":"y"}]}}}`, "",
			"extender: %s claims to preempt pod (UID: &{y}) on node: n1"},
		{"a truncated answer is an error", `{"NodeNameToMetaVictims":{"n1":{"Pods":[` + many, "",
			"decoding the preempt answer of extender at URL %s/preempt: unexpected EOF"},
		{"an answer of the wrong shape is an error", `{"NodeNameToMetaVictims":[]}`, "",
			"decoding the preempt answer of extender at URL %s/preempt: json: cannot unmarshal array"},
		{"an answer that is not JSON is an error", "<html>oops</html>", "",
			"decoding the preempt answer of extender at URL %s/preempt: invalid character '<'"},
		{"a huge answer is read and checked", `{"NodeNameToMetaVictims":{"n1":{"Pods":[` + many + `{"UID":"uid-z"}]}}}`, "",
			"extender: %s claims to preempt pod (UID: &{uid-z}) on node: n1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := serve(t, tc.answer, 0)
			c := client(t, configv1.Extender{URLPrefix: url, PreemptVerb: "preempt", NodeCacheCapable: true})
			cl := newCluster()
			got, err := c.ProcessPreemption(context.Background(), testPod, cl.candidates(), cl.lookup)
			if tc.wantErr != "" {
				want := strings.ReplaceAll(tc.wantErr, "%s", url)
				if err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("err = %.300v\nwant %q", err, want)
				}
				if got != nil {
					t.Errorf("result %v with the error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("nil map, want an empty one")
			}
			if d := cl.describe(t, got); d != tc.want {
				t.Errorf("result %q, want %q", d, tc.want)
			}
		})
	}
}

func TestProcessPreemptionFailures(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	huge := strings.Repeat("x", 1<<20)
	_, failing := serve(t, huge, http.StatusInternalServerError)
	_, ok := serve(t, `{}`, 0)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cl := newCluster()
	tests := []struct {
		name    string
		cfg     configv1.Extender
		ctx     context.Context
		victims map[string]*extenderv1.Victims
		want    string // the error, from the start
	}{
		{"an error status gives the code in kube-scheduler's words", configv1.Extender{URLPrefix: failing, PreemptVerb: "preempt"}, context.Background(), cl.candidates(),
			"failed preempt with extender at URL " + failing + "/preempt, code 500"},
		{"a cancelled context stops the call", configv1.Extender{URLPrefix: slow.URL, PreemptVerb: "preempt"}, cancelled, cl.candidates(),
			"failed preempt with extender at URL " + slow.URL + "/preempt: context canceled"},
		{"a slow extender runs out of httpTimeout", configv1.Extender{URLPrefix: slow.URL, PreemptVerb: "preempt", HTTPTimeout: metav1.Duration{Duration: 50 * time.Millisecond}}, context.Background(), cl.candidates(),
			"failed preempt with extender at URL " + slow.URL + "/preempt: no answer within httpTimeout 50ms"},
		{"an extender without preemptVerb is not called, in kube-scheduler's words", configv1.Extender{URLPrefix: ok, FilterVerb: "filter"}, context.Background(), cl.candidates(),
			"preempt verb is not defined for extender " + ok + " but run into ProcessPreemption"},
		{"a nil entry among the candidates is bad input", configv1.Extender{URLPrefix: ok, PreemptVerb: "preempt"}, context.Background(), map[string]*extenderv1.Victims{"n1": nil},
			"extender " + ok + `: the victims of node "n1" are nil or hold a nil pod`},
		{"a nil pod among the victims is bad input", configv1.Extender{URLPrefix: ok, PreemptVerb: "preempt", NodeCacheCapable: true}, context.Background(), map[string]*extenderv1.Victims{"n1": {Pods: []*v1.Pod{nil}}},
			"extender " + ok + `: the victims of node "n1" are nil or hold a nil pod`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := client(t, tc.cfg).ProcessPreemption(tc.ctx, testPod, tc.victims, cl.lookup)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %.700v\nwant it to start %.700s", err, tc.want)
			}
			if err != nil && len(err.Error()) > 1024 {
				t.Errorf("an error of %d bytes: the quote of a body must be bounded", len(err.Error()))
			}
			if got != nil {
				t.Errorf("result %v with the error", got)
			}
		})
	}
}

func TestSupportsPreemptionIsHavingAPreemptVerb(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  configv1.Extender
		want bool
	}{
		{"a preemptVerb", configv1.Extender{URLPrefix: "http://x", PreemptVerb: "preempt"}, true},
		{"only other verbs", configv1.Extender{URLPrefix: "http://x", FilterVerb: "filter", BindVerb: "bind"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := client(t, tc.cfg).SupportsPreemption(); got != tc.want {
				t.Errorf("SupportsPreemption = %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzProcessPreemption answers a preempt call with arbitrary bytes: the
// client must not panic, and what it returns must be pods of the cluster
// on the nodes the answer names.
func FuzzProcessPreemption(f *testing.F) {
	for _, seed := range []string{
		`{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-a"},{"UID":"uid-b"}],"NumPDBViolations":2},"n2":{"Pods":[{"UID":"uid-c"}]}}}`,
		`{"NodeNameToMetaVictims":{"n1":{"Pods":[null]},"n2":null,"n9":{}}}`,
		`{"NodeNameToMetaVictims":{"":{"Pods":[{"UID":""}]}}}`,
		`{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"uid-a"}]}}} trailing`,
		`{"NodeNameToMetaVictims":{"n1":{"Pods":{"UID":"uid-a"}}}}`,
		`{"NodeNameToMetaVictims":null}`, "null", "[]", "{", "",
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, answer []byte, cacheCapable bool) {
		rt := roundTripper(func(r *http.Request) (*http.Response, error) {
			_, _ = io.Copy(io.Discard, r.Body)
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(answer)), Request: r}, nil
		})
		c, err := extender.New(configv1.Extender{URLPrefix: "http://x", PreemptVerb: "preempt", NodeCacheCapable: cacheCapable}, extender.WithTransport(rt))
		if err != nil {
			t.Fatal(err)
		}
		cl := newCluster()
		got, err := c.ProcessPreemption(context.Background(), testPod, cl.candidates(), cl.lookup)
		if err != nil {
			if got != nil {
				t.Fatalf("result %v with error %v", got, err)
			}
			return
		}
		for name, v := range got {
			ni, ok := cl[name]
			if !ok || v == nil || v.Pods == nil {
				t.Fatalf("node %q: %v", name, v)
			}
			for _, p := range v.Pods {
				if !slices.ContainsFunc(ni.Pods(), func(pi *nodeinfo.PodInfo) bool { return pi.Pod == p }) {
					t.Fatalf("victim %v is not a pod of %s", p, name)
				}
			}
		}
	})
}
