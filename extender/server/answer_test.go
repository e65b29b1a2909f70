package server_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestPrioritizeScoresAreClampedToTheExtenderRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		scores []int64 // returned for nodes n0, n1, ...
		want   []int64
		logged string // "" for nothing
	}{
		{"scores in range are answered as they are", []int64{0, 5, 10}, []int64{0, 5, 10}, ""},
		{"a negative score is answered as 0", []int64{3, -7}, []int64{3, 0},
			`"clamped"=1 "firstNode"="n1" "firstScore"=-7`},
		{"scores over 10 are answered as 10, and logged once", []int64{11, 4, math.MaxInt64}, []int64{10, 4, 10},
			`"clamped"=2 "firstNode"="n0" "firstScore"=11`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			list := make(extenderv1.HostPriorityList, len(tc.scores))
			var nodes []v1.Node
			for i, s := range tc.scores {
				list[i] = extenderv1.HostPriority{Host: "n" + string(rune('0'+i)), Score: s}
				nodes = append(nodes, node(list[i].Host, "a"))
			}
			original := slices.Clone(list)
			// The function answers with the same list every time: the
			// handler must not change it.
			fixed := func(context.Context, *v1.Pod, []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, error) {
				return list, nil
			}
			log, lines := captureLog()
			h, err := server.New(server.Prioritize("prioritize", fixed), server.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, post("/prioritize", strings.NewReader(wholeNodes(nodes...))))
			var got extenderv1.HostPriorityList
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
				t.Fatalf("answer %d %s: %v", rec.Code, rec.Body.String(), err)
			}
			for i, hp := range got {
				if hp.Host != list[i].Host || hp.Score != tc.want[i] {
					t.Errorf("answer %+v, want scores %v", got, tc.want)
					break
				}
			}
			if !slices.Equal(list, original) {
				t.Errorf("the function's list became %+v", list)
			}
			l := lines()
			switch {
			case tc.logged == "" && len(l) != 0:
				t.Errorf("logged %q, want nothing", l)
			case tc.logged != "" && (len(l) != 1 || !strings.Contains(l[0], tc.logged)):
				t.Errorf("logged %q, want one line with %s", l, tc.logged)
			}
		})
	}
}

func TestAFilterAnswerWithWholeNodesIsWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	nodes := []v1.Node{kubeletNode(1), node("n2", "b"), kubeletNode(3), node("n3", "none")}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, post("/filter", strings.NewReader(wholeNodes(nodes...))))
	names := []string{nodes[0].Name, nodes[2].Name}
	want, err := json.Marshal(extenderv1.ExtenderFilterResult{
		Nodes:                      &v1.NodeList{Items: []v1.Node{nodes[0], nodes[2]}},
		NodeNames:                  &names,
		FailedNodes:                extenderv1.FailedNodesMap{"n2": "wrong zone"},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{"n3": "no zone"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Body.String(); got != string(want)+"\n" {
		t.Errorf("answer\n%s\nwant\n%s", got, want)
	}
}
