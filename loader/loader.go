package loader

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MaxDocumentSize is the largest object Read accepts, in bytes: one YAML
// document or top-level JSON value, or one item of a List. A List's items
// are read one at a time, so a dump of a whole cluster in one List may be
// far larger. The limit bounds the memory one malformed or hostile object
// can take (decoding takes several times its size).
const MaxDocumentSize = 64 << 20

// Cluster is the cluster state read from dumps.
type Cluster struct {
	// Nodes are the Nodes (v1), in input order.
	Nodes []*v1.Node
	// Pods are the Pods (v1), bound (spec.nodeName set) and pending
	// alike, in input order.
	Pods []*v1.Pod
	// Objects are the other kinds kubesched's plugins read, as typed
	// pointers, in input order: exactly the kinds
	// fwk.NewListers accepts (see the package documentation).
	Objects []runtime.Object
	// Workloads are the controllers of pods that no plugin reads, as
	// typed pointers, in input order: Deployments and DaemonSets
	// (apps/v1), Jobs (batch/v1), and the ResourceClaimTemplates
	// (resource.k8s.io/v1) pods' claims name. [Cluster.ExpandWorkloads]
	// makes the pods they would have, with the ReplicaSets, StatefulSets
	// and ReplicationControllers of Objects, and their claims.
	Workloads []runtime.Object
	// Skipped counts the objects of kinds kubesched does not read, by
	// "group/version, Kind=K" as schema.GroupVersionKind.String() prints
	// it: "batch/v1, Kind=CronJob", or "/v1, Kind=Event" for the core
	// group.
	Skipped map[string]int

	// places are where Read found each object it kept, for the errors
	// of Check.
	places []placed
}

// Read reads the objects in r: YAML documents, JSON objects one after
// another, or Lists of objects in either, as kubectl get -o yaml or -o
// json writes them (see the package documentation), in UTF-8, with or
// without a byte order mark. name names the input in errors, e.g. a file
// name or "stdin".
//
// Objects of older versions of kinds kept are converted, and what the
// API server's validation refuses in the resources kube-scheduler reads
// (a negative request, say) is an error; see the package documentation.
// The cluster remembers where each object was read, for [Cluster.Check].
//
// The error names the input, the document (numbered from 1, not counting
// empty ones) and, within a List, the item (from 1) and what can be read
// of its kind, namespace and name:
//
//	dump.yaml: document 1: item 7 (Pod default/web): ...
//
// On error, Read returns no cluster. The returned cluster's Skipped is
// never nil. Read may be called concurrently, on different readers.
func Read(r io.Reader, name string) (*Cluster, error) {
	c := &Cluster{Skipped: map[string]int{}}
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := firstByte(br)
	switch {
	case err != nil:
	case first == '{' || first == '[':
		err = readJSON(br, c)
	default:
		err = readYAML(br, c)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range c.places {
		c.places[i].input = name
	}
	return c, nil
}

// firstByte returns the first byte of r that is not white space, or 0 for
// none, having skipped a byte order mark and the blank lines before it.
// It leaves the line the byte is on, for a YAML document's indentation.
func firstByte(r *bufio.Reader) (byte, error) {
	bom, _ := r.Peek(3)
	switch {
	case string(bom) == "\xef\xbb\xbf":
		r.Discard(3)
	case len(bom) >= 2 && (bom[0] == 0xff && bom[1] == 0xfe || bom[0] == 0xfe && bom[1] == 0xff):
		return 0, errors.New("UTF-16, as Windows PowerShell 5 writes with >; want UTF-8 (kubectl ... | Out-File -Encoding utf8)")
	}
	for {
		buf, err := r.Peek(r.Size())
		lineStart := 0
		for i, b := range buf {
			switch b {
			case '\n':
				lineStart = i + 1
			case ' ', '\t', '\r':
			default:
				r.Discard(lineStart)
				return b, nil
			}
		}
		switch {
		case err == io.EOF:
			return 0, nil
		case err != nil:
			return 0, err
		case lineStart == 0:
			return ' ', nil // a blank line longer than the buffer: YAML's to read
		}
		r.Discard(lineStart)
	}
}

// Load reads the files at paths, in order, with [Read] and returns their
// objects merged. A path may be a file, of any name; a directory, whose
// .yaml, .yml and .json files directly inside are read in order of name
// (subdirectories are not, as with kubectl -f DIR without -R); or "-",
// standard input. No paths is an empty cluster. Errors name the file, as
// Read's do; on error, Load returns no cluster.
func Load(paths ...string) (*Cluster, error) {
	c := &Cluster{Skipped: map[string]int{}}
	for _, path := range paths {
		files, err := inputFiles(path)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			part, err := loadFile(file)
			if err != nil {
				return nil, err
			}
			c.Merge(part)
		}
	}
	return c, nil
}

// inputExtensions are the names of the files Load reads in a directory:
// kubectl's.
var inputExtensions = []string{".json", ".yaml", ".yml"}

// inputFiles returns path, or for a directory the files in it to read.
func inputFiles(path string) ([]string, error) {
	if path == "-" {
		return []string{path}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && slices.Contains(inputExtensions, filepath.Ext(e.Name())) {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	return files, nil
}

func loadFile(path string) (*Cluster, error) {
	if path == "-" {
		return Read(os.Stdin, "stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Merge appends other's nodes, pods, objects and workloads to c's, and
// where Read read them, and adds its skipped counts to c's. A nil other
// changes nothing. The objects are shared, not copied. Merge does not
// look for objects both have: [Cluster.Check] does.
func (c *Cluster) Merge(other *Cluster) {
	if other == nil {
		return
	}
	c.Nodes = append(c.Nodes, other.Nodes...)
	c.Pods = append(c.Pods, other.Pods...)
	c.Objects = append(c.Objects, other.Objects...)
	c.Workloads = append(c.Workloads, other.Workloads...)
	c.places = append(c.places, other.places...)
	for kind, n := range other.Skipped {
		if c.Skipped == nil {
			c.Skipped = map[string]int{}
		}
		c.Skipped[kind] += n
	}
}

// Bound returns the pods bound to a node (spec.nodeName set) that still
// hold their node's resources: all but those in phase Succeeded or
// Failed. These are the pods to build nodes' NodeInfos with. The pods are
// c.Pods', not copies.
func (c *Cluster) Bound() []*v1.Pod {
	var pods []*v1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" && !terminated(p) {
			pods = append(pods, p)
		}
	}
	return pods
}

// Pending returns the pods waiting to be scheduled: those without
// spec.nodeName, except those in phase Succeeded or Failed. Pods are
// returned whatever scheduler they name, and also when kube-scheduler
// would not try them (scheduling gates, being deleted): the framework
// says so for each with a *framework.NotTriedError. The pods are
// c.Pods', not copies.
func (c *Cluster) Pending() []*v1.Pod {
	var pods []*v1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" && !terminated(p) {
			pods = append(pods, p)
		}
	}
	return pods
}

func terminated(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// Pod returns the first pod of that namespace and name, in input order,
// and whether there is one. It looks through all of c.Pods.
func (c *Cluster) Pod(namespace, name string) (*v1.Pod, bool) {
	for _, p := range c.Pods {
		if p.Namespace == namespace && p.Name == name {
			return p, true
		}
	}
	return nil, false
}
