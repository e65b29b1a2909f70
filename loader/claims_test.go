package loader_test

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const gpuTemplate = `
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  metadata:
    labels: {team: ml}
    annotations: {note: from-template}
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
`

// claimingPod is a pending pod named name whose claim "gpu" comes from
// the template called template.
func claimingPod(name, template string) string {
	return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: default, uid: uid-` + name + `}
spec:
  containers: [{name: c, image: app, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: ` + template + `}]
`
}

func TestClaimsAreCreatedFromTemplatesAsTheControllerWould(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		input string
		// want are, per pod, the claim its status names, "" for none.
		want map[string]string
	}{
		{
			name:  "a pending pod gets its claim from the template",
			input: gpuTemplate + "---" + claimingPod("train", "one-gpu"),
			want:  map[string]string{"train": "train-gpu-"},
		},
		{
			name:  "a claim whose template is missing is left for kube-scheduler to turn down",
			input: gpuTemplate + "---" + claimingPod("train", "two-gpus"),
			want:  map[string]string{"train": ""},
		},
		{
			name: "a pod of a live cluster, whose status names its claim, is left as it is",
			input: gpuTemplate + "---" + claimingPod("train", "one-gpu") + `
status:
  resourceClaimStatuses: [{name: gpu, resourceClaimName: train-gpu-abcde}]
`,
			want: map[string]string{"train": "train-gpu-abcde"},
		},
		{
			name:  "a bound pod is left as it is",
			input: gpuTemplate + "---" + strings.Replace(claimingPod("train", "one-gpu"), "spec:\n", "spec:\n  nodeName: n1\n", 1),
			want:  map[string]string{"train": ""},
		},
		{
			name: "a long name is cut in proportion, as the controller cuts it",
			input: gpuTemplate + "---" + claimingPod("a-pod-whose-name-is-long-enough-for-the-controller-to-cut", "one-gpu") + `---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: other, namespace: default}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}}
`,
			want: map[string]string{"a-pod-whose-name-is-long-enough-for-the-controller-to-cut": "a-pod-whose-name-is-long-enough-for-the-controller-t-gp"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, r := expand(t, tc.input)
			for name, want := range tc.want {
				p := pod(t, c, "default", name)
				got := ""
				for _, s := range p.Status.ResourceClaimStatuses {
					if s.Name == "gpu" && s.ResourceClaimName != nil {
						got = *s.ResourceClaimName
					}
				}
				if want == "" || strings.HasSuffix(want, "abcde") {
					if got != want {
						t.Errorf("pod %s names claim %q, want %q", name, got, want)
					}
					continue
				}
				if !strings.HasPrefix(got, want) || len(got) != len(want)+5 || len(got) > 63 {
					t.Fatalf("pod %s names claim %q, want %q and five characters", name, got, want)
				}
				claim := claimNamed(t, c.Objects, got)
				checkClaimFromTemplate(t, claim, p)
				if !slices.Contains(r.ResourceClaims, "default/"+got) {
					t.Errorf("the report names %v, not the claim %s", r.ResourceClaims, got)
				}
			}
		})
	}
}

// TestEveryReplicaGetsAClaimOfItsOwn: a Deployment whose pods claim a
// device through a template gets a claim per pod, created when its
// pods are, and expanding again creates nothing more.
func TestEveryReplicaGetsAClaimOfItsOwn(t *testing.T) {
	t.Parallel()
	c, r := expand(t, gpuTemplate+`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: train, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: train}}
  template:
    metadata: {labels: {app: train}}
    spec:
      containers: [{name: c, image: app, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
`)
	if len(r.ResourceClaims) != 3 {
		t.Fatalf("created %v, want a claim per replica", r.ResourceClaims)
	}
	seen := map[string]bool{}
	for _, p := range c.Pods {
		if len(p.Status.ResourceClaimStatuses) != 1 {
			t.Fatalf("pod %s has claim statuses %v, want one", p.Name, p.Status.ResourceClaimStatuses)
		}
		name := *p.Status.ResourceClaimStatuses[0].ResourceClaimName
		if seen[name] {
			t.Errorf("claim %s is named by two pods", name)
		}
		seen[name] = true
		checkClaimFromTemplate(t, claimNamed(t, c.Objects, name), p)
	}
	if again, err := c.ExpandWorkloads(); err != nil || len(again.ResourceClaims) != 0 || again.Pods() != 0 {
		t.Errorf("expanding again created %v, %v", again, err)
	}
	if got := r.String(); !strings.Contains(got, "3 ResourceClaims from templates") {
		t.Errorf("the report says %q", got)
	}
}

func claimNamed(t *testing.T, objects []runtime.Object, name string) *resourceapi.ResourceClaim {
	t.Helper()
	for _, o := range objects {
		if c, ok := o.(*resourceapi.ResourceClaim); ok && c.Name == name {
			return c
		}
	}
	t.Fatalf("no ResourceClaim %s", name)
	return nil
}

// checkClaimFromTemplate checks that claim is gpuTemplate's for p's
// claim "gpu", as the resource claim controller writes it.
func checkClaimFromTemplate(t *testing.T, claim *resourceapi.ResourceClaim, p *v1.Pod) {
	t.Helper()
	if ref := metav1.GetControllerOf(claim); ref == nil || ref.Kind != "Pod" || ref.Name != p.Name || ref.UID != p.UID {
		t.Errorf("claim %s is controlled by %+v, want pod %s (uid %q)", claim.Name, ref, p.Name, p.UID)
	}
	if claim.Annotations[resourceapi.PodResourceClaimAnnotation] != "gpu" || claim.Annotations["note"] != "from-template" || claim.Labels["team"] != "ml" {
		t.Errorf("claim %s has labels %v and annotations %v, want the template's and the pod claim's name", claim.Name, claim.Labels, claim.Annotations)
	}
	if claim.Namespace != p.Namespace || claim.UID == "" {
		t.Errorf("claim %s is in namespace %q with uid %q", claim.Name, claim.Namespace, claim.UID)
	}
	if r := claim.Spec.Devices.Requests; len(r) != 1 || r[0].Exactly == nil || r[0].Exactly.DeviceClassName != "gpu.example.com" || r[0].Exactly.AllocationMode != resourceapi.DeviceAllocationModeExactCount {
		t.Errorf("claim %s has requests %+v, want the template's, defaulted", claim.Name, r)
	}
}
