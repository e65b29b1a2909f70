package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesched/kubesched/hack/e2e/controlplane"
)

const kubeschedName = "kubesched"

// startControlPlane starts etcd, kube-apiserver and kube-scheduler for t,
// stopped when t ends; on failure the components' logs are printed.
func startControlPlane(t *testing.T, ctx context.Context) (*controlplane.ControlPlane, kubernetes.Interface) {
	return startControlPlaneOpts(t, ctx, true)
}

// startControlPlaneOpts is startControlPlane, with kube-scheduler only
// when scheduler is set.
func startControlPlaneOpts(t *testing.T, ctx context.Context, scheduler bool) (*controlplane.ControlPlane, kubernetes.Interface) {
	t.Helper()
	cp, err := controlplane.Start(ctx, controlplane.Options{Binaries: binaries, Dir: t.TempDir(), Scheduler: scheduler})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range []string{"etcd", "kube-apiserver", "kube-scheduler"} {
				t.Logf("%s log ends:\n%s", name, cp.Log(name, 3000))
			}
		}
		cp.Stop()
	})
	cfg := *cp.Config
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cp, client
}

// controllerProcess is a running controller and where it serves its
// probes (and, with -enable-debug-endpoints, /debug/cache).
type controllerProcess struct {
	cmd    *exec.Cmd
	health string
	// logPath is the file its stdout and stderr go to.
	logPath string
	// exited is closed once the process has exited, with err set.
	exited chan struct{}
	err    error
}

// startController runs kubesched's controller against cp until t ends,
// and waits for its /readyz.
func startController(t *testing.T, cp *controlplane.ControlPlane, args ...string) *controllerProcess {
	t.Helper()
	return startControllerAs(t, cp.Kubeconfig, args...)
}

// startControllerAs is startController with the credentials of the
// kubeconfig file at kubeconfig.
func startControllerAs(t *testing.T, kubeconfig string, args ...string) *controllerProcess {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "controller.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	health := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(controller, append([]string{"-kubeconfig", kubeconfig, "-health-bind-address", health}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctrl := &controllerProcess{cmd: cmd, health: health, logPath: logPath, exited: make(chan struct{})}
	go func() {
		ctrl.err = cmd.Wait()
		log.Close()
		close(ctrl.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-ctrl.exited
		if t.Failed() {
			b := ctrl.output()
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("controller %s log ends:\n%s", health, b)
		}
	})
	eventually(t, time.Minute, "the controller's /readyz answers 200", func() (bool, error) {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return ctrl
}

// output is what the controller has written to stdout and stderr.
func (c *controllerProcess) output() string {
	b, _ := os.ReadFile(c.logPath)
	return string(b)
}

// get returns the body of what the controller serves at path.
func (c *controllerProcess) get(path string) (string, error) {
	resp, err := http.Get("http://" + c.health + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return string(b), err
}

// cachedPods returns the pods the controller's cache holds, node by node,
// from /debug/cache (-enable-debug-endpoints).
func (c *controllerProcess) cachedPods() (map[string][]string, error) {
	text, err := c.get("/debug/cache")
	if err != nil {
		return nil, err
	}
	var cached map[string][]string
	err = json.Unmarshal([]byte(text), &cached)
	return cached, err
}

// node is a Ready node with cpu cores, memory and 110 pods allocatable,
// as a kubelet would report it.
func node(name, cpu, memory string, labels map[string]string) *v1.Node {
	l := map[string]string{v1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	alloc := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse(memory),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status: v1.NodeStatus{
			Capacity:    alloc,
			Allocatable: alloc,
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
}

// pod asks scheduler for cpu and memory.
func pod(name, scheduler, cpu, memory string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{"app": name}},
		Spec: v1.PodSpec{
			SchedulerName: scheduler,
			Containers: []v1.Container{{Name: "c", Image: "registry.example.com/app:1", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)},
			}}},
		},
	}
}

// eventually polls cond every 100ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scheduledCondition returns pod's PodScheduled condition, or nil.
func scheduledCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestBothSchedulersSideBySide(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlane(t, ctx)
	for i := range 4 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "4", "8Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	create := func(p *v1.Pod) {
		t.Helper()
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// kube-scheduler alone: its pods bind, kubesched's wait.
	for i := range 10 {
		create(pod(fmt.Sprintf("default-%d", i), v1.DefaultSchedulerName, "500m", "512Mi"))
		create(pod(fmt.Sprintf("kubesched-%d", i), kubeschedName, "500m", "512Mi"))
	}
	eventually(t, time.Minute, "kube-scheduler binds its 10 pods", func() (bool, error) {
		return countBound(ctx, pods, v1.DefaultSchedulerName) == 10, nil
	})
	if n := countBound(ctx, pods, kubeschedName); n != 0 {
		t.Fatalf("%d of kubesched's pods were bound before kubesched ran", n)
	}

	// Then kubesched's controller binds its own, and nothing else.
	startController(t, cp, "-scheduler-name", kubeschedName)
	eventually(t, time.Minute, "kubesched binds its 10 pods", func() (bool, error) {
		return countBound(ctx, pods, kubeschedName) == 10, nil
	})
	// Two schedulers that place pods on the same nodes at the same time
	// can overcommit a node, as any two schedulers can (the kubelet then
	// refuses the pod): neither sees the other's pods before they are
	// bound. One after the other, each sees the other's bindings before
	// its new pods, in its one watch of pods, and no node is overcommitted.
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		for i := range 6 {
			create(pod(fmt.Sprintf("%s-more-%d", scheduler, i), scheduler, "500m", "512Mi"))
		}
		eventually(t, time.Minute, scheduler+" binds 6 more", func() (bool, error) {
			return countBound(ctx, pods, scheduler) == 16, nil
		})
	}
	checkNotOvercommitted(t, ctx, client)

	// The same pod that fits nowhere, once for each: the same message.
	// 32 pods of 500m fill 16 of the 16 cores; this one asks for 2.
	create(pod("too-big-default", v1.DefaultSchedulerName, "2", "1Gi"))
	create(pod("too-big-kubesched", kubeschedName, "2", "1Gi"))
	messages := map[string]string{}
	eventually(t, time.Minute, "both report the pod unschedulable", func() (bool, error) {
		for _, name := range []string{"too-big-default", "too-big-kubesched"} {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if c := scheduledCondition(p); c != nil && c.Status == v1.ConditionFalse {
				messages[name] = c.Reason + ": " + c.Message
			}
		}
		return len(messages) == 2, nil
	})
	if messages["too-big-default"] != messages["too-big-kubesched"] {
		t.Errorf("PodScheduled=False differs:\n kube-scheduler: %s\n kubesched:      %s", messages["too-big-default"], messages["too-big-kubesched"])
	}
	t.Logf("both wrote %q", messages["too-big-kubesched"])

	// And the same Events, each reported by its scheduler: a Scheduled
	// event per bound pod, FailedScheduling with the message.
	type key struct{ reporter, reason string }
	var counts map[key]int
	notes := map[string]string{}
	eventually(t, time.Minute, "both schedulers' Events arrive", func() (bool, error) {
		list, err := client.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		counts = map[key]int{}
		for _, e := range list.Items {
			counts[key{e.ReportingController, e.Reason}]++
			if e.Reason == "FailedScheduling" {
				notes[e.Regarding.Name] = e.Note
			}
		}
		return counts[key{v1.DefaultSchedulerName, "Scheduled"}] == 16 && counts[key{kubeschedName, "Scheduled"}] == 16 &&
			notes["too-big-default"] != "" && notes["too-big-kubesched"] != "", nil
	})
	if notes["too-big-default"] != notes["too-big-kubesched"] {
		t.Errorf("FailedScheduling notes differ:\n kube-scheduler: %s\n kubesched:      %s", notes["too-big-default"], notes["too-big-kubesched"])
	}
	for k, n := range counts {
		if k.reporter != v1.DefaultSchedulerName && k.reporter != kubeschedName {
			t.Errorf("%d %s events reported by %q", n, k.reason, k.reporter)
		}
	}
}

// countBound counts the pods of scheduler bound to a node.
func countBound(ctx context.Context, pods interface {
	List(context.Context, metav1.ListOptions) (*v1.PodList, error)
}, scheduler string) int {
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.SchedulerName == scheduler && p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// checkNotOvercommitted fails t if the pods bound to some node request
// more cpu or memory than it has.
func checkNotOvercommitted(t *testing.T, ctx context.Context, client kubernetes.Interface) {
	t.Helper()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]v1.ResourceList{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		if used[p.Spec.NodeName] == nil {
			used[p.Spec.NodeName] = v1.ResourceList{}
		}
		for _, c := range p.Spec.Containers {
			for name, q := range c.Resources.Requests {
				sum := used[p.Spec.NodeName][name]
				sum.Add(q)
				used[p.Spec.NodeName][name] = sum
			}
		}
	}
	for _, n := range nodes.Items {
		for name, q := range used[n.Name] {
			if alloc := n.Status.Allocatable[name]; q.Cmp(alloc) > 0 {
				t.Errorf("node %s: pods request %s %s of %s allocatable", n.Name, q.String(), name, alloc.String())
			}
		}
	}
}
