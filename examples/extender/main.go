// Command extender serves the seed's demo scheduler extender, built with
// package extender/server:
//
//	go run ./examples/extender -addr 127.0.0.1:8888
//
// It answers kube-scheduler (or a kubesched framework) at
//
//	/filter          keeps the nodes labelled priority.lixueduan.com
//	/prioritize      scores each node by that label's integer value
//	/filter_onlyone  keeps only the labelled node of highest value, so
//	                 that the extender alone decides the placement
//	/bind            binds the pod; the demo only logs the binding
//
// Schedulers must send whole nodes (nodeCacheCapable: false): the demo has
// no node cache. In a cluster, give newHandler a server.NodeSource built on
// a node informer, and a bind function that creates the Binding with
// client-go.
//
// With -config FILE, the KubeSchedulerConfiguration kube-scheduler runs
// with (the seed's ConfigMap), the demo reads the file as kube-scheduler
// reads it and refuses to start unless the extenders it lists on -addr's
// port call only the verbs above, at the root of the URL, with
// nodeCacheCapable false; it then logs the profiles whose pods
// kube-scheduler will send it (all of them: a configuration's extenders
// serve every profile):
//
//	go run ./examples/extender -addr 127.0.0.1:8080 -config scheduler-config.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8888", "address to listen on")
	config := flag.String("config", "", "the KubeSchedulerConfiguration kube-scheduler runs with: refuse to start unless the extenders it lists on -addr's port call verbs the demo serves")
	flag.Parse()
	if *config != "" {
		data, err := os.ReadFile(*config)
		if err != nil {
			fmt.Fprintln(os.Stderr, "extender: reading -config:", err)
			os.Exit(1)
		}
		profiles, err := checkConfig(data, *addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "extender: -config %s: %v\n", *config, err)
			os.Exit(1)
		}
		log.Printf("called for the pods of the profiles %s", strings.Join(profiles, ", "))
	}
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "extender:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	h, err := newHandler(nil, logBinding)
	if err != nil {
		return err
	}
	srv := h.HTTPServer(addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("serving /%s, /%s, /%s and /%s on %s", verbFilter, verbPrioritize, verbFilterOnlyOne, verbBind, addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logBinding accepts every binding and logs it. A real extender would
// create it: clientset.CoreV1().Pods(b.Namespace).Bind(ctx, b, metav1.CreateOptions{}).
func logBinding(_ context.Context, b *v1.Binding) error {
	log.Printf("bind pod %s/%s (uid %s) to node %s", b.Namespace, b.Name, b.UID, b.Target.Name)
	return nil
}
