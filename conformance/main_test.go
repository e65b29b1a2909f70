package conformance

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"

	"github.com/kubesched/kubesched/feature"
	"k8s.io/klog/v2"
)

// testOracle is shared by every test: building upstream's framework and
// syncing its informers is the expensive part, and Run is safe for
// concurrent use.
var testOracle *Oracle

// TestMain builds testOracle once for every test and closes it afterwards.
func TestMain(m *testing.M) {
	// Upstream's configuration defaulting logs through klog's global
	// logger ("Default plugin is explicitly re-configured").
	klog.SetLogger(logr.Discard())
	o, err := NewOracle()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the oracle:", err)
		os.Exit(1)
	}
	testOracle = o
	code := m.Run()
	o.Close()
	os.Exit(code)
}

// tested is the release this module links k8s.io/kubernetes at, whose
// decisions kubesched's are compared with.
var tested = mustRelease("1.37")

func mustRelease(version string) feature.Release {
	r, err := feature.ReleaseFor(version)
	if err != nil {
		panic(err)
	}
	return r
}
