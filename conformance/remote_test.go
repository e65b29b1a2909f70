package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/kubernetes/pkg/scheduler"
)

// TestRemoteOracleAnswersAsTheOraclesInProcess builds cmd/oracle against
// the linked release and requires its answers, having crossed the pipe,
// to equal those of the oracles in this process: what the out-of-process
// comparison with another release loses in transit would show here.
func TestRemoteOracleAnswersAsTheOraclesInProcess(t *testing.T) {
	linkedOnly(t)
	if testing.Short() {
		t.Skip("builds cmd/oracle")
	}
	bin := filepath.Join(t.TempDir(), "oracle")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/oracle").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/oracle: %v\n%s", err, out)
	}
	remote, err := StartRemoteOracle(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := remote.Close(); err != nil {
			t.Errorf("the oracle exited with %v", err)
		}
	}()
	if remote.Release() != linkedRelease {
		t.Errorf("Release() = %q, want %q", remote.Release(), linkedRelease)
	}
	ctx := context.Background()
	for seed := range uint64(40) {
		s := generateWithDRA(seed)
		addPreemption(s)
		want, err := testOracle.RunScenario(ctx, s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got, err := remote.RunScenario(ctx, s)
		if err != nil {
			t.Fatalf("seed %d: remote: %v", seed, err)
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("seed %d: the remote oracle says\n%+v\nthe oracle in process\n%+v", seed, got, want)
		}

		nominated := nominate(s, seed, nil)
		wantNom, err := upstream.RunNominated(ctx, s, nominated)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		gotNom, err := remote.RunNominated(ctx, s, nominated)
		if err != nil {
			t.Fatalf("seed %d: remote: %v", seed, err)
		}
		if !equality.Semantic.DeepEqual(gotNom, wantNom) {
			t.Errorf("seed %d with nominations: the remote oracle says\n%+v\nthe oracle in process\n%+v", seed, gotNom, wantNom)
		}

		p := generateWithPreemption(seed)
		wantPre, err := upstream.RunPreemption(ctx, p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		gotPre, err := remote.RunPreemption(ctx, p)
		if err != nil {
			t.Fatalf("seed %d: remote: %v", seed, err)
		}
		for _, res := range []*PreemptionResult{wantPre, gotPre} {
			// Upstream picks among tied candidates at random.
			if len(res.BestCandidates) > 1 || res.ClockDependent {
				res.NominatedNodeName = ""
				res.Message, res.PostFilterMessage = withoutNominee(res.Message), withoutNominee(res.PostFilterMessage)
			}
			res.dryRun = nil
		}
		if !equality.Semantic.DeepEqual(gotPre, wantPre) && !wantPre.ClockDependent {
			t.Errorf("seed %d preempting: the remote oracle says\n%+v\nthe oracle in process\n%+v", seed, gotPre, wantPre)
		}
	}
	// The timings' upstream side: the same verdict as an Upstream in
	// process, and rounds of calls.
	every := int32(100)
	u, err := NewUpstream(&every)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	// The first generated scenario whose pod fits somewhere: timing
	// measures placements.
	var (
		s    *Scenario
		want scheduler.ScheduleResult
		fits bool
	)
	for seed := uint64(0); seed < 50 && !fits; seed++ {
		s = generate(seed, false)
		if err := u.SetCluster(s.Nodes, s.Pods); err != nil {
			t.Fatal(err)
		}
		want, err = u.Schedule(ctx, s.Pod)
		fits = err == nil
	}
	if !fits {
		t.Fatal("no generated scenario among 50 seeds has a pod that fits")
	}
	setup, err := remote.SetUpTiming(ctx, &every, false, &Scenario{Nodes: s.Nodes, Pods: s.Pods, Pod: s.Pod})
	if err != nil {
		t.Fatalf("SetUpTiming: %v", err)
	}
	if setup.Feasible != want.FeasibleNodes || setup.Evaluated != want.EvaluatedNodes {
		t.Errorf("SetUpTiming found %d of %d evaluated nodes feasible, Upstream %d of %d", setup.Feasible, setup.Evaluated, want.FeasibleNodes, want.EvaluatedNodes)
	}
	if round, err := remote.TimeRound(time.Millisecond); err != nil || round.Calls < 1 || round.Spent <= 0 {
		t.Errorf("TimeRound = %+v, %v; want a call or more", round, err)
	}
	if err := remote.ClearTiming(); err != nil {
		t.Errorf("ClearTiming: %v", err)
	}
	if _, err := remote.TimeRound(time.Millisecond); err == nil || !strings.Contains(err.Error(), "no workload is installed") {
		t.Errorf("TimeRound after ClearTiming: %v, want an error", err)
	}

	gates, err := remote.Gates("DynamicResourceAllocation")
	if err != nil || !gates["DynamicResourceAllocation"] {
		t.Errorf("Gates(DynamicResourceAllocation) = %v, %v; want it on", gates, err)
	}
	if _, err := remote.Gates("NoSuchGate"); err == nil || !strings.Contains(err.Error(), "no feature gate NoSuchGate") {
		t.Errorf("Gates(NoSuchGate) = %v, want an error naming the gate", err)
	}
}

// TestServeAnswersBadRequestsWithErrors: a request Serve cannot run gets
// an error response, and Serve goes on to the next.
func TestServeAnswersBadRequestsWithErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, request, wantErr string
	}{
		{"a line that is not JSON", `{"kind":`, "unexpected end of JSON input"},
		{"an unknown kind", `{"kind":"bind"}`, "the request has no scenario"},
		{"an unknown kind with a scenario", `{"kind":"bind","scenario":{"nodes":[]}}`, `unknown request kind "bind"`},
		{"a scenario without the scenario", `{"kind":"scenario"}`, "the request has no scenario"},
		{"an object of a kind the scheduler does not read", `{"kind":"scenario","scenario":{"objects":[{"apiVersion":"v1","kind":"Secret"}]}}`, `object 0: unexpected kind "Secret"`},
		{"an object with a field its kind lacks", `{"kind":"scenario","scenario":{"objects":[{"apiVersion":"v1","kind":"Namespace","spec":{"color":"red"}}]}}`, "API types have no .scenario.objects[0].spec.color"},
		{"a pod with a field its kind lacks", `{"kind":"scenario","scenario":{"pod":{"spec":{"wings":2}}}}`, "API types have no .scenario.pod.spec.wings"},
		{"an unknown feature gate", `{"kind":"gates","gates":["NoSuchGate"]}`, "has no feature gate NoSuchGate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			in := tc.request + "\n" + `{"kind":"release"}` + "\n"
			if err := Serve(context.Background(), strings.NewReader(in), &out); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			dec := json.NewDecoder(&out)
			var first, second response
			if err := dec.Decode(&first); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(first.Error, tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", first.Error, tc.wantErr)
			}
			if err := dec.Decode(&second); err != nil {
				t.Fatal(err)
			}
			if second.Error != "" || string(second.Result) != `"`+linkedRelease+`"` {
				t.Errorf("the next request got %+v, want the release", second)
			}
		})
	}
}
