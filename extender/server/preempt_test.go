package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender/server"
)

// acceptN1 accepts n1 alone, evicting only the last of its victims; it
// fails on a pod it cannot tell by name, to show that pods sent by UID
// reach it whole.
func acceptN1(_ context.Context, _ *v1.Pod, victims map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
	for name, v := range victims {
		for _, p := range v.Pods {
			if p.Name == "" {
				return nil, fmt.Errorf("a victim on %s without a name", name)
			}
		}
	}
	v, ok := victims["n1"]
	if !ok || len(v.Pods) == 0 {
		return nil, nil
	}
	return map[string]*extenderv1.Victims{"n1": {Pods: v.Pods[len(v.Pods)-1:], NumPDBViolations: v.NumPDBViolations}}, nil
}

func victim(uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)}}
}

func wholeVictims(victims map[string]*extenderv1.Victims) string {
	return body(extenderv1.ExtenderPreemptionArgs{Pod: testPod, NodeNameToVictims: victims})
}

func victimUIDs(victims map[string]*extenderv1.MetaVictims) string {
	return body(extenderv1.ExtenderPreemptionArgs{Pod: testPod, NodeNameToMetaVictims: victims})
}

func metaVictims(pdb int64, uids ...string) *extenderv1.MetaVictims {
	mv := &extenderv1.MetaVictims{Pods: []*extenderv1.MetaPod{}, NumPDBViolations: pdb}
	for _, u := range uids {
		mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: u})
	}
	return mv
}

func TestServePreempt(t *testing.T) {
	t.Parallel()
	echo := func(_ context.Context, _ *v1.Pod, victims map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
		return victims, nil
	}
	withSource := []server.Option{server.WithNodes(source)}
	tests := []struct {
		name     string
		opts     []server.Option
		fn       server.PreemptFunc
		body     string
		wantCode int
		want     string
	}{
		{"whole pods are handed over and the accepted ones answered by UID", nil, acceptN1,
			wholeVictims(map[string]*extenderv1.Victims{"n1": {Pods: []*v1.Pod{victim("x"), victim("y")}, NumPDBViolations: 1}, "n2": {Pods: []*v1.Pod{victim("z")}}}), 200,
			`{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"y"}],"NumPDBViolations":1}}}`},
		{"UIDs are looked up in the node source", withSource, acceptN1,
			victimUIDs(map[string]*extenderv1.MetaVictims{"n1": metaVictims(2, "x", "y")}), 200,
			`{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"y"}],"NumPDBViolations":2}}}`},
		{"a node the source does not know is left out", withSource, echo,
			victimUIDs(map[string]*extenderv1.MetaVictims{"n1": metaVictims(0, "x"), "n9": metaVictims(0, "x")}), 200,
			`{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"x"}],"NumPDBViolations":0}}}`},
		{"a node with a victim the source does not place there is left out", withSource, echo,
			victimUIDs(map[string]*extenderv1.MetaVictims{"n1": metaVictims(0, "x"), "n2": metaVictims(0, "x")}), 200,
			`{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"x"}],"NumPDBViolations":0}}}`},
		{"a node without victims is answered with an empty list, never null", nil, echo,
			`{"Pod":{},"NodeNameToVictims":{"n1":null,"n2":{"Pods":[]}}}`, 200,
			`{"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":0},"n2":{"Pods":[],"NumPDBViolations":0}}}`},
		{"accepting nothing is an empty map", nil, acceptN1,
			wholeVictims(map[string]*extenderv1.Victims{"n2": {Pods: []*v1.Pod{victim("z")}}}), 200,
			`{"NodeNameToMetaVictims":{}}`},
		{"UIDs need a node source", nil, echo, victimUIDs(map[string]*extenderv1.MetaVictims{"n1": metaVictims(0, "x")}), 400,
			`{"Error":"request names pods by UID (nodeCacheCapable) but this extender has no node source: serve it WithNodes, or configure nodeCacheCapable: false"}`},
		{"a call needs a pod", nil, echo, `{"NodeNameToVictims":{}}`, 400, `{"Error":"request has no Pod"}`},
		{"a call needs victims", nil, echo, `{"Pod":{}}`, 400, `{"Error":"request has neither NodeNameToVictims nor NodeNameToMetaVictims"}`},
		{"a null pod among whole victims", nil, echo, `{"Pod":{},"NodeNameToVictims":{"n1":{"Pods":[null]}}}`, 400,
			`{"Error":"request has a null victim on node \"n1\""}`},
		{"a null pod among UIDs", withSource, echo, `{"Pod":{},"NodeNameToMetaVictims":{"n1":{"Pods":[null]}}}`, 400,
			`{"Error":"request has a null victim on node \"n1\""}`},
		{"the function's error is a 500", nil,
			func(context.Context, *v1.Pod, map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
				return nil, errors.New("cannot judge")
			},
			wholeVictims(map[string]*extenderv1.Victims{"n1": {Pods: []*v1.Pod{victim("x")}}}), 500, `{"Error":"cannot judge"}`},
		{"a nil pod from the function is a 500", nil,
			func(context.Context, *v1.Pod, map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
				return map[string]*extenderv1.Victims{"n1": {Pods: []*v1.Pod{nil}}}, nil
			},
			wholeVictims(map[string]*extenderv1.Victims{"n1": {Pods: []*v1.Pod{victim("x")}}}), 500, `{"Error":"preempt function returned a nil pod for node \"n1\""}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := server.New(append([]server.Option{server.WithLogger(logr.Discard()), server.Preempt("preempt", tc.fn)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, post("/preempt", strings.NewReader(tc.body)))
			if got := strings.TrimSpace(rec.Body.String()); rec.Code != tc.wantCode || got != tc.want {
				t.Errorf("answer %d %s\nwant   %d %s", rec.Code, got, tc.wantCode, tc.want)
			}
		})
	}
}
