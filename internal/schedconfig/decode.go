// Package schedconfig reads kube-scheduler's KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1) as kube-scheduler does: strict
// decoding, of the plugins' args too, then its defaulting.
package schedconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// argsScheme knows the v1 configuration and its plugins' args.
var argsScheme = func() *runtime.Scheme {
	scheme := runtime.NewScheme()
	if err := configv1.AddToScheme(scheme); err != nil {
		panic(err) // the package's own types: cannot fail
	}
	return scheme
}()

// codecs decode the v1 configuration and its plugins' args, strictly.
var codecs = serializer.NewCodecFactory(argsScheme, serializer.EnableStrict)

// Decode reads a KubeSchedulerConfiguration from YAML or JSON, without
// defaulting it. As kube-scheduler's decoder, it decodes the args of the
// plugins whose args kind it knows into their v1 types (other plugins'
// args stay raw), and reports every unknown or duplicate field, in the
// configuration and in the args, as one strict decoding error, while
// still returning what it decoded.
func Decode(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	deserializer := codecs.UniversalDeserializer()
	obj, gvk, err := deserializer.Decode(data, nil, nil)
	var strict []error
	if err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, err
		}
		strict = append(strict, se.Errors()...)
	}
	cfg, ok := obj.(*configv1.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("couldn't decode as KubeSchedulerConfiguration, got %s: ", gvk)
	}
	if err := cfg.DecodeNestedObjects(runtime.WithoutVersionDecoder{Decoder: deserializer}); err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			return nil, err
		}
		strict = append(strict, se.Errors()...)
	}
	if len(strict) > 0 {
		return cfg, runtime.NewStrictDecodingError(strict)
	}
	return cfg, nil
}
