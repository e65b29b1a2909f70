package kubesched_test

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

// A cluster's scheduler configuration, read as kube-scheduler reads it:
// defaulted, and refused with kube-scheduler's message when invalid.
func ExampleLoadConfig() {
	cfg, err := kubesched.LoadConfig([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: bin-packing
  plugins:
    multiPoint:
      disabled: [{name: ImageLocality}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]
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
	// bin-packing MostAllocated [{cpu 3} {memory 1}]
	// 19 plugins, parallelism 16
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
  plugins:
    multiPoint:
      disabled: [{name: ImageLocality}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]
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

// The default profile, edited in code: bin packing, without ImageLocality.
func ExampleDefaultPlugins() {
	mostAllocated, err := score.NewNodeResourcesFit(&configv1.NodeResourcesFitArgs{
		ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}})
	if err != nil {
		fmt.Println(err)
		return
	}
	plugins := kubesched.DefaultPlugins().Without(names.ImageLocality).Replace(mostAllocated, 1)
	var scorers []string
	for _, p := range plugins {
		if framework.Implements(p.Plugin, framework.Score) {
			scorers = append(scorers, fmt.Sprintf("%s:%d", p.Plugin.Name(), p.Weight))
		}
	}
	fmt.Println(strings.Join(scorers, " "))
	f, err := plugins.Framework()
	if err != nil {
		fmt.Println(err)
		return
	}
	running := examplePod("batch", "3")
	running.Spec.NodeName = "busy"
	nodes := nodeinfo.Build([]*v1.Node{exampleNode("busy", "4"), exampleNode("idle", "4")}, []*v1.Pod{running})
	res, err := f.Schedule(context.Background(), examplePod("web", "500m"), nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("->", res.SuggestedHost)
	// Output:
	// TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 InterPodAffinity:2 DynamicResources:2 NodeResourcesBalancedAllocation:1
	// -> busy
}
