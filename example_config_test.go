package kubesched_test

import (
	"fmt"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
)

// A cluster's scheduler configuration, read as kube-scheduler reads it:
// defaulted, and refused with kube-scheduler's message when invalid.
func ExampleLoadConfig() {
	cfg, err := kubesched.LoadConfig([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	prof := cfg.Profiles[0]
	for _, pc := range prof.PluginConfig {
		if fit, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs); ok {
			fmt.Println(*prof.SchedulerName, fit.ScoringStrategy.Type, fit.ScoringStrategy.Resources)
		}
	}
	fmt.Println(len(prof.Plugins.MultiPoint.Enabled), "plugins, parallelism", *cfg.Parallelism)

	_, err = kubesched.LoadConfig([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 120
`))
	fmt.Println(err)
	// Output:
	// bin-packing MostAllocated [{cpu 1} {memory 1}]
	// 20 plugins, parallelism 16
	// percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]
}
