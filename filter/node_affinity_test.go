package filter

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func labelledNode(name string, labels map[string]string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
}

func podWithRequired(terms ...v1.NodeSelectorTerm) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
	}}}}
}

func expr(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func nameField(op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: op, Values: values}}}
}

func TestNodeAffinityFilter(t *testing.T) {
	t.Parallel()
	zoneA := map[string]string{"zone": "a", "gen": "5"}
	tests := []struct {
		name   string
		pod    *v1.Pod
		labels map[string]string
		want   *fwk.Status
	}{
		{"a pod without constraints fits any node", &v1.Pod{}, nil, nil},
		{"a matching nodeSelector fits", &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{"zone": "a"}}}, zoneA, nil},
		{"a nodeSelector label with another value is rejected", &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{"zone": "b"}}}, zoneA, affinityMismatch},
		{"a nodeSelector label the node lacks is rejected", &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}}, zoneA, affinityMismatch},
		{"In matches a listed value", podWithRequired(expr("zone", v1.NodeSelectorOpIn, "b", "a")), zoneA, nil},
		{"NotIn rejects a listed value", podWithRequired(expr("zone", v1.NodeSelectorOpNotIn, "a")), zoneA, affinityMismatch},
		{"NotIn matches a node without the label", podWithRequired(expr("disk", v1.NodeSelectorOpNotIn, "ssd")), zoneA, nil},
		{"Exists needs the label", podWithRequired(expr("disk", v1.NodeSelectorOpExists)), zoneA, affinityMismatch},
		{"DoesNotExist matches a node without the label", podWithRequired(expr("disk", v1.NodeSelectorOpDoesNotExist)), zoneA, nil},
		{"Gt compares integers", podWithRequired(expr("gen", v1.NodeSelectorOpGt, "4")), zoneA, nil},
		{"Gt is strict", podWithRequired(expr("gen", v1.NodeSelectorOpGt, "5")), zoneA, affinityMismatch},
		{"Lt compares integers", podWithRequired(expr("gen", v1.NodeSelectorOpLt, "10")), zoneA, nil},
		{"Gt with a non-integer value never matches", podWithRequired(expr("gen", v1.NodeSelectorOpGt, "five")), zoneA, affinityMismatch},
		{"an unknown operator never matches", podWithRequired(expr("zone", "Near", "a")), zoneA, affinityMismatch},
		{"a bad term does not stop a later good one", podWithRequired(expr("gen", v1.NodeSelectorOpGt, "x"), expr("zone", v1.NodeSelectorOpIn, "a")), zoneA, nil},
		{"terms are ORed", podWithRequired(expr("zone", v1.NodeSelectorOpIn, "b"), expr("gen", v1.NodeSelectorOpExists)), zoneA, nil},
		{"requirements within a term are ANDed", podWithRequired(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}, {Key: "disk", Operator: v1.NodeSelectorOpExists}}}), zoneA, affinityMismatch},
		{"an empty term matches nothing", podWithRequired(v1.NodeSelectorTerm{}), zoneA, affinityMismatch},
		{"no terms at all match nothing", podWithRequired(), zoneA, affinityMismatch},
		{"matchFields on metadata.name matches the node's name", podWithRequired(nameField(v1.NodeSelectorOpIn, "n1")), zoneA, nil},
		{"matchFields NotIn rejects the node's own name", podWithRequired(nameField(v1.NodeSelectorOpNotIn, "n1")), zoneA, affinityMismatch},
		{"matchFields with two values never matches", podWithRequired(nameField(v1.NodeSelectorOpIn, "n1", "n2")), zoneA, affinityMismatch},
		{"both nodeSelector and affinity must match", func() *v1.Pod {
			p := podWithRequired(expr("zone", v1.NodeSelectorOpIn, "a"))
			p.Spec.NodeSelector = map[string]string{"zone": "b"}
			return p
		}(), zoneA, affinityMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ni := labelledNode("n1", tc.labels)
			pl := &NodeAffinity{}
			// Once without PreFilter state, once with: the answers must agree.
			if got := pl.Filter(context.Background(), nil, tc.pod, ni); got != tc.want {
				t.Errorf("without state: got %v, want %v", got, tc.want)
			}
			state := fwk.NewCycleState(nil)
			if _, s := pl.PreFilter(context.Background(), state, tc.pod, nil); !s.IsSuccess() && !s.IsSkip() {
				return // PreFilter rejected; Filter would not run.
			}
			if got := pl.Filter(context.Background(), state, tc.pod, ni); got != tc.want {
				t.Errorf("with state: got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeAffinityPreFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		pod       *v1.Pod
		wantNames sets.Set[string]
		wantCode  fwk.Code
	}{
		{"a pod without constraints is skipped", &v1.Pod{}, nil, fwk.Skip},
		{"an empty but present nodeSelector is not skipped", &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{}}}, nil, fwk.Success},
		{"label terms keep every node", podWithRequired(expr("zone", v1.NodeSelectorOpIn, "a")), nil, fwk.Success},
		{"metadata.name terms narrow to their names", podWithRequired(nameField(v1.NodeSelectorOpIn, "n1"), nameField(v1.NodeSelectorOpIn, "n2", "n3")), sets.New("n1", "n2", "n3"), fwk.Success},
		{"a term without names keeps every node", podWithRequired(nameField(v1.NodeSelectorOpIn, "n1"), expr("zone", v1.NodeSelectorOpExists)), nil, fwk.Success},
		{"names within a term intersect", podWithRequired(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1", "n2"}},
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n2", "n3"}}}}), sets.New("n2"), fwk.Success},
		{"names that cannot all hold are a conflict", podWithRequired(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}},
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}}}}), nil, fwk.UnschedulableAndUnresolvable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, s := (&NodeAffinity{}).PreFilter(context.Background(), fwk.NewCycleState(nil), tc.pod, nil)
			if s.Code() != tc.wantCode {
				t.Fatalf("code = %v, want %v", s.Code(), tc.wantCode)
			}
			if tc.wantCode == fwk.UnschedulableAndUnresolvable && s.Message() != ErrReasonConflict {
				t.Errorf("reason = %q", s.Message())
			}
			if tc.wantNames == nil != res.AllNodes() || (tc.wantNames != nil && !res.NodeNames.Equal(tc.wantNames)) {
				t.Errorf("result = %v, want %v", res, tc.wantNames)
			}
		})
	}
}

func TestNodeAffinityAddedAffinity(t *testing.T) {
	t.Parallel()
	added := &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{expr("pool", v1.NodeSelectorOpIn, "batch")}}}
	pl, err := NewNodeAffinity(&configv1.NodeAffinityArgs{AddedAffinity: added})
	if err != nil {
		t.Fatal(err)
	}
	if got := pl.Filter(context.Background(), nil, &v1.Pod{}, labelledNode("n", map[string]string{"pool": "web"})); got != enforcedMismatch {
		t.Errorf("got %v, want the scheduler-enforced rejection", got)
	}
	if got := pl.Filter(context.Background(), nil, &v1.Pod{}, labelledNode("n", map[string]string{"pool": "batch"})); got != nil {
		t.Errorf("got %v, want a fit", got)
	}
	if _, s := pl.PreFilter(context.Background(), fwk.NewCycleState(nil), &v1.Pod{}, nil); s.IsSkip() {
		t.Error("PreFilter skipped a pod that added affinity constrains")
	}
	bad := &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{expr("gen", v1.NodeSelectorOpGt, "x")}}}
	const want = `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "x": `
	if _, err := NewNodeAffinity(&configv1.NodeAffinityArgs{AddedAffinity: bad}); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("NewNodeAffinity(unparsable Gt value) = %v, want kube-scheduler's %q...", err, want)
	}
}

func TestFiltersReportANodeInfoWithoutANodeAsAnError(t *testing.T) {
	t.Parallel()
	for _, pl := range []fwk.FilterPlugin{&NodeAffinity{}, &TaintToleration{}} {
		if got := pl.Filter(context.Background(), nil, &v1.Pod{}, nodeinfo.New(nil)); got.Code() != fwk.Error {
			t.Errorf("%s: got %v, want Error", pl.Name(), got)
		}
	}
}

func BenchmarkNodeAffinityFilter(b *testing.B) {
	pod := podWithRequired(expr("zone", v1.NodeSelectorOpIn, "a", "b"), nameField(v1.NodeSelectorOpNotIn, "other"))
	ni := labelledNode("n1", map[string]string{"zone": "b"})
	state := fwk.NewCycleState(nil)
	pl := &NodeAffinity{}
	pl.PreFilter(context.Background(), state, pod, nil)
	b.ReportAllocs()
	for b.Loop() {
		if s := pl.Filter(context.Background(), state, pod, ni); s != nil {
			b.Fatal(s)
		}
	}
}
