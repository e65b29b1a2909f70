// Command controller is a working scheduler built on kubesched: it
// watches a cluster through client-go informers, keeps kubesched's cache
// and scheduling queue up to date, and schedules the pods whose
// spec.schedulerName names it with kube-scheduler v1.37.2's default
// profile, or with the profiles of a scheduler configuration file,
// binding them through the API. A pod that fits nowhere may
// preempt: the controller marks and deletes the victims DefaultPreemption
// chose and nominates the pod to their node, where a later cycle places
// it, reading PodDisruptionBudgets as kube-scheduler does. Pods with
// ResourceClaims get devices as from kube-scheduler: the controller
// writes the claims' allocation before it binds the pod. So do pods
// asking for extended resources that a DeviceClass provides: the
// controller creates their claim, and names it in the pod's
// status.extendedResourceClaimStatus, before it binds them. Pods whose
// PersistentVolumeClaims wait for their first consumer get volumes as
// from kube-scheduler: the controller writes the chosen volumes'
// claimRef (or the claims' selected node, for a provisioner) and binds
// the pod once the PV controller has bound the claims.
//
//	go run . -kubeconfig ~/.kube/config -scheduler-name kubesched
//
// Without -kubeconfig it uses $KUBECONFIG, ~/.kube/config, or the
// in-cluster configuration. Like kube-scheduler it records Scheduled and
// FailedScheduling Events, through a client of their own. Its requests
// to the API server are limited as kube-scheduler's are by default, 50
// per second with bursts of 100; -kube-api-qps and -kube-api-burst
// change that. It is a separate module so that kubesched itself never
// depends on client-go.
//
// # Replicas, probes and metrics
//
// Like kube-scheduler it elects a leader among its replicas
// (-leader-elect, on by default) with a Lease, kube-system/kubesched
// unless -leader-elect-resource-namespace and -leader-elect-resource-name
// say otherwise, and kube-scheduler's durations (15s lease, 10s renew
// deadline, 2s retry). Only the holder schedules; a replica that stops
// gives the Lease up, so a standby takes over within the retry period,
// and one that loses it exits, to come back as a standby.
//
// It serves over HTTP on -health-bind-address (":10251" by default, ""
// for none):
//   - /healthz: the process answers.
//   - /readyz: the leader is ready once its informers have synced; a
//     standby is ready while it waits.
//   - /metrics: kubesched_schedule_attempts_total and
//     kubesched_scheduling_attempt_duration_seconds by profile and result
//     (scheduled, unschedulable, error), and kubesched_pending_pods by
//     sub-queue, in Prometheus' text format.
//   - /debug/cache, only with -enable-debug-endpoints: the pods the cache
//     holds, node by node, to compare with the API server.
//
// # Profiles from a configuration file
//
// With -config FILE the controller reads a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1), the file kube-scheduler reads with
// --config, and serves every profile in it: a pod is the controller's
// when its spec.schedulerName is one of the profiles' schedulerName, and
// that profile's plugins schedule it and decide whether it preempts.
// Here pods with schedulerName kubesched are spread as by the default
// profile, and those with kubesched-packing are packed onto the busiest
// nodes that fit them:
//
//	go run . -config scheduler.yaml
//
//	# scheduler.yaml
//	apiVersion: kubescheduler.config.k8s.io/v1
//	kind: KubeSchedulerConfiguration
//	profiles:
//	- schedulerName: kubesched
//	- schedulerName: kubesched-packing
//	  pluginConfig:
//	  - name: NodeResourcesFit
//	    args:
//	      scoringStrategy:
//	        type: MostAllocated
//
// The file is read as kube-scheduler reads it: strictly (an unknown field
// is an error), defaulted, and validated, and a bad file stops the
// controller with kube-scheduler's message. A file without profiles gets
// kube-scheduler's single profile, default-scheduler, which would compete
// with the cluster's own scheduler: name your profiles.
//
// The profiles name the schedulers, so giving -scheduler-name with
// -config is an error. Besides the profiles, the controller uses the
// file's parallelism, percentageOfNodesToScore, extenders (including one
// that binds), podInitialBackoffSeconds and podMaxBackoffSeconds, and
// each profile's VolumeBinding bindTimeoutSeconds. It takes the cluster
// and its client's limits from -kubeconfig, -kube-api-qps and
// -kube-api-burst, and the election from the -leader-elect flags, never
// from the file: a file that sets clientConnection or leaderElection to
// anything but kube-scheduler's defaults is refused rather than silently
// overruled. (kube-scheduler takes both from the file; its default
// Lease, kube-system/kube-scheduler, is the one kube-scheduler itself
// holds.) The rest of the file (profiling, debugging, metrics) is
// ignored.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
)

// defaultSchedulerName is the scheduler name served without -config or
// -scheduler-name.
const defaultSchedulerName = "kubesched"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h: the usage is printed.
	case err != nil:
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

// run parses the command line args (without the command's name), builds
// the controller they describe, and runs it until ctx is done. Usage and
// flag errors are printed to stderr, the controller's log too. A bad
// command line or -config file is an error before the cluster is
// contacted.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	client, eventClient, err := newClients(opts.kubeconfig, opts.qps, opts.burst)
	if err != nil {
		return err
	}
	opts.config.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	opts.config.EventClient = eventClient
	ctrl, err := New(client, opts.config)
	if err != nil {
		return err
	}
	h := health{debug: opts.debug, logger: opts.config.Logger}
	h.ctrl.Store(ctrl)
	if opts.healthAddr != "" {
		addr, err := h.serve(ctx, opts.healthAddr)
		if err != nil {
			return err
		}
		opts.config.Logger.Info("serving /healthz, /readyz and /metrics", "address", addr.String())
	}
	if !opts.election.enabled {
		return ctrl.Run(ctx)
	}
	h.electing.Store(true)
	return lead(ctx, client, opts.election, opts.config.Logger, func(ctx context.Context) error {
		h.leading.Store(true)
		return ctrl.Run(ctx)
	})
}

// options are what the command line asks for.
type options struct {
	// kubeconfig is the -kubeconfig file, "" for client-go's defaults.
	kubeconfig string
	// qps and burst limit the client's requests to the API server.
	qps   float32
	burst int
	// healthAddr is where /healthz, /readyz and /metrics are served, ""
	// for nowhere.
	healthAddr string
	// debug also serves /debug/cache there.
	debug bool
	// election configures leader election.
	election election
	// config is the controller's configuration, without a logger.
	config Config
}

// parseFlags parses args and reads the -config file they name. It
// returns flag.ErrHelp for -h, and an error for a bad flag, an argument
// that is no flag, -scheduler-name given with -config, or a -config file
// that cannot be read or that kube-scheduler would refuse.
func parseFlags(args []string, output io.Writer) (*options, error) {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(output)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	name := fs.String("scheduler-name", defaultSchedulerName, "schedule the pods whose spec.schedulerName is this, with the default profile (not with -config)")
	configFile := fs.String("config", "", "KubeSchedulerConfiguration file: schedule the pods of each of its profiles with that profile")
	qps := fs.Float64("kube-api-qps", 50, "requests per second to the API server, as kube-scheduler's clientConnection.qps")
	burst := fs.Int("kube-api-burst", 100, "requests above -kube-api-qps allowed in a burst, as kube-scheduler's clientConnection.burst")
	healthAddr := fs.String("health-bind-address", ":10251", "serve /healthz, /readyz and /metrics over HTTP here; empty for nowhere")
	debug := fs.Bool("enable-debug-endpoints", false, "also serve /debug/cache there: the pods the cache holds, node by node (names of pods: off by default)")
	el := election{}
	fs.BoolVar(&el.enabled, "leader-elect", true, "run as one of several replicas: only the holder of the Lease schedules")
	fs.DurationVar(&el.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long standbys wait after the last renewal before taking the Lease")
	fs.DurationVar(&el.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it gives up leading")
	fs.DurationVar(&el.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often to try to take or renew the Lease")
	fs.StringVar(&el.namespace, "leader-elect-resource-namespace", "kube-system", "namespace of the Lease")
	fs.StringVar(&el.name, "leader-elect-resource-name", "kubesched", "name of the Lease (not kube-scheduler's, which is kube-scheduler)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if el.enabled {
		if err := el.check(); err != nil {
			return nil, err
		}
	}
	if *qps <= 0 || *burst < 1 {
		return nil, fmt.Errorf("-kube-api-qps %v and -kube-api-burst %d: both must be positive", *qps, *burst)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: the controller takes only flags (see -h)", fs.Arg(0))
	}
	opts := &options{kubeconfig: *kubeconfig, qps: float32(*qps), burst: *burst, healthAddr: *healthAddr, debug: *debug, election: el}
	if *configFile == "" {
		opts.config.SchedulerName = *name
		return opts, nil
	}
	if flagSet(fs, "scheduler-name") {
		return nil, fmt.Errorf("-scheduler-name %q cannot be used with -config: the profiles of %s name the schedulers; "+
			"drop -scheduler-name, or set the name as a profile's schedulerName", *name, *configFile)
	}
	sc, err := loadConfig(*configFile)
	if err != nil {
		return nil, err
	}
	if err := flagsOnly(sc, *configFile); err != nil {
		return nil, err
	}
	opts.config.SchedulerConfig = sc
	return opts, nil
}

// flagsOnly refuses a configuration that sets clientConnection or
// leaderElection to anything but kube-scheduler's defaults: the
// controller takes those from its flags, and would otherwise ignore
// what the file says without a word.
func flagsOnly(sc *configv1.KubeSchedulerConfiguration, file string) error {
	defaults, err := kubesched.LoadConfig([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"))
	if err != nil {
		return fmt.Errorf("kube-scheduler's defaults: %w", err)
	}
	if !equality.Semantic.DeepEqual(sc.ClientConnection, defaults.ClientConnection) {
		return fmt.Errorf("-config %s sets clientConnection, which the controller takes from its flags: "+
			"remove it from the file and give -kubeconfig, -kube-api-qps and -kube-api-burst instead", file)
	}
	if !equality.Semantic.DeepEqual(sc.LeaderElection, defaults.LeaderElection) {
		return fmt.Errorf("-config %s sets leaderElection, which the controller takes from its flags: "+
			"remove it from the file and give the -leader-elect flags instead", file)
	}
	return nil
}

// flagSet reports whether the command line gave the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// loadConfig reads the KubeSchedulerConfiguration in file as
// kube-scheduler does; its errors are kube-scheduler's, after the file's
// name.
func loadConfig(file string) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading -config: %w", err)
	}
	sc, err := kubesched.LoadConfig(data)
	if err != nil {
		return nil, fmt.Errorf("-config %s: %w", file, err)
	}
	return sc, nil
}

// newClients returns the scheduler's client and, as kube-scheduler has,
// a second one for Events, both limited to qps with burst: from the
// kubeconfig file, else client-go's defaults ($KUBECONFIG, ~/.kube/config,
// in-cluster).
func newClients(kubeconfig string, qps float32, burst int) (kubernetes.Interface, kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, nil, err
	}
	// client-go's own defaults (5 and 10) would bind 5 pods a second.
	cfg.QPS, cfg.Burst = qps, burst
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	eventClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return client, eventClient, nil
}
