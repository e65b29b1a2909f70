package conformance

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/loader"
	"github.com/kubesched/kubesched/sim"
)

// TestExpandedWorkloadsPlaceAsUpstream loads manifests — nodes, a
// Deployment, a DaemonSet, a StatefulSet with volume claim templates —
// as the kubesched command does, with the API server's defaults and the
// pods their controllers would create, then places those pods one after
// another with sim and asks upstream about each on the same committed
// state: the labels, owner references, pinning affinity and claims the
// loader gave them must make upstream decide as kubesched.
func TestExpandedWorkloadsPlaceAsUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join("..", "internal", "cli", "testdata", "workloads")
	c, err := loader.Load(filepath.Join(dir, "nodes.yaml"), filepath.Join(dir, "deployment.yaml"),
		filepath.Join(dir, "daemonset.yaml"), filepath.Join(dir, "statefulset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c.Default(loader.DefaultOptions{})
	expanded, err := c.ExpandWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	if expanded.Pods() == 0 {
		t.Fatal("the workloads gave no pods: the test would prove nothing")
	}
	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithRandSource(rand.NewPCG(7, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := sim.New(fw, c.Nodes, c.Bound(), c.Objects...)
	if err != nil {
		t.Fatal(err)
	}
	placed := 0
	objects := slices.Clone(c.Objects)
	// DaemonSet pods first, as on a cluster whose nodes run them before
	// the workloads come.
	pending := c.Pending()
	slices.SortStableFunc(pending, func(a, b *v1.Pod) int { return boolRank(daemon(b)) - boolRank(daemon(a)) })
	for _, pod := range pending {
		step := &Scenario{Seed: 7, Nodes: c.Nodes, Pods: podsOf(cluster.Nodes()), Pod: pod, Objects: slices.Clone(objects)}
		want, err := upstream.RunScenario(ctx, step)
		if err != nil {
			t.Fatalf("%s: oracle: %v", pod.Name, err)
		}
		got, err := cluster.Place(ctx, pod)
		if diffs := diffResults(step, want, got, err); len(diffs) > 0 {
			t.Fatalf("%s: %d disagreement(s) with kube-scheduler:\n%s", pod.Name, len(diffs), formatDiffs(diffs, 20))
		}
		var fitErr *framework.FitError
		if err == nil {
			placed++
			// The claims the placement selected a node for, as the next
			// pod's cluster holds them.
			for _, claim := range filter.ProvisionedClaims(got) {
				i := slices.IndexFunc(objects, func(o runtime.Object) bool {
					old, ok := o.(*v1.PersistentVolumeClaim)
					return ok && old.Namespace == claim.Namespace && old.Name == claim.Name
				})
				if i < 0 {
					t.Fatalf("%s: provisioned claim %s/%s is not among the objects", pod.Name, claim.Namespace, claim.Name)
				}
				objects[i] = claim
			}
		} else if errors.As(err, &fitErr) {
			t.Logf("%s fits nowhere, as upstream says: %v", pod.Name, err)
		} else {
			t.Fatalf("%s: %v", pod.Name, err)
		}
	}
	// The fixtures have room for all but the database's third replica,
	// which both find no node for.
	if placed != expanded.Pods()-1 {
		t.Errorf("%d of the %d pods made placed; want all but one", placed, expanded.Pods())
	}
}

func daemon(p *v1.Pod) bool {
	return slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "DaemonSet" })
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
