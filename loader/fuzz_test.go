package loader_test

import (
	"bytes"
	"os"
	"reflect"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/loader"
)

// FuzzRead reads arbitrary input: a cluster of objects, none nil, or an
// error, never a panic or both; and the same read one byte at a time.
func FuzzRead(f *testing.F) {
	for _, file := range []string{"testdata/kubectl-get.yaml", "testdata/kubectl-get.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range readCases {
		f.Add([]byte(tc.input))
	}
	for _, tc := range errorCases {
		f.Add([]byte(tc.input))
	}
	for _, d := range dumpFormats {
		var b bytes.Buffer
		if err := d.write(&b, 3, 2); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := loader.Read(bytes.NewReader(data), "fuzz")
		switch {
		case err != nil && c != nil:
			t.Fatalf("a cluster and an error: %v", err)
		case err != nil:
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
		default:
			check(t, c)
		}
		c2, err2 := loader.Read(iotest.OneByteReader(bytes.NewReader(data)), "fuzz")
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() || !reflect.DeepEqual(c, c2) {
			t.Fatalf("read at once: %v; one byte at a time: %v", err, err2)
		}
	})
}

// check checks that what c holds is objects, without managed fields, and
// counts of skipped objects.
func check(t *testing.T, c *loader.Cluster) {
	t.Helper()
	if c.Skipped == nil {
		t.Fatal("Skipped is nil")
	}
	for kind, n := range c.Skipped {
		if n <= 0 || kind == "" {
			t.Fatalf("skipped %q %d times", kind, n)
		}
	}
	var objs []metav1.Object
	for _, n := range c.Nodes {
		objs = append(objs, n)
	}
	for _, p := range c.Pods {
		objs = append(objs, p)
	}
	for _, o := range c.Objects {
		m, _ := o.(metav1.Object)
		objs = append(objs, m)
	}
	for i, o := range objs {
		if reflect.ValueOf(o).IsNil() {
			t.Fatalf("object %d is nil", i)
		}
		if o.GetManagedFields() != nil {
			t.Fatalf("object %d has managed fields", i)
		}
	}
	c.Bound()
	c.Pending()
}
