package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// everyTenth keeps the nodes whose name ends in 0, so that answers stay
// small and the clients' memory does not blur the server's.
func everyTenth(_ context.Context, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if strings.HasSuffix(ni.Name(), "0") {
		return nil
	}
	return fwk.NewStatus(fwk.Unschedulable, "not a tenth")
}

// TestUnderLoadEveryCallIsAnsweredAndTheHeapStaysBounded has 8 clients
// send filter calls of 2 MB of kubelet-like nodes over loopback, half of
// them waiting for "100 Continue", for a few seconds, to a handler that
// takes 3 such bodies at once. Every call must be answered, with 200 or
// a JSON 503, and the heap must stay within a bound set by the in-flight
// limit, not by the number of clients.
//
// Not parallel: it measures the heap, which parallel tests would share.
func TestUnderLoadEveryCallIsAnsweredAndTheHeapStaysBounded(t *testing.T) {
	const (
		clients   = 8
		perClient = 4
		size      = 2 << 20
	)
	body := filterBody(kubeletNodeJSON, size)
	h, err := server.New(
		server.Filter("filter", server.EachNode(everyTenth)),
		server.WithMaxRequestBytes(2*size),
		server.WithMaxInFlightBytes(3*int64(len(body))),
		server.WithMaxConcurrentCalls(4),
		server.WithTimeouts(30*time.Second, 30*time.Second),
		server.WithLogger(logr.Discard()),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	transport := &http.Transport{ExpectContinueTimeout: 5 * time.Second, MaxIdleConnsPerHost: clients}
	t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport}

	var ok, busy atomic.Int64
	stop := time.Now().Add(4 * time.Second)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	peak := heapPeak(func() {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for range perClient {
					if time.Now().After(stop) {
						return
					}
					req, err := http.NewRequest(http.MethodPost, srv.URL+"/filter", bytes.NewReader(body))
					if err != nil {
						t.Error(err)
						return
					}
					req.Header.Set("Content-Type", "application/json")
					if c%2 == 0 {
						req.Header.Set("Expect", "100-continue")
					}
					switch code, answer := call(client, req); code {
					case http.StatusOK:
						ok.Add(1)
					case http.StatusServiceUnavailable:
						busy.Add(1)
						if !strings.HasPrefix(answer, "extender busy: ") {
							t.Errorf("503 with %q, want the reason", answer)
						}
					case 0:
						t.Errorf("client %d: no answer: %s", c, answer)
					default:
						t.Errorf("client %d: answer %d %s", c, code, answer)
					}
				}
			})
		}
		wg.Wait()
	})
	transport.CloseIdleConnections()
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("%d calls answered, %d refused as busy; heap peak %d MB above the start for bodies of %d MB, %d MB allowed at once",
		ok.Load(), busy.Load(), peak>>20, len(body)>>20, 3*len(body)>>20)
	if ok.Load() == 0 {
		t.Error("no call was answered")
	}
	// About 4 times the bodies in progress, and garbage not yet
	// collected; 8 bodies at once, some 60 MB, would not pass.
	if limit := uint64(8 * 3 * len(body)); peak > limit {
		t.Errorf("heap peak %d MB above the start, want at most %d MB", peak>>20, limit>>20)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Errorf("the heap grew by %d MB once every call was answered", grown>>20)
	}
}

// call sends req and returns the status and the answer's Error, or 0
// and what went wrong if there was no answer.
func call(client *http.Client, req *http.Request) (int, string) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var answer struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return 0, "answer is not JSON: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		return 0, "503 without Retry-After"
	}
	return resp.StatusCode, answer.Error
}
