package schedconfig

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

func i32(v int32) *int32 { return &v }

// pluginArgs is PluginArgs for any of the args types it takes.
func pluginArgs(args runtime.Object) error {
	var err error
	switch a := args.(type) {
	case *configv1.NodeResourcesFitArgs:
		_, err = PluginArgs(a)
	case *configv1.NodeResourcesBalancedAllocationArgs:
		_, err = PluginArgs(a)
	case *configv1.PodTopologySpreadArgs:
		_, err = PluginArgs(a)
	case *configv1.InterPodAffinityArgs:
		_, err = PluginArgs(a)
	case *configv1.VolumeBindingArgs:
		_, err = PluginArgs(a)
	case *configv1.DefaultPreemptionArgs:
		_, err = PluginArgs(a)
	case *configv1.NodeAffinityArgs:
		_, err = PluginArgs(a)
	case *configv1.DynamicResourcesArgs:
		_, err = PluginArgs(a)
	}
	return err
}

func TestPluginArgsChecksAsKubeSchedulersConstructorsDo(t *testing.T) {
	t.Parallel()
	strategy := func(s configv1.ScoringStrategy) *configv1.NodeResourcesFitArgs {
		return &configv1.NodeResourcesFitArgs{ScoringStrategy: &s}
	}
	ratio := func(shape ...configv1.UtilizationShapePoint) *configv1.NodeResourcesFitArgs {
		return strategy(configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio,
			RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: shape}})
	}
	constraint := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule}
	with := func(f func(*v1.TopologySpreadConstraint)) v1.TopologySpreadConstraint {
		c := constraint
		f(&c)
		return c
	}
	list := func(cs ...v1.TopologySpreadConstraint) *configv1.PodTopologySpreadArgs {
		return &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: cs}
	}
	tests := []struct {
		name string
		args runtime.Object
		want string // the whole error; "" for none
	}{
		{name: "empty NodeResourcesFit args are the defaults", args: &configv1.NodeResourcesFitArgs{}},
		{name: "qualified ignored resources and groups are valid",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/foo"}, IgnoredResourceGroups: []string{"example.com"}}},
		{name: "an ignored resource that is not a qualified name is refused",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/foo", "-bad"}},
			want: `ignoredResources[1]: Invalid value: "-bad": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{name: "an ignored resource group with a slash is refused",
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com/foo"}},
			want: `ignoredResourceGroups[0]: Invalid value: "example.com/foo": resource group name can't contain '/'`},
		{name: "a strategy without a type is refused, as kube-scheduler defaults the type only with the strategy",
			args: strategy(configv1.ScoringStrategy{Resources: []configv1.ResourceSpec{{Name: "cpu"}}}),
			want: `scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`},
		{name: "weight 0 is defaulted to 1, but 101 and -1 are refused",
			args: strategy(configv1.ScoringStrategy{Type: configv1.MostAllocated, Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory", Weight: 101}, {Name: "example.com/gpu", Weight: -1}}}),
			want: "[scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100], " +
				"scoringStrategy.resources[2].weight: Invalid value: -1: resource weight of example.com/gpu not in valid range (0, 100]]"},
		{name: "a sorted shape in range is valid", args: ratio(configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10})},
		{name: "RequestedToCapacityRatio without its parameters is refused",
			args: strategy(configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio}),
			want: "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio"},
		{name: "an empty shape is refused", args: ratio(),
			want: "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"},
		{name: "a shape out of order is refused",
			args: ratio(configv1.UtilizationShapePoint{Utilization: 50, Score: 1}, configv1.UtilizationShapePoint{Utilization: 50, Score: 2}),
			want: "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order"},
		{name: "every shape point out of range is refused",
			args: ratio(configv1.UtilizationShapePoint{Utilization: -1, Score: 0}, configv1.UtilizationShapePoint{Utilization: 101, Score: 11}),
			want: "[scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: -1: not in valid range [0, 100], " +
				"scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not in valid range [0, 100], " +
				"scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: 11: not in valid range [0, 10]]"},
		{name: "a shape with another strategy is refused",
			args: strategy(configv1.ScoringStrategy{Type: configv1.LeastAllocated, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{}}),
			want: "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"},

		{name: "empty NodeResourcesBalancedAllocation args are the defaults", args: &configv1.NodeResourcesBalancedAllocationArgs{}},
		{name: "a balanced resource of weight 2 is refused",
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 2}}},
			want: "resources[0].weight: Invalid value: 2: must be 1"},
		{name: "a repeated balanced resource is refused",
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "cpu"}}},
			want: `resources[2].name: Duplicate value: "cpu"`},

		{name: "empty PodTopologySpread args are System defaulting", args: &configv1.PodTopologySpreadArgs{}},
		{name: "a list of sound constraints is valid", args: list(constraint)},
		{name: "an empty list is valid", args: list()},
		{name: "an unknown defaulting type is refused", args: &configv1.PodTopologySpreadArgs{DefaultingType: "Zonal"},
			want: `defaultingType: Unsupported value: "Zonal": supported values: "System", "List"`},
		{name: "constraints with System defaulting are refused",
			args: &configv1.PodTopologySpreadArgs{DefaultConstraints: []v1.TopologySpreadConstraint{constraint}},
			want: `defaultingType: Invalid value: "System": when .defaultConstraints are not empty`},
		{name: "a maxSkew of zero is refused", args: list(with(func(c *v1.TopologySpreadConstraint) { c.MaxSkew = 0 })),
			want: "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"},
		{name: "an empty topology key is refused", args: list(with(func(c *v1.TopologySpreadConstraint) { c.TopologyKey = "" })),
			want: "defaultConstraints[0].topologyKey: Required value: can not be empty"},
		{name: "an unknown whenUnsatisfiable is refused", args: list(with(func(c *v1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "Maybe" })),
			want: `defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"`},
		{name: "a label selector is refused", args: list(with(func(c *v1.TopologySpreadConstraint) { c.LabelSelector = &metav1.LabelSelector{} })),
			want: "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"},
		{name: "a repeated key and action is refused", args: list(constraint, constraint),
			want: `defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"`},

		{name: "hardPodAffinityWeight 0 turns that scoring off", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: i32(0)}},
		{name: "hardPodAffinityWeight 101 is refused", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: i32(101)},
			want: "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},

		{name: "a volume binding shape is checked, StorageCapacityScoring being on",
			args: &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 101, Score: 10}}},
			want: "shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"},

		{name: "unset preemption fields take the defaults", args: &configv1.DefaultPreemptionArgs{MinCandidateNodesAbsolute: i32(0)}},

		{name: "a negative filter timeout is refused", args: &configv1.DynamicResourcesArgs{FilterTimeout: &metav1.Duration{Duration: -1}},
			want: `filterTimeout: Invalid value: "-1ns": must be zero or positive`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := tc.args.DeepCopyObject()
			err := pluginArgs(tc.args)
			if got := errString(err); got != tc.want {
				t.Errorf("PluginArgs:\n got  %s\n want %s", got, tc.want)
			}
			if !reflect.DeepEqual(before, tc.args) {
				t.Error("PluginArgs modified its argument")
			}
		})
	}
}

func TestPluginArgsDefaultsACopy(t *testing.T) {
	t.Parallel()
	got, err := PluginArgs[configv1.NodeResourcesFitArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.ScoringStrategy; s == nil || s.Type != configv1.LeastAllocated || len(s.Resources) != 2 {
		t.Errorf("nil NodeResourcesFit args defaulted to %+v, want LeastAllocated over cpu and memory", s)
	}
	in := &configv1.InterPodAffinityArgs{}
	out, err := PluginArgs(in)
	if err != nil || out == in || in.HardPodAffinityWeight != nil || *out.HardPodAffinityWeight != 1 {
		t.Errorf("PluginArgs(%+v) = %+v, %v; want a defaulted copy", in, out, err)
	}
}

func TestCapacityScoringArgs(t *testing.T) {
	t.Parallel()
	got, err := CapacityScoringArgs(nil)
	if err != nil || len(got.Shape) != 2 || got.Shape[0].Score != 10 || got.Shape[1].Score != 0 {
		t.Errorf("CapacityScoringArgs(nil) = %+v, %v; want the default shape falling from 10 to 0", got, err)
	}
	_, err = CapacityScoringArgs(&configv1.VolumeBindingArgs{BindTimeoutSeconds: new(int64(-1)), Shape: []configv1.UtilizationShapePoint{{Utilization: 101, Score: 1}}})
	const want = "[bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value, shape[0].utilization: Invalid value: 101: not in valid range [0, 100]]"
	if errString(err) != want {
		t.Errorf("CapacityScoringArgs:\n got  %v\n want %s", err, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
