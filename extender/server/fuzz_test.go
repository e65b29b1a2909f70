package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
)

// FuzzHandler sends arbitrary bodies to every verb: the handler must not
// panic, must answer with a known code and a JSON body, and must allocate
// no more than a bounded multiple of its size limit.
func FuzzHandler(f *testing.F) {
	const limit = 1 << 14
	// Decoding expands JSON: a small object in a pod's containers is a
	// v1.Container of several hundred bytes, in a slice grown by copying;
	// a node is a v1.Node and a NodeInfo of some 2 KB, which is why nodes
	// are refused below 256 bytes each. The densest bodies the handler
	// accepts cost about 90 bytes per byte.
	const maxAllocPerByte = 200
	fw, err := framework.New(
		framework.WithPlugin(&filter.NodeUnschedulable{}, 0),
		framework.WithPlugin(&filter.TaintToleration{}, 0),
	)
	if err != nil {
		f.Fatal(err)
	}
	h, err := server.New(
		server.WithLogger(logr.Discard()),
		server.Filter("filter", server.EachNode(zoneA)),
		server.Filter("plugins", fw.Filter),
		server.Prioritize("prioritize", server.EachNodeScore(podCount)),
		server.Prioritize("framework", server.FrameworkPrioritize(fw)),
		server.Bind("bind", func(context.Context, *v1.Binding) error { return nil }),
		server.Preempt("preempt", acceptN1),
		server.WithNodes(source),
		server.WithMaxRequestBytes(limit),
	)
	if err != nil {
		f.Fatal(err)
	}
	paths := []string{"/filter", "/plugins", "/prioritize", "/framework", "/bind", "/preempt"}
	for _, seed := range []string{
		wholeNodes(node("n1", "a"), node("n2", "b")),
		nodeNames("n1", "n2", "n9"),
		nodeNames("n1", "n1"),
		wholeNodes(node("n1", "a"), node("n1", "b")),
		`{"pod":{},"NODES":{"Items":[{"metadata":{"name":"n1"}}],"metadata":{"x":[]}},"NodeNames":["n2"],"x":{}}`,
		`{"PodName":"p","PodNamespace":"ns","PodUID":"u","Node":"n1"}`,
		`{"Pod":{"spec":{"tolerations":[{"key":"k","operator":"Exists"}]}},"Nodes":{"items":[{"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]}},{}]}}`,
		`{"Pod":{},"Nodes":{"items":[` + strings.Repeat("{},", limit/3-40) + `{}]}}`,
		`{"Pod":{"spec":{"containers":[` + strings.Repeat("{},", limit/3-40) + `{}]}},"NodeNames":[]}`,
		// As dense as the handler accepts.
		`{"Pod":{},"Nodes":{"items":[` + strings.Repeat(`{"kind":"x"},`, limit/13-10) + `{}]}}`,
		`{"Pod":{"spec":{"containers":[` + strings.Repeat(`{"name":"x"},`, limit/13-10) + `{}]}},"NodeNames":[]}`,
		`{"Pod":{"metadata":{"name":"\ud800"}},"NodeNames":null}`,
		`{"Pod":{"spec":{"containers":[{"resources":{"requests":{"cpu":"1e1000000"}}}]}},"Nodes":{"items":[{}]}}`,
		wholeVictims(map[string]*extenderv1.Victims{"n1": {Pods: []*v1.Pod{victim("x"), victim("y")}, NumPDBViolations: 1}}),
		victimUIDs(map[string]*extenderv1.MetaVictims{"n1": metaVictims(1, "x", "y"), "n2": metaVictims(0, "x"), "n9": nil}),
		`{"Pod":{},"NodeNameToMetaVictims":{"n1":{"Pods":[` + strings.Repeat(`{"UID":"x"},`, limit/13-10) + `{}]}}}`,
		`{"Pod":{},"NodeNameToVictims":{"n1":{"Pods":[null]},"n2":null}}`,
		"{", "null", "[]", `"x"`, "{} {}", "",
	} {
		// Every seed to every verb.
		for v := range paths {
			f.Add(uint8(v), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, verb uint8, body []byte) {
		path := paths[int(verb)%len(paths)]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, post(path, bytes.NewReader(body)))
		runtime.ReadMemStats(&after)
		switch rec.Code {
		case 200, 400, 413, 500:
		default:
			t.Fatalf("%s answered %d", path, rec.Code)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s answered %d with invalid JSON %q", path, rec.Code, rec.Body.String())
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAllocPerByte*limit {
			t.Fatalf("%s allocated %d bytes for a body of %d (limit %d)", path, alloc, len(body), limit)
		}
	})
}
