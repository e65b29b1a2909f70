package noderesources

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestFitArgsValidate(t *testing.T) {
	t.Parallel()
	ratio := func(shape ...UtilizationShapePoint) ScoringStrategy {
		return ScoringStrategy{Type: RequestedToCapacityRatio, Shape: shape}
	}
	tests := []struct {
		name string
		args FitArgs
		// wantErrs are substrings the error must contain; none means valid.
		wantErrs []string
	}{
		{name: "the zero value is valid"},
		{
			name: "explicit kube-scheduler defaults are valid",
			args: FitArgs{ScoringStrategy: ScoringStrategy{Type: LeastAllocated, Resources: []ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}}}},
		},
		{
			name: "ignored resources and groups that are qualified names are valid",
			args: FitArgs{IgnoredResources: []string{"example.com/foo"}, IgnoredResourceGroups: []string{"example.com"}},
		},
		{
			name:     "an ignored resource that is not a qualified name is rejected",
			args:     FitArgs{IgnoredResources: []string{"example.com/foo", "-bad"}},
			wantErrs: []string{`ignoredResources[1]: Invalid value: "-bad"`},
		},
		{
			name:     "an ignored resource group with a slash is rejected",
			args:     FitArgs{IgnoredResourceGroups: []string{"example.com/foo"}},
			wantErrs: []string{`ignoredResourceGroups[0]: Invalid value: "example.com/foo": resource group name can't contain '/'`},
		},
		{
			name:     "an unknown strategy is rejected with the supported ones",
			args:     FitArgs{ScoringStrategy: ScoringStrategy{Type: "Random"}},
			wantErrs: []string{`scoringStrategy.type: Unsupported value: "Random": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`},
		},
		{
			name:     "weight 0 is defaulted to 1 and so valid, but 101 and -1 are rejected",
			args:     FitArgs{ScoringStrategy: ScoringStrategy{Resources: []ResourceSpec{{Name: "cpu"}, {Name: "memory", Weight: 101}, {Name: "example.com/gpu", Weight: -1}}}},
			wantErrs: []string{"scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100]", "scoringStrategy.resources[2].weight: Invalid value: -1"},
		},
		{
			name: "weight 100 is valid",
			args: FitArgs{ScoringStrategy: ScoringStrategy{Type: MostAllocated, Resources: []ResourceSpec{{Name: "cpu", Weight: 100}}}},
		},
		{
			name: "a sorted in-range shape is valid",
			args: FitArgs{ScoringStrategy: ratio(UtilizationShapePoint{0, 0}, UtilizationShapePoint{100, 10})},
		},
		{
			name:     "RequestedToCapacityRatio without a shape is rejected",
			args:     FitArgs{ScoringStrategy: ratio()},
			wantErrs: []string{"scoringStrategy.shape: Required value: at least one point must be specified"},
		},
		{
			name:     "a shape out of order is rejected",
			args:     FitArgs{ScoringStrategy: ratio(UtilizationShapePoint{50, 1}, UtilizationShapePoint{50, 2})},
			wantErrs: []string{"scoringStrategy.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order"},
		},
		{
			name: "shape points out of range are each rejected",
			args: FitArgs{ScoringStrategy: ratio(UtilizationShapePoint{-1, 0}, UtilizationShapePoint{101, 11})},
			wantErrs: []string{
				"scoringStrategy.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
				"scoringStrategy.shape[1].utilization: Invalid value: 101: not in valid range [0, 100]",
				"scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]",
			},
		},
		{
			name:     "a shape with another strategy is rejected",
			args:     FitArgs{ScoringStrategy: ScoringStrategy{Type: MostAllocated, Shape: []UtilizationShapePoint{{0, 0}}}},
			wantErrs: []string{"scoringStrategy.shape: Forbidden: must be empty when type is not RequestedToCapacityRatio"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErr(t, tc.args.Validate(), "invalid NodeResourcesFit args", tc.wantErrs)
			_, err := NewFitScorer(tc.args)
			checkErr(t, err, "invalid NodeResourcesFit args", tc.wantErrs)
		})
	}
}

func TestBalancedAllocationArgsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     BalancedAllocationArgs
		wantErrs []string
	}{
		{name: "the zero value is valid"},
		{name: "weight 0 is defaulted to 1", args: BalancedAllocationArgs{Resources: []ResourceSpec{{Name: "cpu"}, {Name: "example.com/gpu"}}}},
		{
			name:     "a weight other than 1 is rejected",
			args:     BalancedAllocationArgs{Resources: []ResourceSpec{{Name: "cpu", Weight: 2}}},
			wantErrs: []string{"resources[0].weight: Invalid value: 2: must be 1"},
		},
		{
			name:     "a repeated resource is rejected",
			args:     BalancedAllocationArgs{Resources: []ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "cpu"}}},
			wantErrs: []string{`resources[2].name: Duplicate value: "cpu"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErr(t, tc.args.Validate(), "invalid NodeResourcesBalancedAllocation args", tc.wantErrs)
			_, err := NewBalancedScorer(tc.args)
			checkErr(t, err, "invalid NodeResourcesBalancedAllocation args", tc.wantErrs)
		})
	}
}

func checkErr(t *testing.T, err error, prefix string, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("got no error, want %q", want)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q does not start with %q", err, prefix)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestDefaultingFillsInKubeSchedulerDefaultsWithoutTouchingTheInput(t *testing.T) {
	t.Parallel()
	if got := (ScoringStrategy{}).Defaulted(); got.Type != LeastAllocated || !slices.Equal(got.Resources, []ResourceSpec{{"cpu", 1}, {"memory", 1}}) {
		t.Errorf("zero strategy defaulted to %+v, want LeastAllocated over cpu:1 memory:1", got)
	}
	in := []ResourceSpec{{Name: "cpu"}, {Name: "memory", Weight: 3}}
	got := ScoringStrategy{Type: MostAllocated, Resources: in}.Defaulted()
	if got.Type != MostAllocated || !slices.Equal(got.Resources, []ResourceSpec{{"cpu", 1}, {"memory", 3}}) {
		t.Errorf("defaulted to %+v, want MostAllocated over cpu:1 memory:3", got)
	}
	if in[0].Weight != 0 {
		t.Errorf("Defaulted changed its input: %+v", in)
	}
	if got := (BalancedAllocationArgs{}).Defaulted(); !slices.Equal(got.Resources, []ResourceSpec{{"cpu", 1}, {"memory", 1}}) {
		t.Errorf("zero balanced args defaulted to %+v, want cpu:1 memory:1", got)
	}
}
