package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// ConfigVerdict is what kube-scheduler makes of a configuration file.
type ConfigVerdict struct {
	// Decoded is the configuration as its v1 decoder reads it (strictly,
	// with defaulting), as JSON; empty when decoding fails with
	// DecodeError.
	Decoded     json.RawMessage `json:"decoded,omitempty"`
	DecodeError string          `json:"decodeError,omitempty"`
	// Invalid are the messages of ValidateKubeSchedulerConfiguration's
	// error, in its order, when it has one; InvalidText is the error.
	Invalid     []string `json:"invalid,omitempty"`
	InvalidText string   `json:"invalidText,omitempty"`
	// Written is a valid configuration as kube-scheduler writes what it
	// runs with (--write-config-to): the internal version encoded as v1.
	Written json.RawMessage `json:"written,omitempty"`
}

// JudgeConfig reads data as kube-scheduler reads its --config file: the
// v1 decoding and defaulting, then, as its loadConfig does, decoding to
// the internal version with the document's API version, validation, and
// the configuration it would write.
func JudgeConfig(data []byte) (*ConfigVerdict, error) {
	v := &ConfigVerdict{}
	obj, gvk, err := scheme.Codecs.UniversalDecoder(configv1.SchemeGroupVersion).Decode(data, nil, nil)
	if err != nil {
		v.DecodeError = err.Error()
		return v, nil
	}
	external, ok := obj.(*configv1.KubeSchedulerConfiguration)
	if !ok {
		v.DecodeError = fmt.Sprintf("couldn't decode as KubeSchedulerConfiguration, got %s: ", gvk)
		return v, nil
	}
	if v.Decoded, err = json.Marshal(external); err != nil {
		return nil, err
	}

	obj, gvk, err = scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the v1 decoder read it, the internal one: %w", err)
	}
	internal, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("decoded a %T", obj)
	}
	internal.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if err := validation.ValidateKubeSchedulerConfiguration(internal); err != nil {
		v.InvalidText, v.Invalid = err.Error(), errorMessages(err)
		return v, nil
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil, errors.New("no JSON serializer")
	}
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(info.Serializer, configv1.SchemeGroupVersion).Encode(internal, &buf); err != nil {
		return nil, err
	}
	v.Written = bytes.TrimSpace(buf.Bytes())
	return v, nil
}

// errorMessages returns the messages of an aggregate error, or err's own.
func errorMessages(err error) []string {
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range agg.Errors() {
		out = append(out, e.Error())
	}
	return out
}

// upstreamPoints maps kube-scheduler's Plugins fields to the names of
// their extension points ("PreFilterPlugin", ...).
func upstreamPoints(p *config.Plugins) map[string]config.PluginSet {
	return map[string]config.PluginSet{
		"PreFilterPlugin": p.PreFilter, "FilterPlugin": p.Filter, "PostFilterPlugin": p.PostFilter,
		"ReservePlugin": p.Reserve, "PreScorePlugin": p.PreScore, "ScorePlugin": p.Score,
		"PreBindPlugin": p.PreBind, "BindPlugin": p.Bind, "PostBindPlugin": p.PostBind,
		"PermitPlugin": p.Permit, "PreEnqueuePlugin": p.PreEnqueue, "QueueSortPlugin": p.QueueSort,
		"PlacementGeneratePlugin": p.PlacementGenerate, "PlacementScorePlugin": p.PlacementScore,
	}
}

// upstreamFramework builds upstream's framework for profile as the oracle
// does, with a fake API server of its own, and lists its plugins.
func upstreamFramework(ctx context.Context, profile *config.KubeSchedulerProfile) (*config.Plugins, error) {
	// Plugins and the framework record into registered metric vectors.
	metrics.Register()
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	dra, err := newDRAManager(ctx, client, factory)
	if err != nil {
		return nil, err
	}
	fw, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(&snapshotLister{}),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithSharedDRAManager(dra),
	)
	if err != nil {
		return nil, err
	}
	return fw.ListPlugins(), nil
}

// ProfileLayout is how kube-scheduler lays out one profile's plugins.
type ProfileLayout struct {
	// SchedulerName is the profile's, defaulted.
	SchedulerName string `json:"schedulerName"`
	// Error is NewFramework's, when it refuses the profile.
	Error string `json:"error,omitempty"`
	// Points are the plugins at each extension point, by its name
	// ("PreFilterPlugin", ...), in order.
	Points map[string][]config.Plugin `json:"points,omitempty"`
}

// LayOutProfiles builds kube-scheduler's framework for every profile of
// a valid configuration file and lists each one's plugins, or, for nil
// data, its default profile's.
func LayOutProfiles(data []byte) ([]ProfileLayout, error) {
	var profiles []config.KubeSchedulerProfile
	if data == nil {
		every := int32(100)
		def, err := defaultProfile(&every)
		if err != nil {
			return nil, err
		}
		profiles = append(profiles, *def)
	} else {
		obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			return nil, err
		}
		cfg, ok := obj.(*config.KubeSchedulerConfiguration)
		if !ok {
			return nil, fmt.Errorf("decoded a %T", obj)
		}
		profiles = cfg.Profiles
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make([]ProfileLayout, len(profiles))
	for i := range profiles {
		out[i].SchedulerName = profiles[i].SchedulerName
		listed, err := upstreamFramework(ctx, &profiles[i])
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		out[i].Points = map[string][]config.Plugin{}
		for point, set := range upstreamPoints(listed) {
			if len(set.Enabled) > 0 {
				out[i].Points[point] = set.Enabled
			}
		}
	}
	return out, nil
}

// ConfiguredOracle is an [Oracle] for the first profile of a
// configuration file, rebuilt when the file changes. It is safe for
// concurrent use; runs are serialised.
type ConfiguredOracle struct {
	mu     sync.Mutex
	data   []byte
	oracle *Oracle
}

// RunScenario is [Oracle.RunScenario] under the first profile of data, a
// valid configuration file; building the framework fails as
// kube-scheduler's NewFramework does (a plugin refusing its args).
func (c *ConfiguredOracle) RunScenario(ctx context.Context, data []byte, s *Scenario) (*OracleResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.oracle == nil || !bytes.Equal(c.data, data) {
		c.close()
		obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			return nil, err
		}
		cfg, ok := obj.(*config.KubeSchedulerConfiguration)
		if !ok || len(cfg.Profiles) == 0 {
			return nil, fmt.Errorf("decoded a %T without profiles", obj)
		}
		if c.oracle, err = newOracle(oracleOptions{profile: &cfg.Profiles[0]}); err != nil {
			return nil, err
		}
		c.data = bytes.Clone(data)
	}
	return c.oracle.RunScenario(ctx, s)
}

// Close stops the oracle.
func (c *ConfiguredOracle) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.close()
}

func (c *ConfiguredOracle) close() {
	if c.oracle != nil {
		c.oracle.Close()
		c.oracle, c.data = nil, nil
	}
}
