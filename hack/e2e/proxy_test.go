package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesched/kubesched/hack/e2e/controlplane"
)

// apiProxy stands between a controller and kube-apiserver, so that a test
// can stop the controller at a moment it chooses: it holds a pod's
// binding (the POST to its binding subresource) until the test releases
// it, and it can pause the controller's watches of pods. It records every
// binding it forwards with the API server's answer. Everything else goes
// through untouched, the controller's own credentials included.
type apiProxy struct {
	// Kubeconfig is the administrator's kubeconfig file with the proxy as
	// its server, for the controller.
	Kubeconfig string

	proxy *httputil.ReverseProxy

	mu       sync.Mutex
	held     map[string]*heldBinding // by pod name, until it arrives
	bindings []bindingRecord

	// watches is read-locked by every write to a watch of pods, and
	// locked while paused says they are paused.
	watches sync.RWMutex
	paused  bool // under mu
}

// bindingRecord is one binding the proxy saw: the pod, the node the
// client asked for, and the API server's status code (0 when the client
// went away before the binding was forwarded).
type bindingRecord struct {
	pod, node string
	code      int
}

// heldBinding is a binding the proxy holds for the test.
type heldBinding struct {
	pod     string
	arrived chan string // the node asked for, once the binding arrives
	release chan struct{}
	done    chan int // the status code, or 0 if it was never forwarded
}

// startAPIProxy serves an apiProxy for cp's API server on a loopback
// port until t ends.
func startAPIProxy(t *testing.T, cp *controlplane.ControlPlane) *apiProxy {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cp.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &apiProxy{held: map[string]*heldBinding{}}
	transport := &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 100}
	p.proxy = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
		// Watches stream: every event reaches the client as it comes.
		FlushInterval: -1,
	}
	// Over TLS, as client-go sends a kubeconfig's credentials only to
	// an https server.
	srv := httptest.NewUnstartedServer(p)
	srv.StartTLS()
	t.Cleanup(func() {
		p.resumePodWatches() // in case a failing test left them paused
		srv.CloseClientConnections()
		srv.Close()
		transport.CloseIdleConnections()
	})

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{
		Server:                   srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cp.Config.BearerToken}
	cfg.Contexts["admin@proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "admin"}
	cfg.CurrentContext = "admin@proxy"
	p.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/binding"):
		p.serveBinding(w, r)
	case r.URL.Query().Get("watch") == "true" && isPodsPath(r.URL.Path):
		p.proxy.ServeHTTP(&gatedWriter{ResponseWriter: w, gate: &p.watches}, r)
	default:
		p.proxy.ServeHTTP(w, r)
	}
}

// isPodsPath reports whether path lists pods, of all namespaces or one.
func isPodsPath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch len(parts) {
	case 3: // api/v1/pods
		return parts[0] == "api" && parts[2] == "pods"
	case 5: // api/v1/namespaces/NS/pods
		return parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "pods"
	}
	return false
}

// serveBinding forwards a binding, after holding it if the test asked
// to, and records it.
func (p *apiProxy) serveBinding(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var b v1.Binding
	_ = json.Unmarshal(body, &b) // a body that is not JSON leaves the name empty, which no test holds
	rec := bindingRecord{pod: b.Name, node: b.Target.Name}

	p.mu.Lock()
	h := p.held[b.Name]
	delete(p.held, b.Name)
	p.mu.Unlock()
	if h != nil {
		h.arrived <- rec.node
		select {
		case <-h.release:
		case <-r.Context().Done():
			// The client is gone (killed): its binding never reaches the
			// API server.
			p.record(rec)
			h.done <- 0
			return
		}
	}
	sw := &statusWriter{ResponseWriter: w}
	p.proxy.ServeHTTP(sw, r)
	rec.code = sw.code
	p.record(rec)
	if h != nil {
		h.done <- rec.code
	}
}

func (p *apiProxy) record(rec bindingRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bindings = append(p.bindings, rec)
}

// holdBinding makes the proxy hold the next binding of pod until the
// test releases it.
func (p *apiProxy) holdBinding(pod string) *heldBinding {
	h := &heldBinding{pod: pod, arrived: make(chan string, 1), release: make(chan struct{}), done: make(chan int, 1)}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held[pod] = h
	return h
}

// wait returns the node the held binding asks for, once it has arrived.
func (h *heldBinding) wait(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case node := <-h.arrived:
		return node
	case <-time.After(timeout):
		t.Fatalf("no binding of pod %s reached the proxy within %v", h.pod, timeout)
		return ""
	}
}

// forward lets the held binding go on to the API server, and returns the
// status code it answered (0 if the client had gone away).
func (h *heldBinding) forward(t *testing.T) int {
	t.Helper()
	close(h.release)
	return h.result(t)
}

// result returns the status code the binding got, 0 if it was dropped
// because its client went away.
func (h *heldBinding) result(t *testing.T) int {
	t.Helper()
	select {
	case code := <-h.done:
		return code
	case <-time.After(time.Minute):
		t.Fatalf("the binding of pod %s got no answer within a minute", h.pod)
		return 0
	}
}

// bindingsOf returns the bindings of pod the proxy saw, in order.
func (p *apiProxy) bindingsOf(pod string) []bindingRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []bindingRecord
	for _, b := range p.bindings {
		if b.pod == pod {
			out = append(out, b)
		}
	}
	return out
}

// pausePodWatches stops what the API server sends on watches of pods
// from reaching the client, until resumePodWatches: the controller's
// informer then sees no change to any pod. Nothing is lost; it is
// delivered on resuming.
func (p *apiProxy) pausePodWatches() {
	p.watches.Lock()
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

// resumePodWatches undoes pausePodWatches; it does nothing when the
// watches are not paused.
func (p *apiProxy) resumePodWatches() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		p.watches.Unlock()
	}
}

// gatedWriter writes only while its gate is not locked.
type gatedWriter struct {
	http.ResponseWriter
	gate *sync.RWMutex
}

func (g *gatedWriter) Write(b []byte) (int, error) {
	g.gate.RLock()
	defer g.gate.RUnlock()
	return g.ResponseWriter.Write(b)
}

func (g *gatedWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
