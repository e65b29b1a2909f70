package kubesched

import (
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/schedconfig"
)

// LoadConfig reads a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1), YAML or JSON, as kube-scheduler
// v1.36.3 reads its --config file, and returns it defaulted:
//
//   - Decoding is strict. Unknown and duplicate fields, in the
//     configuration and in the args of kube-scheduler's own plugins, are
//     one error that lists them ("strict decoding error: unknown field
//     ..."). Other API versions and kinds are errors too.
//   - The args of kube-scheduler's plugins are decoded into their
//     k8s.io/kube-scheduler/config/v1 types, in each PluginConfig's
//     Args.Object. Other plugins' args stay as JSON in Args.Raw.
//   - Defaulting is kube-scheduler's, with its default feature gates:
//     parallelism 16, one profile named default-scheduler when there is
//     none, each profile's plugins merged into the default set, and args,
//     defaulted, for every enabled plugin that has them.
//   - Validation is kube-scheduler's, with its messages, for example
//     "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid
//     value: 101: not in valid range [0, 100]". As in kube-scheduler,
//     NodeResourcesFit's args are checked only when a plugin is built
//     from them.
//
// The conformance module compares all three with kube-scheduler's own
// code over generated configurations.
func LoadConfig(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	cfg, err := schedconfig.Decode(data)
	if err != nil {
		return nil, err
	}
	schedconfig.SetDefaults(cfg)
	if err := schedconfig.Validate(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
