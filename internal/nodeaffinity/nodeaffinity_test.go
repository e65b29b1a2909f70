package nodeaffinity

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	helper "k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// podFromFuzz builds a pod with one required and one preferred term from
// fuzz input: values are comma-separated, an operator string is used as is
// (so unknown operators are exercised too).
func podFromFuzz(key, op, values, fieldOp, fieldValues string, selector bool) *v1.Pod {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	term := v1.NodeSelectorTerm{}
	if key != "" || op != "" {
		term.MatchExpressions = []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOperator(op), Values: split(values)}}
	}
	if fieldOp != "" {
		term.MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOperator(fieldOp), Values: split(fieldValues)}}
	}
	pod := &v1.Pod{Spec: v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution:  &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}},
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 3, Preference: term}},
	}}}}
	if selector {
		pod.Spec.NodeSelector = map[string]string{key: values}
	}
	return pod
}

// FuzzMatchesComponentHelpers checks that the allocation-free matchers
// agree with k8s.io/component-helpers, which kube-scheduler uses, on any
// input, and never panic.
func FuzzMatchesComponentHelpers(f *testing.F) {
	f.Add("zone", "In", "a,b", "In", "n1", "zone", "a", false)
	f.Add("gen", "Gt", "4", "", "", "gen", "5", false)
	f.Add("gen", "Lt", "x", "NotIn", "n1,n2", "gen", "5", true)
	f.Add("", "Exists", "", "In", "", "", "", false)
	f.Add("disk", "DoesNotExist", "", "Near", "n1", "other", "v", false)
	f.Add("bad key!", "In", "a", "", "", "bad key!", "a", true)
	f.Fuzz(func(t *testing.T, key, op, values, fieldOp, fieldValues, labelKey, labelValue string, selector bool) {
		pod := podFromFuzz(key, op, values, fieldOp, fieldValues, selector)
		for _, name := range []string{"n1", ""} {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelKey: labelValue, "zone": "a"}}}

			want, _ := helper.GetRequiredNodeAffinity(pod).Match(node)
			if got := RequiredOf(pod).Matches(node); got != want {
				t.Fatalf("required: got %v, component-helpers %v (node %q)", got, want, name)
			}

			terms := pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			wantPref, wantErr := helper.NewPreferredSchedulingTerms(terms)
			gotPref, gotErr := NewPreferred(terms)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("preferred parse error: got %v, component-helpers %v", gotErr, wantErr)
			}
			if wantErr == nil && gotPref.Score(node) != wantPref.Score(node) {
				t.Fatalf("preferred score: got %d, component-helpers %d", gotPref.Score(node), wantPref.Score(node))
			}
		}
	})
}

func TestSelectorErrReportsParseErrors(t *testing.T) {
	t.Parallel()
	s := NewSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
		{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gen", Operator: v1.NodeSelectorOpGt, Values: []string{"x"}}}},
		{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpExists}}},
	}})
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "matchExpressions[0]") || !strings.Contains(err.Error(), "matchFields[0].operator") {
		t.Fatalf("Err() = %v, want both terms' errors with their paths", err)
	}
	if NewSelector(&v1.NodeSelector{}).Err() != nil {
		t.Error("an empty selector reported an error")
	}
}
