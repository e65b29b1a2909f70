// Package cli is the kubesched command — explain, place, whatif — as
// cmd/kubesched and the kubectl plugin cmd/kubectl-kubesched run it: the
// flags, reading cluster state, and the table, JSON and HTML outputs.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/loader"
)

// Exit codes, for scripts.
const (
	exitOK            = 0 // every pod explained fits, every pending pod placed
	exitUnschedulable = 1 // some pod fits nowhere
	exitBadInput      = 2 // bad flags, unreadable or malformed input
)

const usage = `kubesched answers what kube-scheduler would do, from a dump of a cluster: by default
as kube-scheduler %s, the newest release it reproduces; --kubernetes-version picks
another of %s.

Usage:
  kubesched explain [flags]   why pods are pending: every node, every filter, the scores
  kubesched place [flags]     place every pending pod in kube-scheduler's queue order
  kubesched whatif [flags]    the same after adding or removing nodes
  kubesched help              this text

Cluster state is read from -f: files, directories (their .yaml, .yml and
.json files) or - for standard input, in the form kubectl get -o yaml or
-o json writes (a List, several documents, or single objects):

  kubectl get nodes,pods,pvc,pv,storageclasses,csinodes,resourceslices,deviceclasses,resourceclaims,devicetaintrules,pdb -A -o yaml \
    | kubesched explain --pod default/web -f -

(A cluster older than v1.37 has no devicetaintrules to get: leave them out.)

Examples:
  kubesched explain -f cluster.yaml                       every pending pod
  kubesched explain -f cluster.yaml --pod default/web -o html > web.html
  kubesched place -f cluster.yaml -o json
  kubesched whatif -f cluster.yaml --add-node node.yamlx3   three copies of the node in node.yaml
  kubesched whatif -f cluster.yaml --remove-node node-7      its pods are placed again

Flags:
%s
explain judges each pod alone, on the cluster as the input has it, as
kube-scheduler's next cycle would; place and whatif place the pods one
after another, each placement kept for the next. Pods kube-scheduler does
not try (scheduling gates, being deleted, a missing ResourceClaim) are
reported with its message and do not stop the others. For a pod that fits
nowhere, both show what preemption kube-scheduler would decide (not acted
on). Dumps written with -o json load faster than YAML.

Exit status: 0 when every pod fits (explain) or is placed (place, whatif),
1 when some pod fits nowhere or is not tried, 2 for bad flags or input (or
any other error, such as an interrupt).
`

// options are the flags of every subcommand.
type options struct {
	files      stringList
	pods       stringList
	addNodes   stringList
	rmNodes    stringList
	config     string
	namespace  string
	version    string
	profile    string
	output     string
	maxNodes   int
	closest    int
	seed       uint64
	quiet      bool
	firstFit   bool
	givenOrder bool
	preempt    bool
}

// stringList is a flag that may be repeated.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func newFlags(o *options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kubesched", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Var(&o.files, "f", "cluster state: a file, a directory or - for stdin (repeatable)")
	fs.Var(&o.pods, "pod", "explain: the pod NAMESPACE/NAME (repeatable; default every pending pod)")
	fs.Var(&o.addNodes, "add-node", "whatif: add the node in FILE, or N copies of it with FILExN (repeatable)")
	fs.Var(&o.rmNodes, "remove-node", "whatif: remove node NAME; its pods are placed again (repeatable)")
	fs.StringVar(&o.namespace, "namespace", v1.NamespaceDefault, "the namespace of objects that name none, as the API server gives them, and of --pod NAME")
	fs.StringVar(&o.version, "kubernetes-version", "", "the kube-scheduler release to decide as, such as 1.36 (default: the newest supported)")
	fs.StringVar(&o.config, "config", "", "a KubeSchedulerConfiguration file; a pod takes the profile its schedulerName names")
	fs.StringVar(&o.profile, "profile", "", "place, whatif: the profile whose pods to place (default default-scheduler, or the configuration's only one)")
	fs.StringVar(&o.output, "o", "table", "output: table, json or html")
	fs.IntVar(&o.maxNodes, "max-nodes", 20, "explain -o table: show at most this many nodes per pod (0: all)")
	fs.IntVar(&o.closest, "closest", 3, "how many of the nodes closest to fitting to name")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random choice between equally scored nodes")
	fs.BoolVar(&o.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&o.firstFit, "first-fit", false, "place, whatif: cluster-autoscaler's first fit instead of kube-scheduler's best node")
	fs.BoolVar(&o.preempt, "preempt", false, "place, whatif: act on preemption as kube-scheduler does: evict the victims and place the pod in the next cycle")
	fs.BoolVar(&o.givenOrder, "given-order", false, "place, whatif: place in the order given instead of kube-scheduler's queue order")
	return fs
}

// Command is the kubesched command as a program runs it.
type Command struct {
	// Name is the command as people type it, for messages and help:
	// "kubesched", or "kubectl kubesched".
	Name string
	// Cluster, when set, reads the cluster state instead of -f: a live
	// cluster's. It is called once per run, after the flags are parsed,
	// with the namespace of --namespace.
	Cluster func(ctx context.Context, namespace string) (*loader.Cluster, error)
	// Usage, when set, replaces kubesched's help text: a format of the
	// newest release, the supported ones and the flags' defaults.
	Usage string
}

// Run runs the command with args (the subcommand first) and returns the
// exit status: 0 when every pod fits or is placed, 1 when some pod fits
// nowhere or is not tried, 2 for bad flags or input.
func (c Command) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, stdin, stdout, stderr, c)
}

// run is the command with its arguments and streams; it returns the exit
// status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, c Command) int {
	var o options
	fs := newFlags(&o, stderr)
	fs.Usage = func() {}
	printUsage := func(w io.Writer) {
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		text := usage
		if c.Usage != "" {
			text = c.Usage
		}
		fmt.Fprintf(w, text, kubesched.Releases()[0].Version(), supportedReleases(), b.String())
	}
	if len(args) == 0 {
		printUsage(stderr)
		return exitBadInput
	}
	cmd := args[0]
	switch cmd {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	case "explain", "place", "whatif":
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q; run %s help\n", c.Name, cmd, c.Name)
		return exitBadInput
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "%s %s: %v; run %s help\n", c.Name, cmd, err, c.Name)
		return exitBadInput
	}
	// What reaches a terminal is escaped; JSON escapes itself, and HTML
	// is escaped by its template.
	stderr = terminalSafe(stderr)
	if o.output == "table" {
		stdout = terminalSafe(stdout)
	}
	status, err := dispatch(ctx, cmd, &o, fs.Args(), stdin, stdout, stderr, c)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", c.Name, cmd, err)
		return exitBadInput
	}
	return status
}

func dispatch(ctx context.Context, cmd string, o *options, rest []string, stdin io.Reader, stdout, stderr io.Writer, c Command) (int, error) {
	if len(rest) > 0 {
		return 0, fmt.Errorf("unexpected arguments %q (cluster files go after -f)", rest)
	}
	switch o.output {
	case "table", "json", "html":
	default:
		return 0, fmt.Errorf("-o %s: want table, json or html", o.output)
	}
	if cmd != "whatif" && (len(o.addNodes) > 0 || len(o.rmNodes) > 0) {
		return 0, fmt.Errorf("--add-node and --remove-node belong to whatif")
	}
	if cmd != "explain" && len(o.pods) > 0 {
		return 0, fmt.Errorf("--pod belongs to explain")
	}
	if cmd == "explain" && o.preempt {
		return 0, fmt.Errorf("--preempt belongs to place and whatif (explain shows the preemption without acting on it)")
	}
	if o.preempt && o.firstFit {
		return 0, fmt.Errorf("--preempt and --first-fit: cluster-autoscaler's first fit does not preempt")
	}
	st, err := load(ctx, o, stdin, stderr, c)
	if err != nil {
		return 0, err
	}
	switch cmd {
	case "explain":
		return explain(ctx, st, o, stdout, stderr)
	default:
		return place(ctx, st, o, cmd == "whatif", stdout, stderr)
	}
}

// supportedReleases lists the releases kubesched reproduces.
func supportedReleases() string {
	var vs []string
	for _, r := range kubesched.Releases() {
		vs = append(vs, r.Version())
	}
	return strings.Join(vs, ", ")
}
