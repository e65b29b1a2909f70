package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kubeletNode is a node as a kubelet reports it and kube-scheduler
// sends it to an extender that is not nodeCacheCapable (managedFields
// trimmed): about 5 KB of JSON, most of it the image list.
func kubeletNode(i int) v1.Node {
	name := fmt.Sprintf("node-%05d", i)
	q := resource.MustParse
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	n := v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(fmt.Sprintf("5f0c7a52-4b7e-4d0e-9d3c-%012d", i)), ResourceVersion: "123456789",
			CreationTimestamp: now,
			Labels: map[string]string{
				"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", v1.LabelHostname: name,
				v1.LabelInstanceTypeStable: "m5.2xlarge", v1.LabelTopologyZone: "eu-west-1a", v1.LabelTopologyRegion: "eu-west-1",
				"node.kubernetes.io/lifecycle": "normal", "zone": "a",
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				"csi.volume.kubernetes.io/nodeid":                        `{"ebs.csi.aws.com":"i-0123456789abcdef0"}`,
			},
		},
		Spec: v1.NodeSpec{PodCIDR: "10.1.2.0/24", PodCIDRs: []string{"10.1.2.0/24"}, ProviderID: "aws:///eu-west-1a/i-0123456789abcdef0"},
		Status: v1.NodeStatus{
			Capacity: v1.ResourceList{v1.ResourceCPU: q("8"), v1.ResourceMemory: q("32408128Ki"), v1.ResourcePods: q("110"),
				v1.ResourceEphemeralStorage: q("104845292Ki"), "hugepages-1Gi": q("0"), "hugepages-2Mi": q("0")},
			Allocatable: v1.ResourceList{v1.ResourceCPU: q("7910m"), v1.ResourceMemory: q("31391296Ki"), v1.ResourcePods: q("110"),
				v1.ResourceEphemeralStorage: q("95551679124"), "hugepages-1Gi": q("0"), "hugepages-2Mi": q("0")},
			Addresses:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.1.2"}, {Type: v1.NodeHostName, Address: name}},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}},
			NodeInfo: v1.NodeSystemInfo{MachineID: "ec2b3c4d5e6f", SystemUUID: "ec2b3c4d-5e6f", BootID: "0d1e2f3a-4b5c",
				KernelVersion: "6.1.0-13-cloud-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", ContainerRuntimeVersion: "containerd://2.1.0",
				KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
	for _, c := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady} {
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: c, Status: v1.ConditionFalse,
			LastHeartbeatTime: now, LastTransitionTime: now, Reason: "Kubelet" + string(c), Message: "kubelet reports " + string(c)})
	}
	for j := range 20 {
		img := fmt.Sprintf("registry.example.com/team-%d/service-%d", j%5, j)
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{
			Names:     []string{img + "@sha256:" + fmt.Sprintf("%064x", j), img + ":v1." + fmt.Sprint(j)},
			SizeBytes: int64(100_000_000 + j),
		})
	}
	return n
}

// smallNode is a node with a name and a label, as json.Marshal writes it
// (with the Node's fields that have no omitempty).
func smallNode(i int) []byte {
	b, err := json.Marshal(v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{"zone": "a"}}})
	if err != nil {
		panic(err)
	}
	return b
}

// tinyNode is a node with a name and a label and nothing else: denser in
// nodes than a scheduler's body can be, refused.
func tinyNode(i int) []byte {
	return fmt.Appendf(nil, `{"metadata":{"name":"n%d","labels":{"zone":"a"}}}`, i)
}

// densestNode is tinyNode padded with spaces to the fewest bytes a node
// may take: the body that costs the most memory per byte among those
// served.
func densestNode(i int) []byte {
	b := tinyNode(i)
	return append(b, bytes.Repeat([]byte(" "), max(0, 256-len(b)))...)
}

func kubeletNodeJSON(i int) []byte {
	b, err := json.Marshal(kubeletNode(i))
	if err != nil {
		panic(err)
	}
	return b
}

// filterBody is a filter call with whole nodes written by node, of
// about size bytes.
func filterBody(node func(int) []byte, size int) []byte {
	b := []byte(`{"Pod":{"metadata":{"name":"p","namespace":"default"}},"Nodes":{"items":[`)
	for i := 0; len(b) < size-100; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, node(i)...)
	}
	return append(b, "]}}"...)
}

// discardWriter is a ResponseWriter that keeps nothing of the answer but
// its status, so that measurements count the handler's memory only.
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func (d *discardWriter) Header() http.Header {
	if d.header == nil {
		d.header = http.Header{}
	}
	return d.header
}
func (d *discardWriter) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discardWriter) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += len(p)
	return len(p), nil
}

// heapPeak samples the heap's objects (live and not yet collected, which
// is what the process's memory follows) while it runs fn, and returns the
// highest value above the heap before fn.
func heapPeak(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// BenchmarkFilterMemory serves filter calls with whole nodes, every node
// kept (the largest answer): nodes as kubelets report them, as
// json.Marshal writes a node with only a name and a label, the same
// padded to the least the handler accepts, and denser (refused). It
// reports the heap's peak above its level before the call per byte of
// body, which is what the process's memory follows.
func BenchmarkFilterMemory(b *testing.B) {
	for _, shape := range []struct {
		name string
		node func(int) []byte
		code int
	}{
		{"kubelet", kubeletNodeJSON, http.StatusOK},
		{"small", smallNode, http.StatusOK},
		{"densest", densestNode, http.StatusOK},
		{"tiny", tinyNode, http.StatusBadRequest},
	} {
		for _, mb := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("%s/%dMB", shape.name, mb), func(b *testing.B) {
				body := filterBody(shape.node, mb<<20)
				h := newHandler(b)
				w := &discardWriter{}
				h.ServeHTTP(w, post("/filter", bytes.NewReader(body)))
				if w.code != shape.code {
					b.Fatalf("code %d, want %d", w.code, shape.code)
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				b.ResetTimer()
				var peak uint64
				for b.Loop() {
					w := &discardWriter{}
					peak = max(peak, heapPeak(func() { h.ServeHTTP(w, post("/filter", bytes.NewReader(body))) }))
				}
				b.ReportMetric(float64(peak)/float64(len(body)), "peak-heap-B/body-B")
			})
		}
	}
}
