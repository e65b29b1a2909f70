package loader_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubesched/kubesched/loader"
)

// generate returns a reader of what write writes, made as it is read, so
// that the input is never in memory whole. Closing the reader stops
// write.
func generate(write func(w io.Writer) error) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		err := write(bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// configMapData is the value of each generated ConfigMap's one key: 4 KiB,
// about what a real ConfigMap holds.
var configMapData = strings.Repeat("0123456789abcdef", 256)

// dumpFormat is one of the formats kubectl writes, for dumps of generated
// ConfigMaps and Nodes.
type dumpFormat struct {
	name                string
	begin, between, end string
	configMap, node     string // with %d for a number
}

var dumpFormats = []dumpFormat{
	{
		name:      "YAML documents",
		between:   "---\n",
		configMap: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: default\ndata:\n  key: " + configMapData + "\n",
		node:      "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-%d\nstatus:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n",
	},
	{
		name:      "a YAML List",
		begin:     "apiVersion: v1\nitems:\n",
		end:       "kind: List\nmetadata:\n  resourceVersion: \"\"\n",
		configMap: "- apiVersion: v1\n  data:\n    key: " + configMapData + "\n  kind: ConfigMap\n  metadata:\n    name: cm-%d\n    namespace: default\n",
		node:      "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-%d\n  status:\n    allocatable:\n      cpu: \"4\"\n      memory: 16Gi\n",
	},
	{
		name:      "a JSON List",
		begin:     "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n",
		between:   ",\n",
		end:       "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
		configMap: `        {"apiVersion": "v1", "data": {"key": "` + configMapData + `"}, "kind": "ConfigMap", "metadata": {"name": "cm-%d", "namespace": "default"}}`,
		node:      `        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d"}, "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}}}`,
	},
	{
		name:      "JSON objects",
		between:   "\n",
		configMap: `{"apiVersion": "v1", "data": {"key": "` + configMapData + `"}, "kind": "ConfigMap", "metadata": {"name": "cm-%d", "namespace": "default"}}`,
		node:      `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d"}, "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}}}`,
	},
}

// write writes configMaps ConfigMaps, with a Node after every nodeEvery.
func (f dumpFormat) write(w io.Writer, configMaps, nodeEvery int) error {
	io.WriteString(w, f.begin)
	for i := range configMaps {
		if i > 0 {
			io.WriteString(w, f.between)
		}
		fmt.Fprintf(w, f.configMap, i)
		if i%nodeEvery == nodeEvery-1 {
			io.WriteString(w, f.between)
			fmt.Fprintf(w, f.node, i/nodeEvery)
		}
	}
	_, err := io.WriteString(w, f.end)
	return err
}

// TestReadRetainsOnlyKeptObjects reads about 20 MiB of ConfigMaps (4 MiB
// under the race detector) and a few nodes in each format and checks that
// what stays in memory, while reading and after, is the nodes, not the
// input. It does not run in parallel: it measures the whole process's
// heap.
func TestReadRetainsOnlyKeptObjects(t *testing.T) {
	configMaps, nodeEvery := 5000, 1000 // 5000 × 4 KiB ≈ 20 MiB, 5 nodes
	if raceEnabled {
		configMaps, nodeEvery = 1000, 200
	}
	// The bound is far below the input, which is the point, with room
	// for what the collector counts live while it marks: everything
	// allocated during a mark counts as live, and on a busy machine a
	// mark lasts longer. Over the 20 MiB read without the race detector
	// that reached 3.4 MiB with another test run beside it.
	most := int64(max(2<<20, configMaps*len(configMapData)/4))
	for _, f := range dumpFormats {
		t.Run("The heap while and after reading "+f.name+" holds the nodes, not the input.", func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var peak atomic.Uint64 // the most heap live at a collection while reading
			r := generate(func(w io.Writer) error {
				return f.write(&sampler{w: w, peak: &peak}, configMaps, nodeEvery)
			})
			c, err := loader.Read(r, f.name)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if len(c.Nodes) != configMaps/nodeEvery || c.Skipped["/v1, Kind=ConfigMap"] != configMaps {
				t.Fatalf("%d nodes, skipped %v; want %d nodes, %d ConfigMaps", len(c.Nodes), c.Skipped, configMaps/nodeEvery, configMaps)
			}
			if retained := int64(after.HeapAlloc) - int64(before.HeapAlloc); retained > most/2 {
				t.Errorf("%d bytes retained after reading; want at most %d", retained, most/2)
			}
			if live := int64(peak.Load()) - int64(before.HeapAlloc); live > most {
				t.Errorf("%d bytes live while reading; want at most %d", live, most)
			}
			runtime.KeepAlive(c)
		})
	}
}

// sampler records in peak the most heap live at a garbage collection,
// every 256 KiB written to w.
type sampler struct {
	w       io.Writer
	written int
	peak    *atomic.Uint64
}

func (s *sampler) Write(p []byte) (int, error) {
	if s.written += len(p); s.written >= 256<<10 {
		s.written = 0
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		if v := live[0].Value.Uint64(); v > s.peak.Load() {
			s.peak.Store(v)
		}
	}
	return s.w.Write(p)
}

// TestReadLimitsDocuments checks that an object larger than
// MaxDocumentSize is an error naming it.
func TestReadLimitsDocuments(t *testing.T) {
	t.Parallel()
	// over is a string value that takes a document over the limit.
	over := func(prefix, suffix string) io.Reader {
		return io.MultiReader(strings.NewReader(prefix), &filler{n: loader.MaxDocumentSize}, strings.NewReader(suffix))
	}
	for _, tc := range []struct {
		name    string
		input   io.Reader
		wantErr string
		// slow cases are skipped under the race detector, which scans
		// JSON at 10 MB/s.
		slow bool
	}{
		{
			name:    "A YAML document larger than the limit is an error naming it.",
			input:   over("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  key: ", "\n"),
			wantErr: "big: document 2: larger than MaxDocumentSize (64 MiB)",
		},
		{
			name:    "An item of a YAML List larger than the limit is an error naming it.",
			input:   over("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n    key: ", "\n"),
			wantErr: "big: document 1: item 2: larger than MaxDocumentSize (64 MiB)",
		},
		{
			name:    "A JSON object larger than the limit is an error naming it.",
			input:   over(`{"apiVersion": "v1", "kind": "ConfigMap"} {"apiVersion": "v1", "kind": "ConfigMap", "data": {"key": "`, `"}}`),
			wantErr: "big: document 2: larger than MaxDocumentSize (64 MiB)",
			slow:    true,
		},
		{
			name:    "An item of a JSON List larger than the limit is an error naming it.",
			input:   over(`{"apiVersion": "v1", "kind": "ConfigMap"} {"apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "ConfigMap"}, {"apiVersion": "v1", "kind": "ConfigMap", "data": {"key": "`, `"}}], "kind": "List"}`),
			wantErr: "big: document 2: item 2: larger than MaxDocumentSize (64 MiB)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && raceEnabled {
				t.Skip("scans 64 MiB of JSON, slowly under the race detector")
			}
			t.Parallel()
			c, err := loader.Read(tc.input, "big")
			if err == nil || err.Error() != tc.wantErr || c != nil {
				t.Errorf("Read: %v, %v; want the error %q", c, err, tc.wantErr)
			}
		})
	}
}

// filler reads n bytes "x".
type filler struct{ n int }

var xs = bytes.Repeat([]byte("x"), 64<<10)

func (f *filler) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), f.n)], xs)
	f.n -= n
	return n, nil
}

// TestReadListsLargerThanTheLimit reads a List larger than
// MaxDocumentSize, made of small items.
func TestReadListsLargerThanTheLimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("reads 68 MiB, slowly under the race detector")
	}
	t.Parallel()
	const configMaps = 17000 // 17000 × 4 KiB ≈ 68 MiB
	for _, f := range dumpFormats[1:3] {
		t.Run("A List larger than the limit is read: "+f.name+".", func(t *testing.T) {
			t.Parallel()
			r := generate(func(w io.Writer) error { return f.write(w, configMaps, configMaps) })
			defer r.Close()
			c, err := loader.Read(r, f.name)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Nodes) != 1 || c.Skipped["/v1, Kind=ConfigMap"] != configMaps {
				t.Errorf("%d nodes, skipped %v; want 1 node, %d ConfigMaps", len(c.Nodes), c.Skipped, configMaps)
			}
		})
	}
}
