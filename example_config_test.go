package kubesched_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/nodeinfo"
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

// The cluster's own profiles, built from its configuration: a bin-packing
// profile beside the default one sends the pod to the busier node.
func ExampleFrameworksFromConfig() {
	cfg, err := kubesched.LoadConfig([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
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
	frameworks, err := kubesched.FrameworksFromConfig(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	running := examplePod("batch", "3")
	running.Spec.NodeName = "busy"
	nodes := nodeinfo.Build([]*v1.Node{exampleNode("busy", "4"), exampleNode("idle", "4")}, []*v1.Pod{running})
	for _, name := range []string{"default-scheduler", "bin-packing"} {
		res, err := frameworks[name].Schedule(context.Background(), examplePod("web", "500m"), nodes)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(name, "->", res.SuggestedHost)
	}
	// Output:
	// default-scheduler -> idle
	// bin-packing -> busy
}
