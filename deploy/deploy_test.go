// Package deploy_test checks the deployment manifests and Dockerfiles
// with the API's own types: every document decodes strictly, the
// scheduler configurations load as kube-scheduler loads them, and the
// pieces refer to each other (mounts, ports, service accounts, roles).
// The programs' own tests check that they accept the manifests' flags.
package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubesched/kubesched"
)

// objects decodes every document of a manifest strictly: an unknown or
// misspelt field is an error, as kubectl apply --validate=strict makes it.
func objects(t *testing.T, path string) []runtime.Object {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	docs := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", path, i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: document %d: %v", path, i, err)
		}
		out = append(out, obj)
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for line := range strings.SplitSeq(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.Bytes()
}

func find[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if x, ok := o.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// manifest is what both deployments share: one Deployment running as a
// ServiceAccount bound to kube-scheduler's roles, reading a scheduler
// configuration from a ConfigMap.
type manifest struct {
	deployment *appsv1.Deployment
	config     *v1.ConfigMap
	objs       []runtime.Object
}

func load(t *testing.T, path string) manifest {
	t.Helper()
	objs := objects(t, path)
	deployments, configs := find[*appsv1.Deployment](objs), find[*v1.ConfigMap](objs)
	if len(deployments) != 1 || len(configs) != 1 {
		t.Fatalf("%s: %d Deployments and %d ConfigMaps, want one of each", path, len(deployments), len(configs))
	}
	m := manifest{deployment: deployments[0], config: configs[0], objs: objs}
	spec := m.deployment.Spec.Template.Spec

	// The ServiceAccount exists and has kube-scheduler's rights.
	if !slices.ContainsFunc(find[*v1.ServiceAccount](objs), func(sa *v1.ServiceAccount) bool {
		return sa.Name == spec.ServiceAccountName && sa.Namespace == m.deployment.Namespace
	}) {
		t.Errorf("%s: the Deployment runs as ServiceAccount %q, which the manifest lacks", path, spec.ServiceAccountName)
	}
	for _, role := range []string{"system:kube-scheduler", "system:volume-scheduler"} {
		if !slices.ContainsFunc(find[*rbacv1.ClusterRoleBinding](objs), func(b *rbacv1.ClusterRoleBinding) bool {
			return b.RoleRef.Kind == "ClusterRole" && b.RoleRef.Name == role && slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == "ServiceAccount" && s.Name == spec.ServiceAccountName && s.Namespace == m.deployment.Namespace
			})
		}) {
			t.Errorf("%s: no ClusterRoleBinding gives %s to the ServiceAccount", path, role)
		}
	}
	// The selector selects the template.
	for k, v := range m.deployment.Spec.Selector.MatchLabels {
		if spec := m.deployment.Spec.Template.Labels[k]; spec != v {
			t.Errorf("%s: the selector wants %s=%s, the template has %q", path, k, v, spec)
		}
	}
	// Each container's probes name its ports or numbers it listens on.
	for _, c := range spec.Containers {
		for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil {
				t.Errorf("%s: container %s lacks an HTTP liveness or readiness probe", path, c.Name)
				continue
			}
			if port := p.HTTPGet.Port; port.StrVal != "" && !slices.ContainsFunc(c.Ports, func(cp v1.ContainerPort) bool { return cp.Name == port.StrVal }) {
				t.Errorf("%s: container %s probes port %q, which it does not name", path, c.Name, port.StrVal)
			}
		}
	}
	return m
}

// configFile returns the ConfigMap's scheduler configuration that the
// container's flag (such as --config) points at, checking that the path
// is in a mount of that ConfigMap.
func (m manifest) configFile(t *testing.T, c v1.Container, flag string) []byte {
	t.Helper()
	var path string
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			path = v
		}
	}
	if path == "" {
		t.Fatalf("container %s has no %s", c.Name, flag)
	}
	for _, vm := range c.VolumeMounts {
		rel, err := filepath.Rel(vm.MountPath, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		for _, vol := range m.deployment.Spec.Template.Spec.Volumes {
			if vol.Name == vm.Name && vol.ConfigMap != nil && vol.ConfigMap.Name == m.config.Name {
				data, ok := m.config.Data[rel]
				if !ok {
					t.Fatalf("container %s reads %s, but ConfigMap %s has no key %s", c.Name, path, m.config.Name, rel)
				}
				return []byte(data)
			}
		}
	}
	t.Fatalf("container %s reads %s, which no mount of ConfigMap %s holds", c.Name, path, m.config.Name)
	return nil
}

func container(t *testing.T, d *appsv1.Deployment, name string) v1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Deployment %s has no container %s", d.Name, name)
	return v1.Container{}
}

func TestControllerManifest(t *testing.T) {
	t.Parallel()
	m := load(t, "controller/kubesched.yaml")
	c := container(t, m.deployment, "kubesched")
	cfg, err := kubesched.LoadConfig(m.configFile(t, c, "-config"))
	if err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if len(cfg.Profiles) == 0 || *cfg.Profiles[0].SchedulerName == v1.DefaultSchedulerName {
		t.Errorf("the configuration's profiles %v would compete with the cluster's own scheduler", cfg.Profiles)
	}
	// The probes' port is where the controller serves them.
	if !slices.Contains(c.Args, "-health-bind-address=:10251") || c.Ports[0].ContainerPort != 10251 {
		t.Errorf("the controller serves its probes on -health-bind-address=:10251; args %v, ports %v", c.Args, c.Ports)
	}
	// Several replicas take turns: they need their own Lease.
	if *m.deployment.Spec.Replicas < 2 {
		t.Errorf("%d replica: leader election is there for two or more", *m.deployment.Spec.Replicas)
	}
	leaseRule := func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, "leases") && slices.Contains(r.ResourceNames, "kubesched") && slices.Contains(r.Verbs, "update")
	}
	if !slices.ContainsFunc(find[*rbacv1.Role](m.objs), func(r *rbacv1.Role) bool { return slices.ContainsFunc(r.Rules, leaseRule) }) {
		t.Error("no Role lets the controller renew its Lease, kube-system/kubesched")
	}
}

func TestExtenderManifest(t *testing.T) {
	t.Parallel()
	m := load(t, "extender/extender.yaml")
	ks := container(t, m.deployment, "kube-scheduler")
	if want := kubesched.Releases()[0].Version(); !strings.HasSuffix(ks.Image, ":"+want) {
		t.Errorf("kube-scheduler image %s: the version kubesched reproduces is %s", ks.Image, want)
	}
	data := m.configFile(t, ks, "--config")
	cfg, err := kubesched.LoadConfig(data)
	if err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	ext := container(t, m.deployment, "extender")
	// The extender reads the very file kube-scheduler reads, and its tests
	// check it accepts it with the arguments below.
	if got := m.configFile(t, ext, "-config"); !bytes.Equal(got, data) {
		t.Error("the extender checks another file than kube-scheduler reads")
	}
	if len(cfg.Extenders) != 1 {
		t.Fatalf("%d extenders, want 1", len(cfg.Extenders))
	}
	e := cfg.Extenders[0]
	u, err := url.Parse(e.URLPrefix)
	if err != nil {
		t.Fatal(err)
	}

	// The verbs have no authentication: the extender listens on loopback
	// only, where kube-scheduler calls it, and exposes no port for them.
	addr := flagValue(ext, "-addr")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) || host != u.Hostname() || port != u.Port() {
		t.Errorf("kube-scheduler calls %s; the extender listens on -addr=%s, want the same loopback address", u, addr)
	}
	for _, p := range ext.Ports {
		if strconv.Itoa(int(p.ContainerPort)) == port {
			t.Errorf("the extender's verbs are a container port (%s)", p.Name)
		}
	}
	// Probes reach the pod's address, not loopback: /healthz alone is
	// served there.
	_, healthPort, err := net.SplitHostPort(flagValue(ext, "-health-addr"))
	if err != nil {
		t.Fatalf("-health-addr: %v", err)
	}
	for _, p := range []*v1.Probe{ext.LivenessProbe, ext.ReadinessProbe} {
		if p.HTTPGet.Path != "/healthz" || strconv.Itoa(int(containerPort(t, ext, p.HTTPGet.Port.StrVal))) != healthPort {
			t.Errorf("the extender's probe asks %s on %s; it answers /healthz on -health-addr's port %s", p.HTTPGet.Path, p.HTTPGet.Port.String(), healthPort)
		}
	}
	// kube-scheduler binds: the extender serves no /bind.
	if e.BindVerb != "" || slices.ContainsFunc(ext.Args, func(a string) bool { return a == "-bind" || strings.HasPrefix(a, "-bind=") }) {
		t.Errorf("bindVerb %q, args %v: /bind should be off", e.BindVerb, ext.Args)
	}

	// Versioned images, used as built or loaded on the node.
	for _, c := range []v1.Container{ks, ext} {
		if _, tag, ok := strings.Cut(c.Image[strings.LastIndex(c.Image, "/")+1:], ":"); !ok || tag == "" || tag == "latest" {
			t.Errorf("container %s runs image %s; want a version tag", c.Name, c.Image)
		}
		if c.ImagePullPolicy != v1.PullIfNotPresent {
			t.Errorf("container %s: imagePullPolicy %q, want IfNotPresent", c.Name, c.ImagePullPolicy)
		}
		// Requests to be placed by, a memory limit to be contained by.
		r := c.Resources
		if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() || r.Limits.Memory().Cmp(*r.Requests.Memory()) < 0 {
			t.Errorf("container %s: requests cpu %s, memory %s, memory limit %s; want requests and a limit above them",
				c.Name, r.Requests.Cpu(), r.Requests.Memory(), r.Limits.Memory())
		}
	}

	// The extender's bodies in flight, at the most heap per byte its
	// handler holds (about 9, BenchmarkFilterMemory in extender/server),
	// fit under GOMEMLIMIT, and GOMEMLIMIT under the container's limit.
	const heapPerBodyByte = 9
	var goMemLimit string
	for _, env := range ext.Env {
		if env.Name == "GOMEMLIMIT" {
			goMemLimit = env.Value
		}
	}
	memLimit, err := resource.ParseQuantity(strings.TrimSuffix(goMemLimit, "B"))
	if err != nil {
		t.Fatalf("GOMEMLIMIT %q: %v", goMemLimit, err)
	}
	request, inFlight := quantityFlag(t, ext, "-max-request-bytes"), quantityFlag(t, ext, "-max-inflight-bytes")
	if inFlight < request || heapPerBodyByte*inFlight > memLimit.Value() || memLimit.Cmp(*ext.Resources.Limits.Memory()) >= 0 {
		t.Errorf("-max-request-bytes %d, -max-inflight-bytes %d (x%d), GOMEMLIMIT %s, memory limit %s: want them in this order",
			request, inFlight, heapPerBodyByte, goMemLimit, ext.Resources.Limits.Memory())
	}
}

// flagValue returns the value of the container's argument -name=value.
func flagValue(c v1.Container, name string) string {
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func quantityFlag(t *testing.T, c v1.Container, name string) int64 {
	t.Helper()
	q, err := resource.ParseQuantity(flagValue(c, name))
	if err != nil {
		t.Fatalf("container %s: %s: %v", c.Name, name, err)
	}
	return q.Value()
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func containerPort(t *testing.T, c v1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port %q", c.Name, name)
	return 0
}

func TestDockerfilesBuildWhatExists(t *testing.T) {
	t.Parallel()
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	for _, tc := range []struct{ dockerfile, program string }{
		{"controller/Dockerfile", "../examples/controller/main.go"},
		{"extender/Dockerfile", "../examples/extender/main.go"},
	} {
		data, err := os.ReadFile(tc.dockerfile)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tc.program); err != nil {
			t.Errorf("%s builds %s: %v", tc.dockerfile, filepath.Dir(tc.program), err)
		}
		if !bytes.Contains(data, []byte("FROM golang:"+string(goVersion[1])+" AS build")) {
			t.Errorf("%s does not build with Go %s, the go.mod's", tc.dockerfile, goVersion[1])
		}
		if !regexp.MustCompile(`(?m)^FROM gcr.io/distroless/static[^\n]*:nonroot$`).Match(data) || !bytes.Contains(data, []byte("CGO_ENABLED=0")) {
			t.Errorf("%s: want a static binary on distroless, as non-root", tc.dockerfile)
		}
	}
}
