// Command kubesched answers, from a dump of a cluster, what kube-scheduler
// v1.37.2 would do: why a pod is pending, where pending pods would go,
// and what changes if nodes are added or removed.
//
//	kubectl get nodes,pods,pvc,pv,storageclasses,csinodes,resourceslices,deviceclasses,resourceclaims,devicetaintrules,pdb -A -o yaml > cluster.yaml
//	kubesched explain --pod default/web -f cluster.yaml
//	kubesched place -f cluster.yaml
//	kubesched whatif --add-node gpu-node.yamlx3 -f cluster.yaml
//
// Install it with go install github.com/kubesched/kubesched/cmd/kubesched@latest.
// Run kubesched help for the flags.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/kubesched/kubesched/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Command{Name: "kubesched"}.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
