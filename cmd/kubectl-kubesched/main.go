// Command kubectl-kubesched is the kubesched command as a kubectl plugin:
// it reads the cluster of the current kubeconfig context itself, read
// only, and answers as kubesched does on a dump of it.
//
//	kubectl kubesched explain pod/web -n prod
//	kubectl kubesched explain -A                every pending pod
//	kubectl kubesched place
//	kubectl kubesched whatif --add-node gpu-node.yamlx3
//
// It lists exactly what kubesched's documented dump holds — nodes, pods,
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
// ResourceSlices, DeviceClasses, ResourceClaims, DeviceTaintRules and
// PodDisruptionBudgets, in every namespace — with the ClusterRole in
// rbac.yaml (get and list, nothing else). Install it with
// go install github.com/kubesched/kubesched/cmd/kubectl-kubesched@latest
// (from kubesched's first release; until then, go install . here).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesched/kubesched/internal/cli"
	"github.com/kubesched/kubesched/loader"
)

const usage = `kubectl kubesched answers what kube-scheduler would do on the cluster of the current
kubeconfig context, which it reads (get and list only): by default as kube-scheduler %s,
the newest release it reproduces; --kubernetes-version picks another of %s.

Usage:
  kubectl kubesched explain [pod/NAME | NAME ...] [-n NAMESPACE] [flags]
                                      why pods are pending (default: every pending pod)
  kubectl kubesched place [flags]     place every pending pod in kube-scheduler's queue order
  kubectl kubesched whatif [flags]    the same after adding or removing nodes
  kubectl kubesched help              this text

Connection flags, as kubectl's: --kubeconfig FILE, --context NAME, -n/--namespace NAME
(default: the context's namespace, else default).

Flags:
%s
Exit status: 0 when every pod fits (explain) or is placed (place, whatif),
1 when some pod fits nowhere or is not tried, 2 for bad flags or an unreachable cluster.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the plugin with its arguments and streams; it returns the exit
// status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	conn, rest, err := parseArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, "kubectl kubesched:", err)
		return 2
	}
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = conn.kubeconfig
	kubeconfig := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{CurrentContext: conn.context})
	if conn.namespace == "" && needsCluster(rest) {
		ns, _, err := kubeconfig.Namespace()
		if err != nil {
			fmt.Fprintln(stderr, "kubectl kubesched:", err)
			return 2
		}
		conn.namespace = ns
	}
	if conn.namespace != "" {
		rest = append(rest, "--namespace", conn.namespace)
	}
	connect := func() (kubernetes.Interface, error) {
		cfg, err := kubeconfig.ClientConfig()
		if err != nil {
			return nil, err
		}
		return kubernetes.NewForConfig(cfg)
	}
	return command(connect, stderr).Run(ctx, rest, stdin, stdout, stderr)
}

// command is kubesched's command reading the cluster connect reaches.
func command(connect func() (kubernetes.Interface, error), stderr io.Writer) cli.Command {
	return cli.Command{
		Name:  "kubectl kubesched",
		Usage: usage,
		Cluster: func(ctx context.Context, _ string) (*loader.Cluster, error) {
			client, err := connect()
			if err != nil {
				return nil, err
			}
			return readCluster(ctx, client, stderr)
		},
	}
}

// connection is what the plugin's own flags say about the cluster.
type connection struct {
	kubeconfig, context, namespace string
}

// parseArgs takes the connection flags and the pods named as kubectl
// names them (pod/NAME, pods/NAME or NAME after explain) out of args,
// and returns the rest for kubesched, the pods as --pod flags.
func parseArgs(args []string) (connection, []string, error) {
	var conn connection
	if len(args) == 0 {
		return conn, nil, nil
	}
	rest := []string{args[0]}
	var pods []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		target := map[string]*string{
			"--kubeconfig": &conn.kubeconfig, "-kubeconfig": &conn.kubeconfig,
			"--context": &conn.context, "-context": &conn.context,
			"-n": &conn.namespace, "--namespace": &conn.namespace, "-namespace": &conn.namespace,
		}[name]
		switch {
		case target != nil:
			if !hasValue {
				if i+1 == len(args) {
					return conn, nil, fmt.Errorf("%s needs a value", name)
				}
				i++
				value = args[i]
			}
			*target = value
		case a == "-A" || a == "--all-namespaces":
			// Every pending pod of every namespace is the default.
		case !strings.HasPrefix(a, "-") && args[0] == "explain" && !takesValue(rest[len(rest)-1]):
			kind, n, ok := strings.Cut(a, "/")
			if !ok {
				kind, n = "pod", a
			}
			if kind != "pod" && kind != "pods" && kind != "po" {
				return conn, nil, fmt.Errorf("%s: explain explains pods (pod/NAME or NAME)", a)
			}
			pods = append(pods, n)
		default:
			rest = append(rest, a)
		}
	}
	for _, p := range pods {
		if !strings.Contains(p, "/") {
			// The namespace comes from -n, given to kubesched as
			// --namespace, which names pods without one.
			rest = append(rest, "--pod", p)
		}
	}
	return conn, rest, nil
}

// takesValue reports whether flag, kubesched's, takes the next argument
// as its value.
func takesValue(flag string) bool {
	if !strings.HasPrefix(flag, "-") || strings.Contains(flag, "=") {
		return false
	}
	switch strings.TrimLeft(flag, "-") {
	case "q", "first-fit", "given-order", "preempt", "h", "help":
		return false
	}
	return true
}

// needsCluster reports whether args run a subcommand that reads the
// cluster, rather than help.
func needsCluster(args []string) bool {
	return len(args) > 0 && (args[0] == "explain" || args[0] == "place" || args[0] == "whatif")
}
