package conformance

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/feature"
)

// testOracle is the linked release's oracle, shared by every test:
// building upstream's framework and syncing its informers is the
// expensive part, and Run is safe for concurrent use.
var testOracle *Oracle

// upstream is the kube-scheduler release the differential tests compare
// kubesched with: the linked one by default, or, when
// KUBESCHED_CONFORMANCE_RELEASE names another, that release running out
// of process (see [RemoteOracle]).
var upstream releaseOracle

// tested is that release, and ours kubesched's reproduction of it, whose
// decisions are compared with upstream's.
var (
	tested feature.Release
	ours   *kubesched.Release
)

// releaseOracle is what the differential tests ask a kube-scheduler
// release.
type releaseOracle interface {
	RunScenario(ctx context.Context, s *Scenario) (*OracleResult, error)
	RunPreemption(ctx context.Context, s *Scenario) (*PreemptionResult, error)
	RunNominated(ctx context.Context, s *Scenario, nominated []Nomination) (*OracleResult, error)
	Gates(names ...string) (map[string]bool, error)
	JudgeConfig(data []byte) (*ConfigVerdict, error)
	LayOutProfiles(data []byte) ([]ProfileLayout, error)
	RunConfigured(ctx context.Context, data []byte, s *Scenario) (*OracleResult, error)
}

// TestMain builds the oracles once for every test and closes them
// afterwards.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Upstream's configuration defaulting logs through klog's global
	// logger ("Default plugin is explicitly re-configured").
	klog.SetLogger(logr.Discard())
	version := os.Getenv("KUBESCHED_CONFORMANCE_RELEASE")
	if version == "" {
		version = linkedRelease
	}
	var err error
	if ours, err = kubesched.ReleaseFor(version); err != nil {
		fmt.Fprintln(os.Stderr, "KUBESCHED_CONFORMANCE_RELEASE:", err)
		return 2
	}
	tested = mustRelease(version)
	// A release without DRADeviceTaintRules reads no DeviceTaintRules, and
	// v1.36.3's API types cannot even decode them.
	generateTaintRules = tested.Features.DRADeviceTaintRules
	o, err := NewOracle()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the oracle:", err)
		return 1
	}
	defer o.Close()
	testOracle = o
	if tested.Version == mustRelease(linkedRelease).Version {
		linked := &linkedOracles{Oracle: o}
		defer linked.configured.Close()
		upstream = linked
		return m.Run()
	}
	remote, err := startReleaseOracle(tested)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remote.Close()
	fmt.Printf("comparing with kube-scheduler %s out of process\n", tested.Version)
	upstream = remote
	return m.Run()
}

// startReleaseOracle builds cmd/oracle against r and starts it.
func startReleaseOracle(r feature.Release) (*RemoteOracle, error) {
	bin, cleanup, err := BuildReleaseOracle(".", r.Version)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	remote, err := StartRemoteOracle(bin)
	if err != nil {
		return nil, err
	}
	if got := remote.Release(); !strings.HasPrefix(r.Version, "v"+got+".") {
		remote.Close()
		return nil, fmt.Errorf("the oracle built for kube-scheduler %s links %s", r.Version, got)
	}
	return remote, nil
}

// linkedOracles are the linked release's oracles; the preemption and
// nominated ones are built when first asked.
type linkedOracles struct {
	*Oracle
	configured ConfiguredOracle
}

func (l *linkedOracles) RunPreemption(ctx context.Context, s *Scenario) (*PreemptionResult, error) {
	p, err := preemptionOracle()
	if err != nil {
		return nil, fmt.Errorf("building the preemption oracle: %w", err)
	}
	return p.RunScenario(ctx, s)
}

func (l *linkedOracles) RunNominated(ctx context.Context, s *Scenario, nominated []Nomination) (*OracleResult, error) {
	n, err := nominatedOracle()
	if err != nil {
		return nil, fmt.Errorf("building the nominated oracle: %w", err)
	}
	return n.RunScenario(ctx, s, nominated)
}

func (l *linkedOracles) Gates(names ...string) (map[string]bool, error) {
	return GateStates(names...)
}

func (l *linkedOracles) JudgeConfig(data []byte) (*ConfigVerdict, error) {
	return JudgeConfig(data)
}

func (l *linkedOracles) LayOutProfiles(data []byte) ([]ProfileLayout, error) {
	return LayOutProfiles(data)
}

func (l *linkedOracles) RunConfigured(ctx context.Context, data []byte, s *Scenario) (*OracleResult, error) {
	return l.configured.RunScenario(ctx, data, s)
}

// linkedOnly skips a test that needs the linked release in process when
// another release is under test.
func linkedOnly(t *testing.T) {
	t.Helper()
	if _, ok := upstream.(*linkedOracles); !ok {
		t.Skipf("needs kube-scheduler in process; %s runs out of process and answers scenarios only", tested.Version)
	}
}

func mustRelease(version string) feature.Release {
	r, err := feature.ReleaseFor(version)
	if err != nil {
		panic(err)
	}
	return r
}

// TestTheReleaseComparedIsTheOneAsked checks that the release TestMain
// chose is the one KUBESCHED_CONFORMANCE_RELEASE names. Reading the
// variable during a test also makes it part of go test's cache key, so
// that a run for one release never replays another's cached result.
func TestTheReleaseComparedIsTheOneAsked(t *testing.T) {
	version := os.Getenv("KUBESCHED_CONFORMANCE_RELEASE")
	if version == "" {
		version = linkedRelease
	}
	want, err := kubesched.ReleaseFor(version)
	if err != nil {
		t.Fatal(err)
	}
	if ours.Version() != want.Version() || tested.Version != want.Version() {
		t.Errorf("comparing %s (kubesched's %s), want %s", tested.Version, ours.Version(), want.Version())
	}
}
