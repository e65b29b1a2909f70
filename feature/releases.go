package feature

import (
	"fmt"
	"strings"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Release is one supported kube-scheduler release and what its plugins
// read, with its default feature gates.
type Release struct {
	// Version is the patch release reproduced, such as "v1.37.2".
	Version string
	// Features are the release's.
	Features Features
	// Profile is the release's default profile, with its default feature
	// gates: every plugin enabled at multiPoint, in order, with its score
	// weight (nil for none), as its configuration's defaulting starts
	// from.
	Profile []configv1.Plugin
}

// releases are the supported releases, newest first. Everything a plugin
// decides differently between them is a field of Features set here.
var releases = []Release{
	{
		Version: "v1.37.2",
		Features: Features{
			StorageCapacityScoring:        true,
			VolumeLimitScaling:            true,
			DRADeviceTaintRules:           true,
			NodeNamePreFilter:             true,
			ListedNamespacesOnly:          true,
			ImageVolumesInThreshold:       true,
			PreemptionMessageNamesVictims: true,
			BudgetStopsAtFirstViolation:   true,
			CELErrorsNameTheDevice:        true,

			PodEventsByRole:                  true,
			AnyAntiAffinityTermRequeues:      true,
			RegisteredEventsOnly:             true,
			ScaleUpAndPreemptionPolicyEvents: true,
			ResourceClaimDeleteEvents:        true,
			NominationRecordedOnAdd:          true,
		},
		Profile: profile(
			schedulingGates, prioritySort, nodeName, nodeUnschedulable, taintToleration, nodeAffinity, nodePorts,
			nodeResourcesFit, volumeRestrictions, nodeVolumeLimits, volumeBinding, volumeZone, podTopologySpread,
			interPodAffinity, dynamicResources, defaultPreemption, nodeResourcesBalancedAllocation, imageLocality,
			defaultBinder, nodeDeclaredFeatures),
	},
	{
		Version:  "v1.36.3",
		Features: Features{},
		Profile: profile(
			schedulingGates, prioritySort, nodeUnschedulable, nodeName, taintToleration, nodeAffinity, nodePorts,
			nodeResourcesFit, volumeRestrictions, nodeVolumeLimits, volumeBinding, volumeZone, podTopologySpread,
			interPodAffinity, dynamicResources, defaultPreemption, nodeResourcesBalancedAllocation, imageLocality,
			defaultBinder, nodeDeclaredFeatures),
	},
}

// The default profiles' plugins, with the score weights they have in
// every supported release. dynamicResources comes just before
// defaultPreemption and nodeDeclaredFeatures last, where kube-scheduler
// puts them when their feature gates are on.
var (
	schedulingGates                 = configv1.Plugin{Name: "SchedulingGates"}
	prioritySort                    = configv1.Plugin{Name: "PrioritySort"}
	nodeUnschedulable               = configv1.Plugin{Name: "NodeUnschedulable"}
	nodeName                        = configv1.Plugin{Name: "NodeName"}
	taintToleration                 = configv1.Plugin{Name: "TaintToleration", Weight: weight(3)}
	nodeAffinity                    = configv1.Plugin{Name: "NodeAffinity", Weight: weight(2)}
	nodePorts                       = configv1.Plugin{Name: "NodePorts"}
	nodeResourcesFit                = configv1.Plugin{Name: "NodeResourcesFit", Weight: weight(1)}
	volumeRestrictions              = configv1.Plugin{Name: "VolumeRestrictions"}
	nodeVolumeLimits                = configv1.Plugin{Name: "NodeVolumeLimits"}
	volumeBinding                   = configv1.Plugin{Name: "VolumeBinding"}
	volumeZone                      = configv1.Plugin{Name: "VolumeZone"}
	podTopologySpread               = configv1.Plugin{Name: "PodTopologySpread", Weight: weight(2)}
	interPodAffinity                = configv1.Plugin{Name: "InterPodAffinity", Weight: weight(2)}
	dynamicResources                = configv1.Plugin{Name: "DynamicResources", Weight: weight(2)}
	defaultPreemption               = configv1.Plugin{Name: "DefaultPreemption"}
	nodeResourcesBalancedAllocation = configv1.Plugin{Name: "NodeResourcesBalancedAllocation", Weight: weight(1)}
	imageLocality                   = configv1.Plugin{Name: "ImageLocality", Weight: weight(1)}
	defaultBinder                   = configv1.Plugin{Name: "DefaultBinder"}
	nodeDeclaredFeatures            = configv1.Plugin{Name: "NodeDeclaredFeatures"}
)

func weight(w int32) *int32 { return &w }

// profile returns a fresh copy of plugins, weights included, so that no
// caller can change a release's data.
func profile(plugins ...configv1.Plugin) []configv1.Plugin {
	out := make([]configv1.Plugin, len(plugins))
	for i, p := range plugins {
		out[i] = configv1.Plugin{Name: p.Name}
		if p.Weight != nil {
			out[i].Weight = weight(*p.Weight)
		}
	}
	return out
}

// Default returns the newest release's features.
func Default() Features { return releases[0].Features }

// Releases returns the supported releases, newest first. They are
// copies: changing one changes no release.
func Releases() []Release {
	out := make([]Release, len(releases))
	for i, r := range releases {
		out[i] = r.clone()
	}
	return out
}

func (r Release) clone() Release {
	r.Profile = profile(r.Profile...)
	return r
}

// ReleaseFor returns the supported release of version: a minor version
// ("1.37", "v1.37") or a patch release ("1.37.2", "v1.37.2"), which must
// be the one supported. Any other version is an error that names the
// supported ones.
func ReleaseFor(version string) (Release, error) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	for _, r := range releases {
		full := strings.TrimPrefix(r.Version, "v")
		if v == full || v == minor(full) {
			return r.clone(), nil
		}
	}
	supported := make([]string, len(releases))
	for i, r := range releases {
		supported[i] = r.Version
	}
	return Release{}, fmt.Errorf("kube-scheduler %q is not a supported release; supported: %s", version, strings.Join(supported, ", "))
}

// minor returns "1.37" of "1.37.2".
func minor(version string) string {
	if i := strings.LastIndexByte(version, '.'); i > 0 {
		return version[:i]
	}
	return version
}
