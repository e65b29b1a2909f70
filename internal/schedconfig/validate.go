package schedconfig

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/nodeinfo"
)

// removedPlugins are the plugins kube-scheduler's validation refuses at
// an extension point or in pluginConfig. (It names the version they went
// away in "v1", the core API's, whatever the configuration's.)
var removedPlugins = []string{"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"}

const removedIn = "v1"

// Validate checks a defaulted configuration as kube-scheduler's
// ValidateKubeSchedulerConfiguration does, with its messages, and returns
// nil or its aggregate of errors. apiVersion is the configuration's
// (kube-scheduler names it in its message on a removed plugin).
//
// As in kube-scheduler, NodeResourcesFit's args are not checked here
// (its table of validators has them under another name); the plugin
// checks them when it is built.
func Validate(cfg *configv1.KubeSchedulerConfiguration, fs feature.Features) error {
	var errs []error
	if cfg.ClientConnection.Burst < 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "burst"), cfg.ClientConnection.Burst, "must be non-negative"))
	}
	errs = append(errs, validateLeaderElection(cfg)...)
	leaderElect := cfg.LeaderElection.LeaderElect != nil && *cfg.LeaderElection.LeaderElect
	if leaderElect && cfg.LeaderElection.ResourceLock != "leases" {
		errs = append(errs, field.Invalid(field.NewPath("leaderElection", "resourceLock"), cfg.LeaderElection.ResourceLock, `resourceLock value must be "leases"`))
	}
	if p := deref(cfg.Parallelism); p <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), p, "should be an integer value greater than zero"))
	}
	profilesPath := field.NewPath("profiles")
	if len(cfg.Profiles) == 0 {
		errs = append(errs, field.Required(profilesPath, ""))
	} else {
		seen := map[string]int{}
		for i := range cfg.Profiles {
			prof := &cfg.Profiles[i]
			path := profilesPath.Index(i)
			errs = append(errs, validateProfile(path, cfg.APIVersion, prof, fs)...)
			name := deref(prof.SchedulerName)
			if j, ok := seen[name]; ok {
				errs = append(errs, field.Duplicate(path.Child("schedulerName"), profilesPath.Index(j).Child("schedulerName")))
			}
			seen[name] = i
		}
		errs = append(errs, validateCommonQueueSort(profilesPath, cfg.Profiles)...)
	}
	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), cfg.PercentageOfNodesToScore))
	initial, maxBackoff := deref(cfg.PodInitialBackoffSeconds), deref(cfg.PodMaxBackoffSeconds)
	if initial <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), initial, "must be greater than 0"))
	}
	if maxBackoff < initial {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), maxBackoff, "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	errs = append(errs, validateExtenders(field.NewPath("extenders"), cfg.Extenders)...)
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}

// validateLeaderElection is component-base's check of leader election,
// which applies only when it is on.
func validateLeaderElection(cfg *configv1.KubeSchedulerConfiguration) []error {
	le := &cfg.LeaderElection
	if le.LeaderElect == nil || !*le.LeaderElect {
		return nil
	}
	path := field.NewPath("leaderElection")
	var errs []error
	if le.LeaseDuration.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("leaseDuration"), le.LeaseDuration, "must be greater than zero"))
	}
	if le.RenewDeadline.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("renewDeadline"), le.RenewDeadline, "must be greater than zero"))
	}
	if le.RetryPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("retryPeriod"), le.RetryPeriod, "must be greater than zero"))
	}
	if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
		// The value shown is the renew deadline, as upstream shows it.
		errs = append(errs, field.Invalid(path.Child("leaseDuration"), le.RenewDeadline, "must be greater than `RenewDeadline`"))
	}
	if le.ResourceLock == "" {
		errs = append(errs, field.Required(path.Child("resourceLock"), ""))
	}
	if le.ResourceNamespace == "" {
		errs = append(errs, field.Required(path.Child("resourceNamespace"), ""))
	}
	if le.ResourceName == "" {
		errs = append(errs, field.Required(path.Child("resourceName"), ""))
	}
	return errs
}

// validatePercentage returns an error for a percentage outside [0, 100],
// else a nil error (which the aggregate drops).
func validatePercentage(path *field.Path, p *int32) error {
	if p != nil && (*p < 0 || *p > 100) {
		return field.Invalid(path, *p, "not in valid range [0-100]")
	}
	return nil
}

func removed(name string) bool {
	for _, r := range removedPlugins {
		if r == name {
			return true
		}
	}
	return false
}

func removedMessage(apiVersion string) string {
	return fmt.Sprintf("was invalid in version %q (KubeSchedulerConfiguration is version %q)", removedIn, apiVersion)
}

func validateProfile(path *field.Path, apiVersion string, prof *configv1.KubeSchedulerProfile, fs feature.Features) []error {
	var errs []error
	if deref(prof.SchedulerName) == "" {
		errs = append(errs, field.Required(path.Child("schedulerName"), ""))
	}
	errs = append(errs, validatePercentage(path.Child("percentageOfNodesToScore"), prof.PercentageOfNodesToScore))
	if p := prof.Plugins; p != nil {
		// Every extension point but multiPoint and the placement ones.
		for _, point := range []struct {
			name string
			set  configv1.PluginSet
		}{
			{"preEnqueue", p.PreEnqueue}, {"queueSort", p.QueueSort}, {"preFilter", p.PreFilter}, {"filter", p.Filter},
			{"postFilter", p.PostFilter}, {"preScore", p.PreScore}, {"score", p.Score}, {"reserve", p.Reserve},
			{"permit", p.Permit}, {"preBind", p.PreBind}, {"bind", p.Bind}, {"postBind", p.PostBind},
		} {
			for i, pl := range point.set.Enabled {
				if removed(pl.Name) {
					errs = append(errs, field.Invalid(path.Child("plugins", point.name, "enabled").Index(i), pl.Name, removedMessage(apiVersion)))
				}
			}
		}
	}
	seen := map[string]bool{}
	for i, pc := range prof.PluginConfig {
		pcPath := path.Child("pluginConfig").Index(i)
		if seen[pc.Name] {
			errs = append(errs, field.Duplicate(pcPath, pc.Name))
		}
		seen[pc.Name] = true
		if removed(pc.Name) {
			errs = append(errs, field.Invalid(pcPath, pc.Name, removedMessage(apiVersion)))
			continue
		}
		if err := validateArgs(pcPath.Child("args"), pc.Name, pc.Args.Object, fs); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// validateArgs checks the args of the default plugins kube-scheduler's
// configuration validation checks.
func validateArgs(path *field.Path, plugin string, args any, fs feature.Features) error {
	var want reflect.Type
	switch plugin {
	case "DefaultPreemption":
		want = reflect.TypeFor[*configv1.DefaultPreemptionArgs]()
	case "InterPodAffinity":
		want = reflect.TypeFor[*configv1.InterPodAffinityArgs]()
	case "NodeAffinity":
		want = reflect.TypeFor[*configv1.NodeAffinityArgs]()
	case "NodeResourcesBalancedAllocation":
		want = reflect.TypeFor[*configv1.NodeResourcesBalancedAllocationArgs]()
	case "PodTopologySpread":
		want = reflect.TypeFor[*configv1.PodTopologySpreadArgs]()
	case "VolumeBinding":
		want = reflect.TypeFor[*configv1.VolumeBindingArgs]()
	case "DynamicResources":
		want = reflect.TypeFor[*configv1.DynamicResourcesArgs]()
	default:
		return nil
	}
	if reflect.TypeOf(args) != want {
		return field.Invalid(path, internalJSON(args), "has to match plugin args")
	}
	return argsErrors(path, args, fs)
}

// argsErrors checks args of one of kube-scheduler's plugins as its
// validation does, NodeResourcesFit's included.
func argsErrors(path *field.Path, args any, fs feature.Features) error {
	var errs field.ErrorList
	switch a := args.(type) {
	case *configv1.NodeResourcesFitArgs:
		errs = validateNodeResourcesFitArgs(path, a)
	case *configv1.DefaultPreemptionArgs:
		errs = ValidateDefaultPreemptionArgs(path, deref(a.MinCandidateNodesPercentage), deref(a.MinCandidateNodesAbsolute))
	case *configv1.InterPodAffinityArgs:
		if w := deref(a.HardPodAffinityWeight); w < 0 || w > 100 {
			errs = append(errs, field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0, 100]"))
		}
	case *configv1.NodeAffinityArgs:
		return validateNodeAffinityArgs(path, a)
	case *configv1.NodeResourcesBalancedAllocationArgs:
		seen := map[string]bool{}
		for i, r := range a.Resources {
			p := path.Child("resources").Index(i)
			if seen[r.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
			}
			seen[r.Name] = true
			if r.Weight != 1 {
				errs = append(errs, field.Invalid(p.Child("weight"), r.Weight, "must be 1"))
			}
		}
	case *configv1.PodTopologySpreadArgs:
		errs = validatePodTopologySpreadArgs(path, a)
	case *configv1.VolumeBindingArgs:
		errs = validateVolumeBindingArgs(path, a, fs.StorageCapacityScoring)
	case *configv1.DynamicResourcesArgs:
		// DRASchedulerFilterTimeout, DRADeviceBindingConditions and
		// DRAResourceClaimDeviceStatus are on.
		if a.FilterTimeout != nil && a.FilterTimeout.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child("filterTimeout"), a.FilterTimeout, "must be zero or positive"))
		}
		if a.BindingTimeout != nil && a.BindingTimeout.Duration < time.Second {
			errs = append(errs, field.Invalid(path.Child("bindingTimeout"), a.BindingTimeout, "must be at least 1 second"))
		}
	}
	return errs.ToAggregate()
}

// validateVolumeBindingArgs is kube-scheduler's check of
// VolumeBindingArgs, with the StorageCapacityScoring feature gate on or
// off.
func validateVolumeBindingArgs(path *field.Path, a *configv1.VolumeBindingArgs, capacityScoring bool) field.ErrorList {
	var errs field.ErrorList
	if t := deref(a.BindTimeoutSeconds); t < 0 {
		errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), t, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	switch {
	case capacityScoring:
		errs = append(errs, validateFunctionShape(a.Shape, path.Child("shape"))...)
	case a.Shape != nil:
		errs = append(errs, field.Invalid(path.Child("shape"), internalShape(a.Shape), "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
	}
	return errs
}

// ValidateDefaultPreemptionArgs is kube-scheduler's check of
// DefaultPreemptionArgs.
func ValidateDefaultPreemptionArgs(path *field.Path, percentage, absolute int32) field.ErrorList {
	var errs field.ErrorList
	percentagePath, absolutePath := path.Child("minCandidateNodesPercentage"), path.Child("minCandidateNodesAbsolute")
	if percentage < 0 || percentage > 100 {
		errs = append(errs, field.Invalid(percentagePath, percentage, "not in valid range [0, 100]"))
	}
	if absolute < 0 {
		errs = append(errs, field.Invalid(absolutePath, absolute, "not in valid range [0, inf)"))
	}
	if percentage == 0 && absolute == 0 {
		errs = append(errs,
			field.Invalid(percentagePath, percentage, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absolutePath, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs
}

func validateNodeAffinityArgs(path *field.Path, a *configv1.NodeAffinityArgs) error {
	affinity := a.AddedAffinity
	if affinity == nil {
		return nil
	}
	var errs []error
	if ns := affinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if _, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	if terms := affinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(path.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}

func validatePodTopologySpreadArgs(path *field.Path, a *configv1.PodTopologySpreadArgs) field.ErrorList {
	var errs field.ErrorList
	typePath := path.Child("defaultingType")
	switch {
	case a.DefaultingType != configv1.SystemDefaulting && a.DefaultingType != configv1.ListDefaulting:
		errs = append(errs, field.NotSupported(typePath, a.DefaultingType, []string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)}))
	case a.DefaultingType == configv1.SystemDefaulting && len(a.DefaultConstraints) > 0:
		errs = append(errs, field.Invalid(typePath, a.DefaultingType, "when .defaultConstraints are not empty"))
	}
	listPath := path.Child("defaultConstraints")
	for i, c := range a.DefaultConstraints {
		p := listPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for _, other := range a.DefaultConstraints[:i] {
			if c.TopologyKey == other.TopologyKey && c.WhenUnsatisfiable == other.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs
}

// internalPluginSet and internalPlugin print as kube-scheduler's internal
// types do in its messages: field names as JSON keys, weight 0 for none.
type internalPluginSet struct {
	Enabled, Disabled []internalPlugin
}

type internalPlugin struct {
	Name   string
	Weight int32
}

func toInternal(set configv1.PluginSet) internalPluginSet {
	conv := func(ps []configv1.Plugin) []internalPlugin {
		if ps == nil {
			return nil
		}
		out := make([]internalPlugin, len(ps))
		for i, p := range ps {
			out[i] = internalPlugin{Name: p.Name, Weight: deref(p.Weight)}
		}
		return out
	}
	return internalPluginSet{Enabled: conv(set.Enabled), Disabled: conv(set.Disabled)}
}

// internalShape prints a shape as kube-scheduler's internal type does.
func internalShape(shape []configv1.UtilizationShapePoint) any {
	type point struct{ Utilization, Score int32 }
	out := make([]point, len(shape))
	for i, p := range shape {
		out[i] = point{p.Utilization, p.Score}
	}
	return out
}

// validateCommonQueueSort requires every profile to have the first's
// queue sort plugins and args.
func validateCommonQueueSort(path *field.Path, profiles []configv1.KubeSchedulerProfile) []error {
	var errs []error
	var canon internalPluginSet
	var queueSort string
	var queueSortArgs any
	if p := profiles[0].Plugins; p != nil {
		canon = toInternal(p.QueueSort)
		if len(p.QueueSort.Enabled) > 0 {
			queueSort = p.QueueSort.Enabled[0].Name
		}
		if n := len(p.QueueSort.Enabled); n > 1 {
			errs = append(errs, field.Invalid(path.Index(0).Child("plugins", "queueSort", "Enabled"), n, "only one queue sort plugin can be enabled"))
		}
	}
	for _, pc := range profiles[0].PluginConfig {
		if queueSort != "" && pc.Name == queueSort {
			queueSortArgs = ArgsObject(pc.Args)
		}
	}
	for i := 1; i < len(profiles); i++ {
		var curr internalPluginSet
		if p := profiles[i].Plugins; p != nil {
			curr = toInternal(p.QueueSort)
		}
		if !reflect.DeepEqual(canon, curr) {
			errs = append(errs, field.Invalid(path.Index(i).Child("plugins", "queueSort"), curr, "must be the same for all profiles"))
		}
		for _, pc := range profiles[i].PluginConfig {
			// Without a queue sort plugin in the first profile, its
			// name is "", which an unnamed pluginConfig has too.
			if args := ArgsObject(pc.Args); pc.Name == queueSort && !argsEqual(queueSortArgs, args) {
				errs = append(errs, field.Invalid(path.Index(i).Child("pluginConfig", "args"), internalJSON(args), "queueSort must be the same for all profiles"))
			}
		}
	}
	return errs
}

// validateExtenders checks the extenders' weights, managed resources and
// binders.
func validateExtenders(path *field.Path, extenders []configv1.Extender) []error {
	var errs []error
	binders := 0
	managed := map[string]bool{}
	for i, ext := range extenders {
		p := path.Index(i)
		if ext.PrioritizeVerb != "" && ext.Weight <= 0 {
			errs = append(errs, field.Invalid(p.Child("weight"), ext.Weight, "must have a positive weight applied to it"))
		}
		if ext.BindVerb != "" {
			binders++
		}
		for j, r := range ext.ManagedResources {
			namePath := p.Child("managedResources").Index(j).Child("name")
			errs = append(errs, validateExtendedResourceName(namePath, v1.ResourceName(r.Name))...)
			if managed[r.Name] {
				errs = append(errs, field.Invalid(namePath, r.Name, "duplicate extender managed resource name"))
			}
			managed[r.Name] = true
		}
	}
	if binders > 1 {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("found %d extenders implementing bind", binders), "only one extender can implement bind"))
	}
	return errs
}

func validateExtendedResourceName(path *field.Path, name v1.ResourceName) []error {
	var errs []error
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !nodeinfo.IsExtendedResourceName(name) {
		errs = append(errs, field.Invalid(path, string(name), "is an invalid extended resource name"))
	}
	return errs
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ArgsObject is what conversion to kube-scheduler's internal version
// makes of args, and what its plugin factories get: the decoded object,
// raw args as a runtime.Unknown, or nil.
func ArgsObject(args runtime.RawExtension) runtime.Object {
	switch {
	case args.Object != nil:
		return args.Object
	case len(args.Raw) == 0 || string(args.Raw) == "null":
		return nil
	}
	return &runtime.Unknown{Raw: args.Raw, ContentType: runtime.ContentTypeJSON}
}

// argsEqual compares two profiles' args as kube-scheduler compares its
// internal objects, whose kind and version conversion leaves out.
func argsEqual(a, b any) bool {
	strip := func(v any) any {
		if o, ok := v.(runtime.Object); ok && o != nil && !reflect.ValueOf(o).IsNil() {
			o = o.DeepCopyObject()
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			return o
		}
		return v
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// internalJSON renders v as kube-scheduler's messages render its internal
// types, which have no JSON tags: fields of the configuration's own types
// under their Go names, in order, without the kind and version, which
// conversion leaves empty; the core types they hold as JSON.
func internalJSON(v any) json.RawMessage {
	var b strings.Builder
	writeInternal(&b, reflect.ValueOf(v))
	return json.RawMessage(b.String())
}

// configPkg is the package of the configuration's v1 types.
var configPkg = reflect.TypeFor[configv1.Plugin]().PkgPath()

func writeInternal(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("null")
		return
	}
	if v.Type().Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(v.Type()).Implements(reflect.TypeFor[json.Marshaler]()) {
		if v.Kind() != reflect.Pointer || !v.IsNil() {
			if data, err := json.Marshal(v.Interface()); err == nil {
				b.Write(data)
				return
			}
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		writeInternal(b, v.Elem())
	case reflect.Struct:
		if v.Type().PkgPath() != configPkg {
			// Core types, tagged alike in both versions.
			data, err := json.Marshal(v.Interface())
			if err != nil {
				data = []byte("null")
			}
			b.Write(data)
			return
		}
		b.WriteByte('{')
		first := true
		sep := func() {
			if !first {
				b.WriteByte(',')
			}
			first = false
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Type == reflect.TypeFor[metav1.TypeMeta]() {
				// Conversion to the internal version leaves it empty.
				continue
			}
			sep()
			fmt.Fprintf(b, "%q:", f.Name)
			writeInternal(b, v.Field(i))
		}
		b.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeInternal(b, v.Index(i))
		}
		b.WriteByte(']')
	default:
		data, err := json.Marshal(v.Interface())
		if err != nil {
			data = []byte("null")
		}
		b.Write(data)
	}
}
