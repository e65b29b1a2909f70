package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHealthEndpoints(t *testing.T) {
	t.Parallel()
	synced := &Controller{}
	synced.synced.Store(true)
	synced.metrics.observe("kubesched", "scheduled", 3*time.Millisecond)
	synced.metrics.observe("kubesched", "scheduled", time.Millisecond)
	synced.metrics.observe("kubesched", "unschedulable", 2*time.Millisecond)
	tests := []struct {
		name              string
		ctrl              *Controller
		electing, leading bool
		path              string
		code              int
		body              []string
	}{
		{name: "healthz answers as soon as the process runs", path: "/healthz", code: 200, body: []string{"ok"}},
		{name: "readyz waits for the informers", ctrl: &Controller{}, path: "/readyz", code: 503, body: []string{"informers not synced yet"}},
		{name: "readyz is ready once they synced", ctrl: synced, path: "/readyz", code: 200, body: []string{"ok"}},
		{name: "a standby waiting for the lease is ready", ctrl: &Controller{}, electing: true, path: "/readyz", code: 200, body: []string{"standby"}},
		{name: "a leader is ready only once synced", ctrl: &Controller{}, electing: true, leading: true, path: "/readyz", code: 503},
		{
			name: "metrics count attempts by profile and result", ctrl: synced, path: "/metrics", code: 200,
			body: []string{
				"# TYPE kubesched_schedule_attempts_total counter",
				`kubesched_schedule_attempts_total{profile="kubesched",result="scheduled"} 2`,
				`kubesched_schedule_attempts_total{profile="kubesched",result="unschedulable"} 1`,
				`kubesched_scheduling_attempt_duration_seconds_sum{profile="kubesched",result="scheduled"} 0.004`,
				`kubesched_scheduling_attempt_duration_seconds_count{profile="kubesched",result="unschedulable"} 1`,
			},
		},
		{name: "metrics before the controller runs say nothing was attempted", path: "/metrics", code: 200, body: []string{`kubesched_pending_pods{queue="active"} 0`}},
		{name: "other paths are not found", path: "/debug", code: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var h health
			if tt.ctrl != nil && tt.path != "/metrics" {
				h.ctrl.Store(tt.ctrl)
			}
			if tt.path == "/metrics" && tt.ctrl != nil {
				// Metrics read the queue: give the controller one.
				ctrl := newTestController(t)
				ctrl.metrics.attempts = tt.ctrl.metrics.attempts
				h.ctrl.Store(ctrl)
			}
			h.electing.Store(tt.electing)
			h.leading.Store(tt.leading)
			rec := httptest.NewRecorder()
			h.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.code {
				t.Errorf("%s: %d, want %d", tt.path, rec.Code, tt.code)
			}
			for _, want := range tt.body {
				if !strings.Contains(rec.Body.String(), want) {
					t.Errorf("%s lacks %q:\n%s", tt.path, want, rec.Body.String())
				}
			}
		})
	}
}

// newTestController is a controller on an empty fake cluster, not run.
func newTestController(t *testing.T) *Controller {
	t.Helper()
	ctrl, err := New(newFakeCluster(), Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	return ctrl
}

func TestHealthServesUntilTheContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var h health
	addr, err := h.serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
	cancel()
	eventually(t, "the server stops", func() bool {
		_, err := http.Get("http://" + addr.String() + "/healthz")
		return err != nil
	})
	if _, err := h.serve(context.Background(), "256.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "health endpoints on 256.0.0.1:1") {
		t.Errorf("a bad address: %v", err)
	}
}

func TestDebugCacheIsServedOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{false, true} {
		h := health{debug: debug}
		h.ctrl.Store(newTestController(t))
		rec := httptest.NewRecorder()
		h.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/cache", nil))
		want := http.StatusNotFound
		if debug {
			want = http.StatusOK
		}
		if rec.Code != want {
			t.Errorf("debug %v: /debug/cache %d, want %d", debug, rec.Code, want)
		}
		if debug && strings.TrimSpace(rec.Body.String()) != "{}" {
			t.Errorf("an empty cache is served as %q, want {}", rec.Body.String())
		}
	}
}
