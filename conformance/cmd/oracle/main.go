// Command oracle answers the conformance tests' requests with the
// decisions of the kube-scheduler release it is built against, so that a
// release whose k8s.io libraries differ from kubesched's can still be
// compared with it. It reads JSON requests on stdin, one per line, and
// writes one response per line on stdout, until stdin ends (see
// conformance.Serve). The conformance tests build and start it
// themselves; by hand, from the conformance directory:
//
//	go build -modfile=kubernetes-1.36.mod -tags kubernetes_1_36 -o /tmp/oracle-1.36 ./cmd/oracle
//	KUBESCHED_CONFORMANCE_RELEASE=1.36 go test ./...
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/conformance"
)

func main() {
	// Upstream's configuration defaulting logs through klog's global
	// logger; stdout carries the responses.
	klog.SetLogger(logr.Discard())
	if err := conformance.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(1)
	}
}
