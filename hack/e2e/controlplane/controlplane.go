// Package controlplane starts a real Kubernetes control plane on loopback
// for end-to-end tests: etcd, kube-apiserver and, optionally,
// kube-scheduler and a kube-controller-manager running only the
// PersistentVolume binder, built from the module proxy by [Build]. There
// is no kubelet and no other controller: nodes are plain API objects, as
// KWOK makes them, so the API server runs without the admission plugins
// that would wait for those (ServiceAccount, TaintNodesByCondition) and
// without an endpoint reconciler.
//
// Children get SIGKILL when the test process dies (Linux's parent-death
// signal), so an aborted test leaves nothing running.
package controlplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Options say what to start.
type Options struct {
	// Binaries are the programs, from [Build].
	Binaries Binaries
	// Dir holds data, certificates and logs; a test's t.TempDir().
	Dir string
	// Scheduler starts kube-scheduler too, with SchedulerConfig (a
	// KubeSchedulerConfiguration; its clientConnection.kubeconfig is
	// filled in) when set and its defaults otherwise.
	Scheduler       bool
	SchedulerConfig string
	// Timeout bounds each component's start; 90s when zero.
	Timeout time.Duration
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Config is an administrator's client configuration (system:masters).
	Config *rest.Config
	// Kubeconfig is the same as a kubeconfig file, for programs.
	Kubeconfig string

	opts  Options
	pki   pki
	ports struct{ etcdClient, etcdPeer, apiserver, scheduler, controllerManager int }
	token string

	mu    sync.Mutex
	procs map[string]*process
}

// process is one running child.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// Start starts etcd and kube-apiserver (and kube-scheduler if asked),
// each on free loopback ports, and returns once each reports ready. On
// error everything started is stopped. A port taken between choosing it
// and binding it (an outgoing connection may take it) makes Start try
// again on other ports, up to three times.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 90 * time.Second
	}
	var err error
	for attempt := range 3 {
		dir := filepath.Join(opts.Dir, "attempt-"+strconv.Itoa(attempt))
		if err = os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		o := opts
		o.Dir = dir
		cp := &ControlPlane{opts: o, procs: map[string]*process{}}
		if err = cp.startAll(ctx); err == nil {
			return cp, nil
		}
		cp.Stop()
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, err
}

// startAll makes the certificates and starts etcd, kube-apiserver and,
// when asked for, kube-scheduler, in that order, on ports of their own.
func (cp *ControlPlane) startAll(ctx context.Context) error {
	var err error
	if cp.pki, err = makePKI(cp.opts.Dir); err != nil {
		return fmt.Errorf("making certificates: %w", err)
	}
	for _, p := range []*int{&cp.ports.etcdClient, &cp.ports.etcdPeer, &cp.ports.apiserver, &cp.ports.scheduler, &cp.ports.controllerManager} {
		if *p, err = FreePort(); err != nil {
			return err
		}
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	cp.token = hex.EncodeToString(b)
	if err := os.WriteFile(filepath.Join(cp.opts.Dir, "tokens.csv"), []byte(cp.token+",admin,admin,\"system:masters\"\n"), 0o600); err != nil {
		return err
	}
	cp.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(cp.ports.apiserver),
		BearerToken:     cp.token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: cp.pki.caCert},
	}
	cp.Kubeconfig = filepath.Join(cp.opts.Dir, "kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, []byte(cp.kubeconfig()), 0o600); err != nil {
		return err
	}
	if err := cp.StartEtcd(ctx); err != nil {
		return err
	}
	if err := cp.StartAPIServer(ctx); err != nil {
		return err
	}
	if cp.opts.Scheduler {
		return cp.StartScheduler(ctx)
	}
	return nil
}

// StartEtcd starts etcd, keeping its data from an earlier run in Dir, and
// waits for its /health.
func (cp *ControlPlane) StartEtcd(ctx context.Context) error {
	client := "http://127.0.0.1:" + strconv.Itoa(cp.ports.etcdClient)
	peer := "http://127.0.0.1:" + strconv.Itoa(cp.ports.etcdPeer)
	args := []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(cp.opts.Dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=e2e=" + peer,
		// A test cluster needs no durability, and fsync is most of
		// etcd's latency on a shared disk.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
	if err := cp.start("etcd", cp.opts.Binaries.Etcd, args); err != nil {
		return err
	}
	return cp.waitReady(ctx, "etcd", client+"/health", nil)
}

// StartAPIServer starts kube-apiserver and waits for its /readyz.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	args := []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(cp.ports.etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.ports.apiserver),
		"--tls-cert-file=" + cp.pki.servingCert,
		"--tls-private-key-file=" + cp.pki.servingKey,
		"--client-ca-file=" + cp.pki.caCert,
		"--token-auth-file=" + filepath.Join(cp.opts.Dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.pki.saPublic,
		"--service-account-signing-key-file=" + cp.pki.saPrivate,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No controller-manager: nothing would create service account
		// tokens or remove the not-ready taint from new nodes.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(cp.opts.Dir, "apiserver-certs"),
		"--profiling=false",
		"--v=0",
	}
	if err := cp.start("kube-apiserver", cp.opts.Binaries.APIServer, args); err != nil {
		return err
	}
	return cp.waitReady(ctx, "kube-apiserver", cp.Config.Host+"/readyz", cp.apiTLS())
}

// StartSchedulerWithConfig starts kube-scheduler with config, a
// KubeSchedulerConfiguration, and keeps it for later starts.
func (cp *ControlPlane) StartSchedulerWithConfig(ctx context.Context, config string) error {
	cp.opts.SchedulerConfig = config
	return cp.StartScheduler(ctx)
}

// StartScheduler starts kube-scheduler and waits for its /healthz.
func (cp *ControlPlane) StartScheduler(ctx context.Context) error {
	args := []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--authentication-skip-lookup=true",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.ports.scheduler),
		"--cert-dir=" + filepath.Join(cp.opts.Dir, "scheduler-certs"),
		"--v=1",
	}
	if cp.opts.SchedulerConfig != "" {
		path := filepath.Join(cp.opts.Dir, "scheduler-config.yaml")
		if err := os.WriteFile(path, []byte(cp.opts.SchedulerConfig), 0o600); err != nil {
			return err
		}
		args = append(args, "--config="+path)
	}
	if err := cp.start("kube-scheduler", cp.opts.Binaries.Scheduler, args); err != nil {
		return err
	}
	insecure := &tls.Config{InsecureSkipVerify: true} // its own self-signed certificate
	return cp.waitReady(ctx, "kube-scheduler", "https://127.0.0.1:"+strconv.Itoa(cp.ports.scheduler)+"/healthz", insecure)
}

// SchedulerMetrics returns what kube-scheduler serves on /metrics, in
// Prometheus' text format. It asks with the administrator's token,
// which kube-scheduler has the API server check.
func (cp *ControlPlane) SchedulerMetrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(cp.ports.scheduler)+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+cp.token)
	insecure := &tls.Config{InsecureSkipVerify: true} // its own self-signed certificate
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: insecure}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("kube-scheduler's /metrics: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	return string(body), nil
}

// StartControllerManager starts kube-controller-manager with one
// controller, the PersistentVolume binder, which binds claims to volumes
// (those the scheduler chose for claims that wait for their first
// consumer too), and waits for its /healthz. Nothing provisions volumes:
// a claim whose class names a provisioner stays pending.
func (cp *ControlPlane) StartControllerManager(ctx context.Context) error {
	args := []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--authentication-skip-lookup=true",
		"--controllers=persistentvolume-binder-controller",
		// The administrator's token for every controller: no
		// service-account token controller runs to give them their own.
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.ports.controllerManager),
		"--cert-dir=" + filepath.Join(cp.opts.Dir, "controller-manager-certs"),
		"--v=1",
	}
	if err := cp.start("kube-controller-manager", cp.opts.Binaries.ControllerManager, args); err != nil {
		return err
	}
	insecure := &tls.Config{InsecureSkipVerify: true} // its own self-signed certificate
	return cp.waitReady(ctx, "kube-controller-manager", "https://127.0.0.1:"+strconv.Itoa(cp.ports.controllerManager)+"/healthz", insecure)
}

// Kill stops one component (etcd, kube-apiserver, kube-scheduler or
// kube-controller-manager) at once, as a crash would; the Start method
// of the same name brings it back on the same ports and data.
func (cp *ControlPlane) Kill(name string) error {
	cp.mu.Lock()
	p := cp.procs[name]
	delete(cp.procs, name)
	cp.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not running", name)
	}
	p.stop(syscall.SIGKILL)
	return nil
}

// Stop stops every component, the scheduler and the controller-manager
// first, and waits for them.
func (cp *ControlPlane) Stop() {
	for _, name := range []string{"kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		cp.mu.Lock()
		p := cp.procs[name]
		delete(cp.procs, name)
		cp.mu.Unlock()
		if p != nil {
			p.stop(syscall.SIGTERM)
		}
	}
}

// Log returns the last n bytes a component wrote, for a failing test.
func (cp *ControlPlane) Log(name string, n int) string {
	b, err := os.ReadFile(filepath.Join(cp.opts.Dir, name+".log"))
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (cp *ControlPlane) start(name, binary string, args []string) error {
	if binary == "" {
		return fmt.Errorf("no %s binary: build them with controlplane.Build", name)
	}
	log, err := os.OpenFile(filepath.Join(cp.opts.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// The child dies with the test process, however it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	cp.mu.Lock()
	cp.procs[name] = p
	cp.mu.Unlock()
	return nil
}

// waitReady polls url until it answers 200, the process exits, or the
// start timeout passes.
func (cp *ControlPlane) waitReady(ctx context.Context, name, url string, tlsConfig *tls.Config) error {
	cp.mu.Lock()
	p := cp.procs[name]
	cp.mu.Unlock()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, cp.opts.Timeout)
	defer cancel()
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if name == "kube-apiserver" {
			req.Header.Set("Authorization", "Bearer "+cp.token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited while starting (%v); its log ends:\n%s", name, p.err, cp.Log(name, 4000))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v (last answer: %s); its log ends:\n%s", name, cp.opts.Timeout, last, cp.Log(name, 4000))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *process) stop(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// apiTLS trusts the control plane's CA.
func (cp *ControlPlane) apiTLS() *tls.Config {
	pool := x509.NewCertPool()
	if b, err := os.ReadFile(cp.pki.caCert); err == nil {
		pool.AppendCertsFromPEM(b)
	}
	return &tls.Config{RootCAs: pool}
}

func (cp *ControlPlane) kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, cp.Config.Host, cp.pki.caCert, cp.token)
}

// FreePort asks the kernel for a free loopback port. Another process may
// take it before the caller binds it; Start tries again when that
// happens to a component.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
