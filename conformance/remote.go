package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
)

// A release of k8s.io/kubernetes needs the k8s.io libraries of its own
// minor version, and kubesched links the newest ones, so an older
// kube-scheduler cannot be linked beside kubesched. It runs in a process
// of its own instead: cmd/oracle, built from this package against that
// release (the kubernetes_1_36 build tag and kubernetes-1.36.mod), answers
// [Serve]'s requests, and a [RemoteOracle] in the test process asks them.
// Scenarios and verdicts cross the pipe as JSON, one request or
// response per line.

// request is one line [Serve] reads.
type request struct {
	// Kind is what to run: "release", "gates", "config", "layout",
	// "configured", "scenario", "preemption", "nominated", the timings'
	// "time-setup", "time" and "time-clear", or the simulations'
	// "sim-setup", "sim-evaluate", "sim-bind", "sim-place", "sim-undo" and
	// "sim-round".
	Kind string `json:"kind"`
	// Scenario is the scenario to run.
	Scenario *wireScenario `json:"scenario,omitempty"`
	// Nominated are the nominations a "nominated" run sees.
	Nominated []wireNomination `json:"nominated,omitempty"`
	// Gates are the feature gates a "gates" request asks about.
	Gates []string `json:"gates,omitempty"`
	// Config is the configuration file a "config", "layout" or
	// "configured" request reads; nil for a "layout" of the default
	// profile.
	Config []byte `json:"config,omitempty"`
	// Percentage and Preempt are a "time-setup" request's Upstream
	// setting and whether its pod is to preempt; Duration is a "time"
	// request's round.
	Percentage *int32        `json:"percentage,omitempty"`
	Preempt    bool          `json:"preempt,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	// FirstFit and Pending are a "sim-setup" request's way of placing
	// pods and the pods each round places; Pod and Node are the pod a
	// "sim-evaluate", "sim-bind" or "sim-place" request is about and the
	// node "sim-bind" binds it to.
	FirstFit bool      `json:"firstFit,omitempty"`
	Pending  []*v1.Pod `json:"pending,omitempty"`
	Pod      *v1.Pod   `json:"pod,omitempty"`
	Node     string    `json:"node,omitempty"`
}

// response is one line [Serve] writes: Result's JSON, or Error.
type response struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// wireScenario is a [Scenario] as JSON. Objects carry their apiVersion and
// kind, and keep their order.
type wireScenario struct {
	Seed    uint64            `json:"seed"`
	Nodes   []*v1.Node        `json:"nodes"`
	Pods    []*v1.Pod         `json:"pods"`
	Pod     *v1.Pod           `json:"pod"`
	Objects []json.RawMessage `json:"objects"`
}

type wireNomination struct {
	Pod  *v1.Pod `json:"pod"`
	Node string  `json:"node"`
}

func toWire(s *Scenario) (*wireScenario, error) {
	w := &wireScenario{Seed: s.Seed, Nodes: s.Nodes, Pods: s.Pods, Pod: s.Pod}
	for _, obj := range s.Objects {
		gvk, err := objectKind(obj)
		if err != nil {
			return nil, err
		}
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding a %s: %w", gvk.Kind, err)
		}
		w.Objects = append(w.Objects, data)
	}
	return w, nil
}

func (w *wireScenario) scenario() (*Scenario, error) {
	if w == nil {
		return nil, errors.New("the request has no scenario")
	}
	s := &Scenario{Seed: w.Seed, Nodes: w.Nodes, Pods: w.Pods, Pod: w.Pod}
	for i, data := range w.Objects {
		obj, err := decodeObject(data)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		s.Objects = append(s.Objects, obj)
	}
	return s, nil
}

// decodeObject decodes one of [objectKinds] from JSON that names its kind.
func decodeObject(data []byte) (runtime.Object, error) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, err
	}
	gvk := schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind)
	if !slices.Contains(objectKinds, gvk) {
		return nil, fmt.Errorf("unexpected kind %q (apiVersion %q)", meta.Kind, meta.APIVersion)
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("decoding a %s: %w", meta.Kind, err)
	}
	return obj, nil
}

// dropped lists the fields of the JSON value in that out, the same value
// decoded and encoded again, lacks, by path, but for those whose value
// is empty ({}, [], "", 0, false or null). The releases' API types
// differ: a field only the sender's release has cannot reach the
// oracle, which is harmless when it is empty (a struct the sender's
// types always write) and an error otherwise, as the oracle would then
// judge another scenario than the one sent.
func dropped(in, out any, path string) []string {
	var found []string
	switch in := in.(type) {
	case map[string]any:
		out, _ := out.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(in)) {
			v, ok := out[k]
			switch {
			case !ok && !emptyJSON(in[k]):
				found = append(found, path+"."+k)
			case ok:
				found = append(found, dropped(in[k], v, path+"."+k)...)
			}
		}
	case []any:
		out, _ := out.([]any)
		if len(out) != len(in) {
			return []string{path}
		}
		for i := range in {
			found = append(found, dropped(in[i], out[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return found
}

// emptyJSON reports whether v, decoded JSON, carries nothing.
func emptyJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range v {
			if !emptyJSON(e) {
				return false
			}
		}
		return true
	case []any:
		return len(v) == 0
	case string:
		return v == ""
	case float64:
		return v == 0
	case bool:
		return !v
	}
	return false
}

// lossless returns an error naming the fields of the request line that
// decoding it into req and s lost.
func lossless(line []byte, req *request, s *Scenario) error {
	again := *req
	if s != nil {
		w, err := toWire(s)
		if err != nil {
			return err
		}
		again.Scenario = w
	}
	data, err := json.Marshal(&again)
	if err != nil {
		return err
	}
	var in, out any
	if err := json.Unmarshal(line, &in); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return err
	}
	if lost := dropped(in, out, ""); len(lost) > 0 {
		return fmt.Errorf("kube-scheduler v%s's API types have no %s", linkedRelease, strings.Join(lost, ", "))
	}
	return nil
}

// Serve answers the requests read from in, one JSON line each, on out,
// until in ends. It builds each oracle the first time a request needs it
// and closes them all when it returns. A request that fails gets an
// error response; Serve itself fails only when in or out does.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	var srv server
	defer srv.close()
	lines := bufio.NewScanner(in)
	// Large scenarios are a few MiB of JSON.
	lines.Buffer(nil, 1<<30)
	enc := json.NewEncoder(out)
	for lines.Scan() {
		var resp response
		result, err := srv.answer(ctx, lines.Bytes())
		if err == nil {
			resp.Result, err = json.Marshal(result)
		}
		if err != nil {
			resp.Error = err.Error()
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	return lines.Err()
}

// GateStates reports whether each of the named feature gates is on in
// this process; a gate the linked release does not have is an error.
func GateStates(names ...string) (map[string]bool, error) {
	known := feature.DefaultMutableFeatureGate.GetAll()
	gates := map[string]bool{}
	for _, name := range names {
		if _, ok := known[featuregate.Feature(name)]; !ok {
			return nil, fmt.Errorf("kube-scheduler v%s has no feature gate %s", linkedRelease, name)
		}
		gates[name] = feature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	return gates, nil
}

// server holds the oracles [Serve] has built.
type server struct {
	oracle     *Oracle
	preemption *PreemptionOracle
	nominated  *NominatedOracle
	configured ConfiguredOracle
	timer      timer
}

func (s *server) answer(ctx context.Context, line []byte) (any, error) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	switch req.Kind {
	case "release":
		return linkedRelease, nil
	case "gates":
		return GateStates(req.Gates...)
	case "config":
		return JudgeConfig(req.Config)
	case "layout":
		return LayOutProfiles(req.Config)
	case "time":
		return s.timer.round(req.Duration)
	case "time-clear":
		return true, s.timer.clear(ctx)
	case "sim-evaluate", "sim-bind", "sim-place", "sim-undo", "sim-round":
		if err := lossless(line, &req, nil); err != nil {
			return nil, err
		}
		return s.timer.simStep(ctx, &req)
	}
	scenario, err := req.Scenario.scenario()
	if err != nil {
		return nil, err
	}
	if err := lossless(line, &req, scenario); err != nil {
		return nil, err
	}
	switch req.Kind {
	case "scenario":
		if s.oracle == nil {
			if s.oracle, err = NewOracle(); err != nil {
				return nil, err
			}
		}
		return s.oracle.RunScenario(ctx, scenario)
	case "preemption":
		if s.preemption == nil {
			if s.preemption, err = NewPreemptionOracle(); err != nil {
				return nil, err
			}
		}
		return s.preemption.RunScenario(ctx, scenario)
	case "configured":
		return s.configured.RunScenario(ctx, req.Config, scenario)
	case "time-setup":
		return s.timer.setup(ctx, req.Percentage, req.Preempt, scenario)
	case "sim-setup":
		return true, s.timer.simSetup(ctx, req.Percentage, req.FirstFit, scenario, req.Pending)
	case "nominated":
		if s.nominated == nil {
			if s.nominated, err = NewNominatedOracle(); err != nil {
				return nil, err
			}
		}
		nominated := make([]Nomination, len(req.Nominated))
		for i, n := range req.Nominated {
			nominated[i] = Nomination(n)
		}
		return s.nominated.RunScenario(ctx, scenario, nominated)
	}
	return nil, fmt.Errorf("unknown request kind %q", req.Kind)
}

func (s *server) close() {
	s.timer.close()
	s.configured.Close()
	if s.oracle != nil {
		s.oracle.Close()
	}
	if s.preemption != nil {
		s.preemption.Close()
	}
	if s.nominated != nil {
		s.nominated.Close()
	}
}

// BuildReleaseOracle builds cmd/oracle, from dir (the conformance
// module's directory), against kube-scheduler release version ("1.36" or
// "v1.36.3"): with the module file kubernetes-MAJOR.MINOR.mod and the
// kubernetes_MAJOR_MINOR build tag. It returns the program's path and a
// function that removes it; a running program may be removed.
func BuildReleaseOracle(dir, version string) (string, func(), error) {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 {
		return "", nil, fmt.Errorf("%q is not a release like 1.36 or v1.36.3", version)
	}
	minor := parts[0] + "." + parts[1]
	modfile := "kubernetes-" + minor + ".mod"
	if _, err := os.Stat(filepath.Join(dir, modfile)); err != nil {
		return "", nil, fmt.Errorf("no module file for kube-scheduler %s in %s (run from the conformance module's directory): %w", version, dir, err)
	}
	tmp, err := os.MkdirTemp("", "kubesched-oracle-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	bin := filepath.Join(tmp, "oracle")
	build := exec.Command("go", "build", "-modfile="+modfile, "-tags=kubernetes_"+parts[0]+"_"+parts[1], "-o", bin, "./cmd/oracle")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building the kube-scheduler %s oracle: %v\n%s", version, err, out)
	}
	return bin, cleanup, nil
}

// RemoteOracle asks a kube-scheduler release running in another process
// (cmd/oracle, see [Serve]) for its verdicts: the answers of [Oracle],
// [PreemptionOracle] and [NominatedOracle] there, and its [JudgeConfig]. Start it with
// [StartRemoteOracle]; it is safe for concurrent use, and requests are
// serialised, as the oracles serialise their runs anyway.
type RemoteOracle struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  *lockedBuffer
	release string
	err     error
}

// StartRemoteOracle starts the oracle program at path and asks which
// release it links.
func StartRemoteOracle(path string) (*RemoteOracle, error) {
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r := &RemoteOracle{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: &lockedBuffer{}}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	if err := r.call(&request{Kind: "release"}, &r.release); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Release is the kube-scheduler release the oracle links, as "1.36".
func (r *RemoteOracle) Release() string { return r.release }

// Gates reports whether each of the named feature gates is on in the
// oracle's process; a gate its release does not have is an error.
func (r *RemoteOracle) Gates(names ...string) (map[string]bool, error) {
	var gates map[string]bool
	err := r.call(&request{Kind: "gates", Gates: names}, &gates)
	return gates, err
}

// JudgeConfig is [JudgeConfig] in the oracle's process.
func (r *RemoteOracle) JudgeConfig(data []byte) (*ConfigVerdict, error) {
	v := &ConfigVerdict{}
	return v, r.call(&request{Kind: "config", Config: data}, v)
}

// LayOutProfiles is [LayOutProfiles] in the oracle's process.
func (r *RemoteOracle) LayOutProfiles(data []byte) ([]ProfileLayout, error) {
	var layouts []ProfileLayout
	return layouts, r.call(&request{Kind: "layout", Config: data}, &layouts)
}

// RunConfigured is [ConfiguredOracle.RunScenario] in the oracle's
// process.
func (r *RemoteOracle) RunConfigured(ctx context.Context, data []byte, s *Scenario) (*OracleResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := toWire(s)
	if err != nil {
		return nil, err
	}
	res := &OracleResult{}
	return res, r.call(&request{Kind: "configured", Config: data, Scenario: w}, res)
}

// RunScenario is [Oracle.RunScenario] in the oracle's process.
func (r *RemoteOracle) RunScenario(ctx context.Context, s *Scenario) (*OracleResult, error) {
	res := &OracleResult{}
	return res, r.callScenario(ctx, "scenario", s, nil, res)
}

// RunPreemption is [PreemptionOracle.RunScenario] in the oracle's
// process.
func (r *RemoteOracle) RunPreemption(ctx context.Context, s *Scenario) (*PreemptionResult, error) {
	res := &PreemptionResult{}
	return res, r.callScenario(ctx, "preemption", s, nil, res)
}

// RunNominated is [NominatedOracle.RunScenario] in the oracle's process.
func (r *RemoteOracle) RunNominated(ctx context.Context, s *Scenario, nominated []Nomination) (*OracleResult, error) {
	res := &OracleResult{}
	return res, r.callScenario(ctx, "nominated", s, nominated, res)
}

func (r *RemoteOracle) callScenario(ctx context.Context, kind string, s *Scenario, nominated []Nomination, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := toWire(s)
	if err != nil {
		return err
	}
	req := &request{Kind: kind, Scenario: w}
	for _, n := range nominated {
		req.Nominated = append(req.Nominated, wireNomination(n))
	}
	return r.call(req, result)
}

// call sends req and decodes the response's result into result. Once the
// pipe fails, every later call fails with the same error and what the
// oracle wrote on stderr.
func (r *RemoteOracle) call(req *request, result any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	line, err := r.roundTrip(append(data, '\n'))
	if err != nil {
		r.err = fmt.Errorf("the kube-scheduler v%s oracle: %w; its stderr: %s", r.release, err, strings.TrimSpace(r.stderr.String()))
		return r.err
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("the oracle's response: %w", err)
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return json.Unmarshal(resp.Result, result)
}

func (r *RemoteOracle) roundTrip(data []byte) ([]byte, error) {
	if _, err := r.in.Write(data); err != nil {
		return nil, err
	}
	line, err := r.out.ReadBytes('\n')
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return line, err
}

// Close ends the oracle's input and waits for it to exit.
func (r *RemoteOracle) Close() error {
	r.in.Close()
	return r.cmd.Wait()
}

// lockedBuffer is the oracle's stderr, written by exec's copying
// goroutine while a call may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
