// Command extender serves the seed's demo scheduler extender, built with
// package extender/server:
//
//	go run ./examples/extender -addr 127.0.0.1:8888
//
// It answers kube-scheduler (or a kubesched framework) at
//
//	/filter          keeps the nodes labelled priority.lixueduan.com
//	/prioritize      scores each node by that label's integer value, 0 to
//	                 10 (values above 10 score 10)
//	/filter_onlyone  keeps only the labelled node of highest value, so
//	                 that the extender alone decides the placement
//	/bind            with -bind only: binds the pod; the demo only logs
//	                 the binding
//
// The verbs have no authentication: keep -addr on loopback, beside
// kube-scheduler, as the default does. -health-addr serves GET /healthz
// alone on another address, for kubelet probes, which cannot reach
// loopback.
//
// Calls are limited as package extender/server limits them: a body of at
// most -max-request-bytes (default 64Mi), at most -max-concurrent-calls
// calls at once (default 8) and -max-inflight-bytes of bodies together
// (default twice the request limit). A call beyond them is refused with
// 413 or 503 and logged; the demo holds about 3 times the bodies it
// serves in memory, at most about 9 times.
//
// Schedulers must send whole nodes (nodeCacheCapable: false): the demo has
// no node cache. In a cluster, give newHandler a server.NodeSource built on
// a node informer, and a bind function that creates the Binding with
// client-go.
//
// With -config FILE, the KubeSchedulerConfiguration kube-scheduler runs
// with (the seed's ConfigMap), the demo reads the file as kube-scheduler
// reads it and refuses to start unless the extenders it lists on -addr's
// port call only the verbs it serves, at the root of the URL, with
// nodeCacheCapable false; it then logs the profiles whose pods
// kube-scheduler will send it (all of them: a configuration's extenders
// serve every profile):
//
//	go run ./examples/extender -addr 127.0.0.1:8080 -bind -config scheduler-config.yaml
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
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesched/kubesched/extender/server"
)

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:8888", "address to serve the extender verbs on; they have no authentication, keep it on loopback beside kube-scheduler")
	flag.StringVar(&o.healthAddr, "health-addr", "", "address to serve GET /healthz alone on, for probes that cannot reach -addr; empty for none")
	flag.BoolVar(&o.bind, "bind", false, "serve /bind (the demo only logs bindings); without it, a bindVerb in -config is refused")
	o.maxRequest = byteSize(server.DefaultMaxRequestBytes)
	flag.Var(&o.maxRequest, "max-request-bytes", "the largest request body served, such as 32Mi")
	flag.Var(&o.maxInFlight, "max-inflight-bytes", "the request bodies served at once, together, such as 64Mi (default twice -max-request-bytes)")
	flag.IntVar(&o.maxCalls, "max-concurrent-calls", server.DefaultMaxConcurrentCalls, "the calls served at once")
	config := flag.String("config", "", "the KubeSchedulerConfiguration kube-scheduler runs with: refuse to start unless the extenders it lists on -addr's port call verbs the demo serves")
	flag.Parse()
	if *config != "" {
		data, err := os.ReadFile(*config)
		if err != nil {
			fmt.Fprintln(os.Stderr, "extender: reading -config:", err)
			os.Exit(1)
		}
		profiles, err := checkConfig(data, o.addr, o.bind)
		if err != nil {
			fmt.Fprintf(os.Stderr, "extender: -config %s: %v\n", *config, err)
			os.Exit(1)
		}
		log.Printf("called for the pods of the profiles %s", strings.Join(profiles, ", "))
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "extender:", err)
		os.Exit(1)
	}
}

// options are the demo's flags but -config.
type options struct {
	addr, healthAddr string
	bind             bool
	maxRequest       byteSize
	maxInFlight      byteSize // 0: the server's default
	maxCalls         int
}

// handler is the demo's handler as o configures it.
func (o options) handler() (*server.Handler, error) {
	var bind server.BindFunc
	if o.bind {
		bind = logBinding
	}
	opts := []server.Option{server.WithMaxRequestBytes(int64(o.maxRequest)), server.WithMaxConcurrentCalls(o.maxCalls)}
	if o.maxInFlight != 0 {
		opts = append(opts, server.WithMaxInFlightBytes(int64(o.maxInFlight)))
	}
	return newHandler(nil, bind, opts...)
}

func run(o options) error {
	h, err := o.handler()
	if err != nil {
		return err
	}
	servers := []*http.Server{h.HTTPServer(o.addr)}
	if o.healthAddr != "" {
		hs := h.HTTPServer(o.healthAddr)
		hs.Handler = healthOnly(h)
		servers = append(servers, hs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errs := make(chan error, len(servers))
	for _, srv := range servers {
		go func() {
			if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}()
	}
	verbs := []string{verbFilter, verbPrioritize, verbFilterOnlyOne}
	if o.bind {
		verbs = append(verbs, verbBind)
	}
	log.Printf("serving /%s on %s", strings.Join(verbs, ", /"), o.addr)
	if o.healthAddr != "" {
		log.Printf("serving /healthz alone on %s", o.healthAddr)
	}
	select {
	case err = <-errs:
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdown)
	}
	return err
}

// healthOnly passes GET /healthz to h and answers 404 to the rest: the
// probes' address serves no extender verb.
func healthOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// byteSize is a flag of bytes written as a Kubernetes quantity: 33554432,
// 32Mi or 32M.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	n, ok := q.AsInt64()
	if !ok || n <= 0 {
		return fmt.Errorf("%s: want a positive number of bytes", s)
	}
	*b = byteSize(n)
	return nil
}

// logBinding accepts every binding and logs it. A real extender would
// create it: clientset.CoreV1().Pods(b.Namespace).Bind(ctx, b, metav1.CreateOptions{}).
func logBinding(_ context.Context, b *v1.Binding) error {
	log.Printf("bind pod %s/%s (uid %s) to node %s", b.Namespace, b.Name, b.UID, b.Target.Name)
	return nil
}
