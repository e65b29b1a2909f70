package schedconfig

import (
	"fmt"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
)

// PluginArgs returns what one of kube-scheduler's plugins is built from
// when given args: a deep copy with kube-scheduler's defaults filled in
// (T's defaults for nil args), checked as the plugin's constructor checks
// it, with kube-scheduler's messages and field paths relative to the args
// ("scoringStrategy.type: Unsupported value: ..."). args is not modified.
func PluginArgs[T any, P interface {
	*T
	runtime.Object
}](args P) (P, error) {
	out := P(new(T))
	if args != nil {
		out = args.DeepCopyObject().(P)
	}
	defaultArgs(out, feature.Default())
	if err := argsErrors(nil, out, feature.Default()); err != nil {
		return nil, err
	}
	return out, nil
}

// CapacityScoringArgs is [PluginArgs] for VolumeBinding with the alpha
// StorageCapacityScoring feature gate on: an empty shape defaults to
// kube-scheduler's, which favours nodes with more room, and the shape is
// checked rather than refused.
func CapacityScoringArgs(args *configv1.VolumeBindingArgs) (*configv1.VolumeBindingArgs, error) {
	out := &configv1.VolumeBindingArgs{}
	if args != nil {
		out = args.DeepCopy()
	}
	defaultArgs(out, feature.Features{StorageCapacityScoring: true})
	if err := validateVolumeBindingArgs(nil, out, true).ToAggregate(); err != nil {
		return nil, err
	}
	return out, nil
}

// defaultShape is VolumeBinding's shape when StorageCapacityScoring is on
// and none is given: score 10 at 0% utilization falling to 0 at 100%,
// which favours nodes with more room.
func defaultShape() []configv1.UtilizationShapePoint {
	return []configv1.UtilizationShapePoint{{Utilization: 0, Score: maxCustomPriorityScore}, {Utilization: maxUtilization, Score: 0}}
}

// Bounds of a scoring shape's points.
const (
	maxUtilization         = 100
	maxCustomPriorityScore = 10
	maxResourceWeight      = 100
)

var scoringStrategyTypes = []string{string(configv1.LeastAllocated), string(configv1.MostAllocated), string(configv1.RequestedToCapacityRatio)}

// validateNodeResourcesFitArgs is kube-scheduler's check of
// NodeResourcesFitArgs, which its configuration validation skips and its
// plugin constructor makes.
func validateNodeResourcesFitArgs(path *field.Path, a *configv1.NodeResourcesFitArgs) field.ErrorList {
	var errs field.ErrorList
	for i, name := range a.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(name, path.Child("ignoredResources").Index(i))...)
	}
	for i, group := range a.IgnoredResourceGroups {
		p := path.Child("ignoredResourceGroups").Index(i)
		if strings.Contains(group, "/") {
			errs = append(errs, field.Invalid(p, group, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(group, p)...)
	}
	strategyPath := path.Child("scoringStrategy")
	s := a.ScoringStrategy
	if s == nil {
		return append(errs, field.Required(strategyPath, "ScoringStrategy field is required"))
	}
	supported := false
	for _, t := range scoringStrategyTypes {
		supported = supported || string(s.Type) == t
	}
	if !supported {
		errs = append(errs, field.NotSupported(strategyPath.Child("type"), s.Type, scoringStrategyTypes))
	}
	for i, r := range s.Resources {
		if r.Weight <= 0 || r.Weight > maxResourceWeight {
			msg := fmt.Sprintf("resource weight of %v not in valid range (0, %d]", r.Name, maxResourceWeight)
			errs = append(errs, field.Invalid(strategyPath.Child("resources").Index(i).Child("weight"), r.Weight, msg))
		}
	}
	ratioPath := strategyPath.Child("requestedToCapacityRatio")
	switch {
	case s.Type == configv1.RequestedToCapacityRatio && s.RequestedToCapacityRatio == nil:
		errs = append(errs, field.Required(ratioPath, "must be specified when type is RequestedToCapacityRatio"))
	case s.Type == configv1.RequestedToCapacityRatio:
		errs = append(errs, validateFunctionShape(s.RequestedToCapacityRatio.Shape, ratioPath.Child("shape"))...)
	case s.RequestedToCapacityRatio != nil:
		errs = append(errs, field.Forbidden(ratioPath, "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs
}

// validateFunctionShape checks a scoring shape as kube-scheduler does: at
// least one point, utilizations increasing within [0, 100], scores within
// [0, 10].
func validateFunctionShape(shape []configv1.UtilizationShapePoint, path *field.Path) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > maxUtilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, fmt.Sprintf("not in valid range [0, %d]", maxUtilization)))
		}
		if p.Score < 0 || p.Score > maxCustomPriorityScore {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), p.Score, fmt.Sprintf("not in valid range [0, %d]", maxCustomPriorityScore)))
		}
	}
	return errs
}
