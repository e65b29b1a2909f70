package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metrics counts scheduling attempts, as kube-scheduler's
// scheduler_schedule_attempts_total and
// scheduler_scheduling_attempt_duration_seconds do, per profile and
// result (scheduled, unschedulable, error).
type metrics struct {
	mu       sync.Mutex
	attempts map[attemptKey]*attemptStats
}

type attemptKey struct{ profile, result string }

type attemptStats struct {
	count   int64
	seconds float64
}

// observe records one attempt.
func (m *metrics) observe(profile, result string, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.attempts == nil {
		m.attempts = map[attemptKey]*attemptStats{}
	}
	k := attemptKey{profile, result}
	s := m.attempts[k]
	if s == nil {
		s = &attemptStats{}
		m.attempts[k] = s
	}
	s.count++
	s.seconds += took.Seconds()
}

// Attempts returns how many attempts of profile ended in result.
func (m *metrics) Attempts(profile, result string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.attempts[attemptKey{profile, result}]; s != nil {
		return s.count
	}
	return 0
}

// write writes the metrics in Prometheus' text format, with the queue's
// pending pods.
func (m *metrics) write(w io.Writer, pending map[string]int) {
	m.mu.Lock()
	keys := make([]attemptKey, 0, len(m.attempts))
	for k := range m.attempts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b attemptKey) int {
		return cmp.Or(strings.Compare(a.profile, b.profile), strings.Compare(a.result, b.result))
	})
	stats := make([]attemptStats, len(keys))
	for i, k := range keys {
		stats[i] = *m.attempts[k]
	}
	m.mu.Unlock()

	fmt.Fprintln(w, "# HELP kubesched_schedule_attempts_total Scheduling attempts by profile and result (scheduled, unschedulable, error).")
	fmt.Fprintln(w, "# TYPE kubesched_schedule_attempts_total counter")
	for i, k := range keys {
		fmt.Fprintf(w, "kubesched_schedule_attempts_total{profile=%q,result=%q} %d\n", k.profile, k.result, stats[i].count)
	}
	fmt.Fprintln(w, "# HELP kubesched_scheduling_attempt_duration_seconds Time from taking a pod from the queue to its decision.")
	fmt.Fprintln(w, "# TYPE kubesched_scheduling_attempt_duration_seconds summary")
	for i, k := range keys {
		fmt.Fprintf(w, "kubesched_scheduling_attempt_duration_seconds_sum{profile=%q,result=%q} %g\n", k.profile, k.result, stats[i].seconds)
		fmt.Fprintf(w, "kubesched_scheduling_attempt_duration_seconds_count{profile=%q,result=%q} %d\n", k.profile, k.result, stats[i].count)
	}
	fmt.Fprintln(w, "# HELP kubesched_pending_pods Pods waiting in the scheduling queue, by sub-queue.")
	fmt.Fprintln(w, "# TYPE kubesched_pending_pods gauge")
	for _, q := range []string{"active", "backoff", "unschedulable"} {
		fmt.Fprintf(w, "kubesched_pending_pods{queue=%q} %d\n", q, pending[q])
	}
}

// health is what the probes read.
type health struct {
	// debug serves /debug/cache too.
	debug bool
	// electing is set when leader election is on; leading once this
	// replica leads.
	electing, leading atomic.Bool
	// ctrl is the controller once it runs.
	ctrl atomic.Pointer[Controller]
	// logger receives the server's failure; nil discards it.
	logger *slog.Logger
}

// handler serves /healthz (the process answers), /readyz (ready to
// schedule: a replica waiting for the lease is ready as a standby, as
// kube-scheduler's is; one that leads is ready once its informers have
// synced) and /metrics.
func (h *health) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ctrl := h.ctrl.Load()
		switch {
		case h.electing.Load() && !h.leading.Load():
			fmt.Fprintln(w, "ok: standby, waiting for the lease")
		case ctrl != nil && ctrl.Synced():
			fmt.Fprintln(w, "ok")
		default:
			http.Error(w, "informers not synced yet", http.StatusServiceUnavailable)
		}
	})
	if h.debug {
		mux.HandleFunc("GET /debug/cache", func(w http.ResponseWriter, _ *http.Request) {
			ctrl := h.ctrl.Load()
			if ctrl == nil {
				http.Error(w, "not running", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(ctrl.cachedPods())
		})
	}
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		ctrl := h.ctrl.Load()
		if ctrl == nil {
			(&metrics{}).write(w, nil)
			return
		}
		ctrl.metrics.write(w, ctrl.pending())
	})
	return mux
}

// serve serves h on addr until ctx is done. The listener is open when
// serve returns without error.
func (h *health) serve(ctx context.Context, addr string) (net.Addr, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health endpoints on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h.handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && h.logger != nil {
			h.logger.Error("health endpoints stopped", "address", addr, "err", err)
		}
	}()
	context.AfterFunc(ctx, func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	})
	return l.Addr(), nil
}
