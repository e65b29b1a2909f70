package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// captureLog returns a logger and a function returning what it logged,
// one line per call, as funcr writes it: "level"=0 "msg"="..." "key"=value.
func captureLog() (logr.Logger, func() []string) {
	var mu sync.Mutex
	var lines []string
	l := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	return l, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// wantRefused checks that rec holds a refusal with code and a reason
// starting with reason, and that lines logged it once.
func wantRefused(t *testing.T, rec *httptest.ResponseRecorder, lines []string, code int, reason string) {
	t.Helper()
	var got struct{ Error string }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("answer %q (%s), want a JSON {\"Error\": ...} (%v)", rec.Body.String(), rec.Header().Get("Content-Type"), err)
	}
	if rec.Code != code || !strings.HasPrefix(got.Error, reason) {
		t.Errorf("answer %d %q, want %d %q", rec.Code, got.Error, code, reason)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg"="Refused an extender call"`) ||
		!strings.Contains(lines[0], fmt.Sprintf(`"status"=%d "reason"=%s`, code, strconv.Quote(got.Error))) {
		t.Errorf("logged %q, want the refusal once with its status and reason", lines)
	}
}

func request(method, path, contentType, body string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// tripwire is a body that must not be read.
type tripwire struct{}

func (tripwire) Read([]byte) (int, error) { return 0, errors.New("the body was read") }

func TestRefusals(t *testing.T) {
	t.Parallel()
	withSource := []server.Option{server.WithNodes(source)}
	unreadOverLimit := func() *http.Request {
		r := request("POST", "/filter", "application/json", "")
		r.Body, r.ContentLength = io.NopCloser(tripwire{}), 1<<20
		return r
	}
	tests := []struct {
		name   string
		opts   []server.Option
		req    func() *http.Request
		code   int
		reason string // "" for a call answered, not refused
	}{
		{"a path where no verb is served is refused with 404", nil,
			func() *http.Request { return request("POST", "/nothing", "application/json", "{}") }, 404, "no extender verb at /nothing"},
		{"a GET is refused with 405", nil,
			func() *http.Request { return request("GET", "/filter", "", "") }, 405, "method GET not allowed; extender calls are POST"},
		{"a text/plain body is refused with 415", nil,
			func() *http.Request { return request("POST", "/filter", "text/plain", wholeNodes(node("n1", "a"))) },
			415, `Content-Type "text/plain" is not application/json`},
		{"a body without a Content-Type is refused with 415", nil,
			func() *http.Request { return request("POST", "/filter", "", wholeNodes(node("n1", "a"))) },
			415, "request has no Content-Type; extender calls are application/json"},
		{"JSON in another charset is refused with 415", nil,
			func() *http.Request {
				return request("POST", "/filter", "application/json; charset=iso-8859-1", wholeNodes(node("n1", "a")))
			},
			415, `Content-Type "application/json; charset=iso-8859-1": JSON is UTF-8`},
		{"application/json in UTF-8 is served", nil,
			func() *http.Request {
				return request("POST", "/filter", "application/json; charset=UTF-8", wholeNodes(node("n1", "a")))
			}, 200, ""},
		{"a body whose Content-Length is over the limit is refused with 413, unread", []server.Option{server.WithMaxRequestBytes(1000)},
			unreadOverLimit, 413, "request body of 1048576 bytes is larger than the limit of 1000"},
		{"a chunked body over the limit is refused with 413 once the limit is read", []server.Option{server.WithMaxRequestBytes(100)},
			func() *http.Request {
				r := request("POST", "/filter", "application/json", wholeNodes(node("n1", "a")))
				r.ContentLength = -1
				return r
			}, 413, "request body larger than 100 bytes"},
		{"a node sent twice is refused with 400", nil,
			func() *http.Request {
				return request("POST", "/filter", "application/json", wholeNodes(node("n0", "a"), node("n1", "a"), node("n0", "b")))
			}, 400, `request names node "n0" twice`},
		{"a node named twice is refused with 400", withSource,
			func() *http.Request {
				return request("POST", "/filter", "application/json", nodeNames("n1", "n2", "n1"))
			},
			400, `request names node "n1" twice`},
		{"a node without a name is refused with 400", nil,
			func() *http.Request {
				return request("POST", "/prioritize", "application/json", wholeNodes(node("n0", "a"), node("", "a")))
			},
			400, "request has a node without a name (Nodes.items[1])"},
		{"an empty node name is refused with 400", withSource,
			func() *http.Request { return request("POST", "/prioritize", "application/json", nodeNames("n1", "")) },
			400, "request has an empty node name"},
		{"a pod given twice is refused with 400", nil,
			func() *http.Request {
				return request("POST", "/filter", "application/json", `{"Pod":{},"pod":{},"NodeNames":[]}`)
			},
			400, "malformed request body: Pod given twice"},
		{"a body denser in nodes than a scheduler's is refused with 400", nil,
			func() *http.Request {
				return request("POST", "/filter", "application/json", string(filterBody(tinyNode, 4096)))
			},
			400, "request body has "},
		{"a body denser in JSON objects than a scheduler's is refused with 400", nil,
			func() *http.Request {
				return request("POST", "/filter", "application/json", `{"Pod":{"spec":{"containers":[`+strings.Repeat("{},", 1000)+`{}]}},"NodeNames":[]}`)
			}, 400, "request body has "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log, lines := captureLog()
			h := newHandler(t, append(tc.opts, server.WithLogger(log))...)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, tc.req())
			if tc.reason == "" {
				if rec.Code != tc.code || len(lines()) != 0 {
					t.Errorf("answer %d %s, logged %q; want %d and nothing logged", rec.Code, rec.Body.String(), lines(), tc.code)
				}
				return
			}
			wantRefused(t, rec, lines(), tc.code, tc.reason)
		})
	}
}

// endless is a body that never ends, counting what was read of it.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.read += int64(len(p))
	return len(p), nil
}

func TestAnOversizedBodyIsNotReadPastTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 16
	h := newHandler(t, server.WithMaxRequestBytes(limit))
	body := &endless{}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, post("/filter", body))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("code %d, want 413", rec.Code)
	}
	if body.read > 2*limit {
		t.Errorf("read %d bytes of an endless body with a limit of %d", body.read, limit)
	}
}

// holdFilter is a filter that signals entered when called and returns
// when release is closed.
type holdFilter struct{ entered, release chan struct{} }

func (f holdFilter) filter(_ context.Context, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error) {
	f.entered <- struct{}{}
	<-f.release
	return nodes, framework.Diagnosis{}, nil
}

func TestBusyCallsAreRefusedAtOnce(t *testing.T) {
	t.Parallel()
	held := wholeNodes(node("n1", "a"))
	small := wholeNodes(node("n", "a"))
	tests := []struct {
		name string
		opts []server.Option
		// next is refused while a filter call of held is in progress;
		// small is served.
		next, reason string
	}{
		{"a call over the concurrency limit is refused with 503", []server.Option{server.WithMaxConcurrentCalls(1)},
			small, "extender busy: it serves at most 1 calls at once; retry later"},
		{"a call whose body does not fit in the in-flight limit is refused with 503",
			[]server.Option{server.WithMaxRequestBytes(int64(len(held))), server.WithMaxInFlightBytes(int64(len(held) + len(small)))},
			held, fmt.Sprintf("extender busy: the calls in progress hold %d of the %d bytes allowed for request bodies at once, this one needs %d; retry later",
				len(held), len(held)+len(small), len(held))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hold := holdFilter{entered: make(chan struct{}), release: make(chan struct{})}
			log, lines := captureLog()
			h, err := server.New(append(tc.opts, server.WithLogger(log),
				server.Filter("hold", hold.filter), server.Prioritize("prioritize", server.EachNodeScore(podCount)))...)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			first := httptest.NewRecorder()
			wg.Go(func() { h.ServeHTTP(first, post("/hold", strings.NewReader(held))) })
			<-hold.entered

			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, post("/prioritize", strings.NewReader(tc.next)))
			wantRefused(t, rec, lines(), http.StatusServiceUnavailable, tc.reason)
			if rec.Header().Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q, want 1", rec.Header().Get("Retry-After"))
			}
			// Over HTTP, the refusal comes before the body is asked for.
			srv := httptest.NewServer(h)
			defer srv.Close()
			if got := expectContinue(t, srv.Listener.Addr().String(), "/prioritize", "application/json", len(tc.next)); !strings.HasPrefix(got, "HTTP/1.1 503 ") {
				t.Errorf("a client expecting 100-continue got %q, want the 503", got)
			}

			close(hold.release)
			wg.Wait()
			if first.Code != 200 {
				t.Errorf("the held call was answered %d", first.Code)
			}
			// What the held call took is given back.
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, post("/prioritize", strings.NewReader(tc.next)))
			if rec.Code != 200 {
				t.Errorf("once the held call is answered, the next is answered %d %s", rec.Code, rec.Body.String())
			}
		})
	}
}

// expectContinue sends a request's header with "Expect: 100-continue"
// and a Content-Length of n, but not its body, and returns the first
// status line it gets.
func expectContinue(t *testing.T, addr, path, contentType string, n int) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", path, contentType, n)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to a request expecting 100-continue: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestRefusalsComeBeforeTheBodyIsAskedFor(t *testing.T) {
	t.Parallel()
	h := newHandler(t, server.WithMaxRequestBytes(1000))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, ctype string
		n           int
		want        string
	}{
		{"a body over the limit", "application/json", 1001, "HTTP/1.1 413 "},
		{"a body of another type", "text/plain", 10, "HTTP/1.1 415 "},
		{"a call to be served", "application/json", 10, "HTTP/1.1 100 Continue"},
	} {
		if got := expectContinue(t, srv.Listener.Addr().String(), "/filter", tc.ctype, tc.n); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestABodyNotReadInTimeIsRefusedWith408(t *testing.T) {
	t.Parallel()
	log, lines := captureLog()
	h := newHandler(t, server.WithTimeouts(200*time.Millisecond, time.Second), server.WithLogger(log))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	// Half a body, then nothing.
	fmt.Fprintf(conn, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"Pod\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	const reason = "reading the request body took longer than the read timeout"
	if resp.StatusCode != http.StatusRequestTimeout || strings.TrimSpace(string(got)) != `{"Error":"`+reason+`"}` {
		t.Errorf("answer %d %s, want 408 with the reason", resp.StatusCode, got)
	}
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], `"status"=408`) || !strings.Contains(l[0], reason) {
		t.Errorf("logged %q, want the refusal once", l)
	}
}
