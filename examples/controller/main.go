// Command controller is a working scheduler built on kubesched: it
// watches a cluster through client-go informers, keeps kubesched's cache
// and scheduling queue up to date, and schedules the pods whose
// spec.schedulerName names it with kube-scheduler v1.36.3's default
// profile, binding them through the API. A pod that fits nowhere may
// preempt: the controller marks and deletes the victims DefaultPreemption
// chose and nominates the pod to their node, where a later cycle places
// it, reading PodDisruptionBudgets as kube-scheduler does.
//
//	go run . -kubeconfig ~/.kube/config -scheduler-name kubesched
//
// Without -kubeconfig it uses $KUBECONFIG, ~/.kube/config, or the
// in-cluster configuration. It is a separate module so that kubesched
// itself never depends on client-go. Run a single replica: it has no
// leader election.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	name := flag.String("scheduler-name", "kubesched", "schedule the pods whose spec.schedulerName is this")
	flag.Parse()
	if err := run(*kubeconfig, *name); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, name string) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctrl, err := New(client, Config{SchedulerName: name, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ctrl.Run(ctx)
}
