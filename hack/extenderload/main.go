// Command extenderload measures a scheduler extender program under the
// loads a kube-scheduler can put on it: its peak resident memory serving
// one filter call of 60 MB and four concurrent calls of 15 MB, and the
// latency of 300 concurrent calls of 50 KB. Bodies are filter calls with
// whole nodes, as kube-scheduler sends them to an extender that is not
// nodeCacheCapable: with -nodes kubelet (the default) as kubelets report
// them, about 6 KB each; with -nodes small as json.Marshal writes a node
// with only a name and a label, about 360 bytes, the densest in nodes a
// scheduler sends.
//
//	go build -o /tmp/extender ./examples/extender
//	go run ./hack/extenderload -extender /tmp/extender
//	go run ./hack/extenderload -extender /tmp/extender -nodes small
//
// Each load runs against a fresh process of the program, started with
// -addr on a loopback port and nothing else, so that programs of other
// versions can be compared; peak memory is the process's VmHWM (Linux
// only).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("extender", "", "the extender program to measure; it must serve /filter and take -addr")
	nodes := flag.String("nodes", "kubelet", "the nodes in the bodies: kubelet or small")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "extenderload: -extender is required")
		os.Exit(2)
	}
	switch *nodes {
	case "kubelet":
		nodeJSON = kubeletNode
	case "small":
		nodeJSON = smallNode
	default:
		fmt.Fprintf(os.Stderr, "extenderload: -nodes %q: want kubelet or small\n", *nodes)
		os.Exit(2)
	}
	fmt.Println("load\tcalls\tanswers\tpeak RSS\tp50\tp99\tmax")
	for _, l := range loads {
		r, err := run(*bin, l)
		if err != nil {
			fmt.Fprintf(os.Stderr, "extenderload: %s: %v\n", l.name, err)
			os.Exit(1)
		}
		fmt.Printf("%s\t%d\t%s\t%d MB\t%s\t%s\t%s\n", l.name, l.calls, r.answers(), r.peakRSS>>20,
			r.percentile(50), r.percentile(99), r.percentile(100))
	}
}

// load is concurrent calls, each a filter call of about size bytes.
type load struct {
	name  string
	calls int
	size  int
}

var loads = []load{
	{"1x60MB", 1, 60 << 20},
	{"4x15MB", 4, 15 << 20},
	{"300x50KB", 300, 50 << 10},
}

// result is what one load measured.
type result struct {
	codes     map[string]int // status code, or the client's error
	latencies []time.Duration
	peakRSS   int64
}

func (r *result) answers() string {
	keys := make([]string, 0, len(r.codes))
	for k := range r.codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d×%s", r.codes[k], k)
	}
	return b.String()
}

// percentile returns the p-th percentile of the calls' latencies, by the
// nearest rank.
func (r *result) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	k := max(0, (p*len(s)+99)/100-1)
	return s[min(k, len(s)-1)].Round(time.Millisecond)
}

func run(bin string, l load) (*result, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-addr", addr)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	if err := waitListening(addr); err != nil {
		return nil, err
	}
	body := filterBody(l.size)
	r := &result{codes: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: l.calls, MaxConnsPerHost: l.calls}}
	for range l.calls {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			resp, err := client.Post("http://"+addr+"/filter", "application/json", bytes.NewReader(body))
			code := ""
			if err != nil {
				code = "error"
			} else {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = strconv.Itoa(resp.StatusCode)
				if err != nil {
					code += "(cut)"
				}
			}
			d := time.Since(t0)
			mu.Lock()
			r.codes[code]++
			r.latencies = append(r.latencies, d)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	r.peakRSS, err = peakRSS(cmd.Process.Pid)
	return r, err
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitListening(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the extender did not listen on " + addr + " within 30s")
}

// peakRSS reads the process's peak resident set size, in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// nodeJSON writes the i-th node of a body.
var nodeJSON func(i int) []byte

// filterBody is a filter call of about size bytes of nodeJSON's nodes.
func filterBody(size int) []byte {
	b := []byte(`{"Pod":{"metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"app"}]}},"Nodes":{"items":[`)
	for i := 0; len(b) < size-100; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, nodeJSON(i)...)
	}
	return append(b, "]}}"...)
}

// smallNode is the JSON of a node with a name and the extender's label,
// with the fields json.Marshal writes for a v1.Node without omitempty.
func smallNode(i int) []byte {
	return fmt.Appendf(nil, `{"metadata":{"name":"n%d","creationTimestamp":null,"labels":{"priority.lixueduan.com":"%d"}},"spec":{},`+
		`"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"",`+
		`"kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}}`, i, i%11)
}

// kubeletNode is the JSON of a node as a kubelet reports it: labels,
// capacity, conditions and 20 images.
func kubeletNode(i int) []byte {
	name := fmt.Sprintf("node-%05d", i)
	const stamp = "2026-01-02T03:04:05Z"
	resources := map[string]string{"cpu": "8", "memory": "32408128Ki", "pods": "110", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
	var conditions []map[string]string
	for _, c := range []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} {
		conditions = append(conditions, map[string]string{"type": c, "status": "False", "lastHeartbeatTime": stamp,
			"lastTransitionTime": stamp, "reason": "Kubelet" + c, "message": "kubelet reports " + c})
	}
	var images []map[string]any
	for j := range 20 {
		img := fmt.Sprintf("registry.example.com/team-%d/service-%d", j%5, j)
		images = append(images, map[string]any{"names": []string{fmt.Sprintf("%s@sha256:%064x", img, j), fmt.Sprintf("%s:v1.%d", img, j)}, "sizeBytes": 100_000_000 + j})
	}
	node := map[string]any{
		"metadata": map[string]any{
			"name": name, "uid": fmt.Sprintf("5f0c7a52-4b7e-4d0e-9d3c-%012d", i), "resourceVersion": "123456789", "creationTimestamp": stamp,
			"labels": map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
				"node.kubernetes.io/instance-type": "m5.2xlarge", "topology.kubernetes.io/zone": "eu-west-1a",
				"topology.kubernetes.io/region": "eu-west-1", "priority.lixueduan.com": strconv.Itoa(i % 11)},
			"annotations": map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
		},
		"spec": map[string]any{"podCIDR": "10.1.2.0/24", "podCIDRs": []string{"10.1.2.0/24"}, "providerID": "aws:///eu-west-1a/i-0123456789abcdef0"},
		"status": map[string]any{
			"capacity": resources, "allocatable": resources, "conditions": conditions, "images": images,
			"addresses": []map[string]string{{"type": "InternalIP", "address": "10.0.1.2"}, {"type": "Hostname", "address": name}},
			"nodeInfo": map[string]string{"machineID": "ec2b3c4d5e6f", "kernelVersion": "6.1.0-13-cloud-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)",
				"containerRuntimeVersion": "containerd://2.1.0", "kubeletVersion": "v1.37.2", "operatingSystem": "linux", "architecture": "amd64"},
		},
	}
	b, err := json.Marshal(node)
	if err != nil {
		panic(err)
	}
	return b
}
