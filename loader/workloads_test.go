package loader_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/loader"
)

// expand reads input, defaults it and expands its workloads, failing the
// test on error.
func expand(t *testing.T, input string) (*loader.Cluster, loader.ExpandReport) {
	t.Helper()
	c := readYAML(t, input)
	c.Default(loader.DefaultOptions{})
	r, err := c.ExpandWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

// created are the pods r says were created, as "Kind ns/name: pod, pod".
func created(r loader.ExpandReport) []string {
	var s []string
	for _, w := range r.Workloads {
		s = append(s, fmt.Sprintf("%s %s/%s: %s", w.Kind, w.Namespace, w.Name, strings.Join(w.Pods, ", ")))
	}
	return s
}

// pod returns the pod of that name, failing the test without one.
func pod(t *testing.T, c *loader.Cluster, namespace, name string) *v1.Pod {
	t.Helper()
	p, ok := c.Pod(namespace, name)
	if !ok {
		t.Fatalf("no pod %s/%s", namespace, name)
	}
	return p
}

// controller is "Kind name" of p's controller reference.
func controller(p metav1.Object) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return ""
	}
	return ref.Kind + " " + ref.Name
}

const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: web, resources: {limits: {cpu: "1", memory: 1Gi}}}]
`

func TestExpandDeployment(t *testing.T) {
	t.Parallel()
	t.Run("A Deployment makes a ReplicaSet named after its template's hash, and its replicas as pods of it.", func(t *testing.T) {
		t.Parallel()
		c, r := expand(t, webDeployment)
		if len(r.Workloads) != 1 || len(r.Workloads[0].Pods) != 3 || len(c.Pods) != 3 {
			t.Fatalf("created %q", created(r))
		}
		rs, ok := c.Objects[0].(*appsv1.ReplicaSet)
		if !ok || len(c.Objects) != 1 {
			t.Fatalf("objects %v, want one ReplicaSet", c.Objects)
		}
		hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if hash == "" || rs.Name != "web-"+hash || rs.Namespace != "default" || controller(rs) != "Deployment web" ||
			rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash || *rs.Spec.Replicas != 3 {
			t.Errorf("ReplicaSet %+v", rs)
		}
		for _, name := range r.Workloads[0].Pods {
			p := pod(t, c, "default", name)
			if !strings.HasPrefix(name, rs.Name+"-") || len(name) != len(rs.Name)+6 || controller(p) != "ReplicaSet "+rs.Name ||
				p.Labels["app"] != "web" || p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash || p.Spec.NodeName != "" || p.UID == "" {
				t.Errorf("pod %s: %+v", name, p.ObjectMeta)
			}
			// The API server's defaults, as on a pod created.
			if got := p.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "1" || p.Spec.SchedulerName != v1.DefaultSchedulerName {
				t.Errorf("pod %s requests %s cpu of scheduler %q; want its limit, of default-scheduler", name, got, p.Spec.SchedulerName)
			}
		}
		if got, want := r.String(), "created 3 pods for 1 workload as their controllers would: Deployment default/web 3"; got != want {
			t.Errorf("report %q, want %q", got, want)
		}
	})
	t.Run("The same input gives the same names; another template, another ReplicaSet.", func(t *testing.T) {
		t.Parallel()
		_, a := expand(t, webDeployment)
		_, b := expand(t, webDeployment)
		_, other := expand(t, strings.Replace(webDeployment, "image: web", "image: web:2", 1))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q, then %q", created(a), created(b))
		}
		if rs := func(r loader.ExpandReport) string { return r.Workloads[0].Pods[0][:len(r.Workloads[0].Pods[0])-6] }; rs(a) == rs(other) {
			t.Errorf("two templates give the ReplicaSet %s", rs(a))
		}
	})
	t.Run("A Deployment without replicas has one.", func(t *testing.T) {
		t.Parallel()
		_, r := expand(t, strings.Replace(webDeployment, "replicas: 3", "", 1))
		if r.Pods() != 1 {
			t.Errorf("created %q", created(r))
		}
	})
	t.Run("Pods of the Deployment's ReplicaSet that the input lacks count, by the selector; others do not.", func(t *testing.T) {
		t.Parallel()
		_, r := expand(t, webDeployment+`
--- {apiVersion: v1, kind: Pod, metadata: {name: web-5d8f-a, namespace: default, labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8f, uid: u1, controller: true}]}, spec: {containers: [{name: web}]}}
--- {apiVersion: v1, kind: Pod, metadata: {name: orphan, namespace: default, labels: {app: web}}, spec: {containers: [{name: web}]}}
--- {apiVersion: v1, kind: Pod, metadata: {name: gone, namespace: default, labels: {app: web}}, spec: {containers: [{name: web}]}, status: {phase: Failed}}
--- {apiVersion: v1, kind: Pod, metadata: {name: other, namespace: default, labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, controller: true}]}, spec: {containers: [{name: web}]}}
--- {apiVersion: v1, kind: Pod, metadata: {name: elsewhere, namespace: prod, labels: {app: web}}, spec: {containers: [{name: web}]}}
`)
		if r.Pods() != 1 {
			t.Errorf("created %q; want one pod beside the ReplicaSet's and the orphan", created(r))
		}
	})
	t.Run("The Deployment's ReplicaSet in the input for its template takes the pods it lacks.", func(t *testing.T) {
		t.Parallel()
		c, r := expand(t, webDeployment+`
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-abc, namespace: default, uid: rs-uid, labels: {app: web, pod-template-hash: abc}, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, controller: true}]}
spec:
  replicas: 3
  selector: {matchLabels: {app: web, pod-template-hash: abc}}
  template:
    metadata: {labels: {app: web, pod-template-hash: abc}}
    spec:
      containers: [{name: web, image: web, resources: {limits: {cpu: "1", memory: 1Gi}}}]
--- {apiVersion: v1, kind: Pod, metadata: {name: web-abc-x, namespace: default, labels: {app: web, pod-template-hash: abc}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: rs-uid, controller: true}]}, spec: {containers: [{name: web}]}}
`)
		if got, want := created(r), []string{"Deployment default/web: " + strings.Join(r.Workloads[0].Pods, ", ")}; !slices.Equal(got, want) || r.Pods() != 2 || len(c.Objects) != 1 {
			t.Fatalf("created %q and %d objects; want 2 pods of the Deployment and no ReplicaSet", got, len(c.Objects)-1)
		}
		for _, name := range r.Workloads[0].Pods {
			if p := pod(t, c, "default", name); controller(p) != "ReplicaSet web-abc" || p.OwnerReferences[0].UID != "rs-uid" || !strings.HasPrefix(name, "web-abc-") {
				t.Errorf("pod %s of %s", name, controller(p))
			}
		}
	})
}

func TestExpandReplicaSetsAndReplicationControllers(t *testing.T) {
	t.Parallel()
	c, r := expand(t, `
{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: api, uid: api-uid}, spec: {replicas: 2, selector: {matchLabels: {app: api}}, template: {metadata: {labels: {app: api}}, spec: {containers: [{name: c}]}}}}
{apiVersion: v1, kind: ReplicationController, metadata: {name: legacy}, spec: {replicas: 2, template: {metadata: {labels: {app: legacy}}, spec: {containers: [{name: c}]}}}}
{apiVersion: v1, kind: Pod, metadata: {name: api-1, namespace: default, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: api, uid: api-uid, controller: true}]}, spec: {containers: [{name: c}]}}
{apiVersion: v1, kind: Pod, metadata: {name: legacy-1, namespace: default, labels: {app: legacy}}, spec: {containers: [{name: c}]}}
{apiVersion: v1, kind: Pod, metadata: {name: api-old, namespace: default, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: api, uid: older-uid, controller: true}]}, spec: {containers: [{name: c}]}}
`)
	if len(r.Workloads) != 2 || len(r.Workloads[0].Pods) != 1 || len(r.Workloads[1].Pods) != 1 {
		t.Fatalf("created %q; want one pod of each (the ReplicaSet's pod of another UID is not its)", created(r))
	}
	if p := pod(t, c, "default", r.Workloads[0].Pods[0]); controller(p) != "ReplicaSet api" || p.OwnerReferences[0].UID != "api-uid" || p.Labels["app"] != "api" {
		t.Errorf("pod %+v", p.ObjectMeta)
	}
	if p := pod(t, c, "default", r.Workloads[1].Pods[0]); controller(p) != "ReplicationController legacy" || p.OwnerReferences[0].APIVersion != "v1" {
		t.Errorf("pod %+v", p.ObjectMeta)
	}
}

func TestExpandStatefulSet(t *testing.T) {
	t.Parallel()
	const db = `
{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}, provisioner: x}
{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {replicas: 3, serviceName: db, selector: {matchLabels: {app: db}},
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}], volumes: [{name: data, emptyDir: {}}, {name: config, configMap: {name: db}}]}},
  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}},
    {metadata: {name: logs}, spec: {storageClassName: fast, resources: {requests: {storage: 1Gi}}}}]}}
{apiVersion: v1, kind: Pod, metadata: {name: db-1, namespace: default, labels: {app: db}}, spec: {containers: [{name: c}]}}
{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-db-2, namespace: default}, spec: {storageClassName: standard}}
`
	c, r := expand(t, db)
	if got, want := created(r), []string{"StatefulSet default/db: db-0, db-2"}; !slices.Equal(got, want) {
		t.Fatalf("created %q, want %q", got, want)
	}
	if got, want := r.Workloads[0].PersistentVolumeClaims, []string{"data-db-0", "logs-db-0", "logs-db-2"}; !slices.Equal(got, want) {
		t.Errorf("claims %q, want %q", got, want)
	}
	p := pod(t, c, "default", "db-2")
	if p.Labels[appsv1.StatefulSetPodNameLabel] != "db-2" || p.Labels[appsv1.PodIndexLabel] != "2" || p.Labels["app"] != "db" ||
		p.Spec.Hostname != "db-2" || p.Spec.Subdomain != "db" || controller(p) != "StatefulSet db" {
		t.Errorf("pod %+v %+v", p.ObjectMeta, p.Spec)
	}
	var volumes []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			volumes = append(volumes, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
		default:
			volumes = append(volumes, v.Name)
		}
	}
	if want := []string{"data=data-db-2", "logs=logs-db-2", "config"}; !slices.Equal(volumes, want) {
		t.Errorf("volumes %q, want %q", volumes, want)
	}
	var classes []string
	for _, o := range c.Objects {
		if pvc, ok := o.(*v1.PersistentVolumeClaim); ok {
			classes = append(classes, pvc.Name+"="+*pvc.Spec.StorageClassName)
			if pvc.Labels["app"] != "db" && pvc.Name != "data-db-2" || pvc.Spec.VolumeName != "" || pvc.Namespace != "default" {
				t.Errorf("claim %+v", pvc)
			}
		}
	}
	// The default StorageClass for a template that names none.
	if want := []string{"data-db-2=standard", "data-db-0=standard", "logs-db-0=fast", "logs-db-2=fast"}; !slices.Equal(classes, want) {
		t.Errorf("claims of classes %q, want %q", classes, want)
	}

	t.Run("Ordinals start at spec.ordinals.start.", func(t *testing.T) {
		t.Parallel()
		_, r := expand(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {replicas: 2, ordinals: {start: 5}, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}}}`)
		if got, want := created(r), []string{"StatefulSet default/db: db-5, db-6"}; !slices.Equal(got, want) {
			t.Errorf("created %q, want %q", got, want)
		}
	})
}

func TestExpandDaemonSet(t *testing.T) {
	t.Parallel()
	const nodes = `
{apiVersion: v1, kind: Node, metadata: {name: a, labels: {os: linux}}, status: {allocatable: {cpu: "4"}}}
{apiVersion: v1, kind: Node, metadata: {name: b, labels: {os: linux}}, spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}, {key: node.kubernetes.io/not-ready, effect: NoExecute}]}}
{apiVersion: v1, kind: Node, metadata: {name: c, labels: {os: linux}}, spec: {taints: [{key: gpu, effect: NoSchedule}]}}
{apiVersion: v1, kind: Node, metadata: {name: d, labels: {os: linux}}, spec: {taints: [{key: maintenance, effect: PreferNoSchedule}, {key: node.kubernetes.io/network-unavailable, effect: NoSchedule}]}}
{apiVersion: v1, kind: Node, metadata: {name: e, labels: {os: windows}}}
{apiVersion: v1, kind: Node, metadata: {name: f, labels: {os: linux}}}
{apiVersion: v1, kind: Pod, metadata: {name: agent-old, namespace: kube-system, labels: {app: agent}, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, controller: true}]},
  spec: {nodeName: f, containers: [{name: c}]}}
`
	const agent = `
{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent, namespace: kube-system}, spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {
  nodeSelector: {os: linux},
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: os, operator: Exists}]}]}}},
  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 30}],
  containers: [{name: c, resources: {requests: {cpu: 100m}}}]}}}}
`
	c, r := expand(t, nodes+agent)
	pinned := map[string]string{}
	for _, name := range r.Workloads[0].Pods {
		p := pod(t, c, "kube-system", name)
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" {
			t.Errorf("pod %s: node affinity %+v, want its node's name alone", name, terms)
			continue
		}
		pinned[terms[0].MatchFields[0].Values[0]] = name
		if controller(p) != "DaemonSet agent" || p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == "" || p.Spec.NodeName != "" || !strings.HasPrefix(name, "agent-") {
			t.Errorf("pod %s: %+v", name, p.ObjectMeta)
		}
		var tolerated []string
		for _, tol := range p.Spec.Tolerations {
			tolerated = append(tolerated, fmt.Sprintf("%s:%s:%v", tol.Key, tol.Effect, tol.TolerationSeconds != nil))
		}
		want := []string{
			"node.kubernetes.io/not-ready:NoExecute:false", "node.kubernetes.io/unreachable:NoExecute:false",
			"node.kubernetes.io/disk-pressure:NoSchedule:false", "node.kubernetes.io/memory-pressure:NoSchedule:false",
			"node.kubernetes.io/pid-pressure:NoSchedule:false", "node.kubernetes.io/unschedulable:NoSchedule:false",
		}
		if !slices.Equal(tolerated, want) {
			t.Errorf("pod %s tolerates %q, want %q", name, tolerated, want)
		}
	}
	// b is cordoned and not ready, which daemons tolerate; c's taint is
	// not tolerated, nor d's network one by a pod off the host's network;
	// e is not linux; f has its pod.
	if got := slices.Sorted(maps.Keys(pinned)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("pods for nodes %q, want a and b", got)
	}

	t.Run("A DaemonSet on the host's network tolerates the network being unavailable.", func(t *testing.T) {
		t.Parallel()
		_, r := expand(t, nodes+strings.Replace(agent, "nodeSelector:", "hostNetwork: true, nodeSelector:", 1))
		if r.Pods() != 3 {
			t.Errorf("created %q, want pods for a, b and d", created(r))
		}
	})
	t.Run("Pending pods pinned to their nodes count for them.", func(t *testing.T) {
		t.Parallel()
		again, err := c.ExpandWorkloads()
		if err != nil || again.Pods() != 0 {
			t.Errorf("expanding again created %q, %v", created(again), err)
		}
	})
}

func TestExpandJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec string
		pods       []string
		want       int
		check      func(t *testing.T, c *loader.Cluster, r loader.ExpandReport)
	}{
		{name: "A Job without parallelism or completions runs one pod.", spec: `{}`, want: 1,
			check: func(t *testing.T, c *loader.Cluster, r loader.ExpandReport) {
				p := pod(t, c, "default", r.Workloads[0].Pods[0])
				if p.Labels["batch.kubernetes.io/job-name"] != "report" || p.Labels["job-name"] != "report" ||
					p.Labels["batch.kubernetes.io/controller-uid"] != "job-uid" || p.Labels["controller-uid"] != "job-uid" ||
					controller(p) != "Job report" || !slices.Contains(p.Finalizers, "batch.kubernetes.io/job-tracking") {
					t.Errorf("pod %+v", p.ObjectMeta)
				}
			}},
		{name: "A Job runs parallelism pods.", spec: `{parallelism: 4}`, want: 4},
		{name: "A Job runs no more pods than completions remain.", spec: `{parallelism: 4, completions: 2}`, want: 2},
		{name: "Pods that succeeded count as completions, active ones as running, failed ones not at all.",
			spec: `{parallelism: 4, completions: 5}`,
			pods: []string{"Succeeded", "Succeeded", "Running", "Failed"}, want: 2},
		{name: "A Job without completions starts nothing once a pod succeeded.",
			spec: `{parallelism: 4}`, pods: []string{"Succeeded", "Running"}, want: 0},
		{name: "A suspended Job runs nothing.", spec: `{parallelism: 4, suspend: true}`, want: 0},
		{name: "An Indexed Job's pods take the lowest free indexes.",
			spec: `{parallelism: 2, completions: 4, completionMode: Indexed}`, pods: []string{"Succeeded"}, want: 2,
			check: func(t *testing.T, c *loader.Cluster, r loader.ExpandReport) {
				for i, name := range r.Workloads[0].Pods {
					index := fmt.Sprint(i + 1) // the pod in the input holds 0
					p := pod(t, c, "default", name)
					if !strings.HasPrefix(name, "report-"+index+"-") || p.Spec.Hostname != "report-"+index ||
						p.Labels["batch.kubernetes.io/job-completion-index"] != index || p.Annotations["batch.kubernetes.io/job-completion-index"] != index {
						t.Errorf("pod %s: %+v", name, p.ObjectMeta)
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			input := `{apiVersion: batch/v1, kind: Job, metadata: {name: report, uid: job-uid}, spec: ` + strings.Replace(tc.spec, "{", "{template: {spec: {containers: [{name: c}]}}, ", 1) + `}`
			for i, phase := range tc.pods {
				input += fmt.Sprintf("\n{apiVersion: v1, kind: Pod, metadata: {name: old-%d, namespace: default, annotations: {batch.kubernetes.io/job-completion-index: \"%d\"}, ownerReferences: [{apiVersion: batch/v1, kind: Job, name: report, uid: job-uid, controller: true}]}, spec: {containers: [{name: c}]}, status: {phase: %s}}", i, i, phase)
			}
			c, r := expand(t, input)
			if r.Pods() != tc.want {
				t.Fatalf("created %q, want %d pods", created(r), tc.want)
			}
			if tc.check != nil {
				tc.check(t, c, r)
			}
		})
	}
	t.Run("A finished Job runs nothing.", func(t *testing.T) {
		t.Parallel()
		_, r := expand(t, `{apiVersion: batch/v1, kind: Job, metadata: {name: report}, spec: {template: {spec: {containers: [{name: c}]}}}, status: {conditions: [{type: Complete, status: "True"}]}}`)
		if r.Pods() != 0 {
			t.Errorf("created %q", created(r))
		}
	})
}

func TestExpandWorkloadsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, input, want string }{
		{"Negative replicas are an error naming the workload.",
			`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: -1}}`,
			"Deployment default/web: spec.replicas -1 is negative"},
		{"A negative parallelism is an error naming the Job.",
			`{apiVersion: batch/v1, kind: Job, metadata: {name: report}, spec: {parallelism: -2}}`,
			"Job default/report: spec.parallelism -2 is negative"},
		{"More pods than MaxExpandedPods are an error naming the workload.",
			`{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {replicas: 2147483647, template: {spec: {containers: [{name: c}]}}}}`,
			"StatefulSet default/db: 2147483647 pods to create, more than MaxExpandedPods (100000)"},
		{"MaxExpandedPods bounds all workloads together.",
			`{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: a}, spec: {replicas: 60000, template: {spec: {containers: [{name: c}]}}}}
{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: b}, spec: {replicas: 60000, template: {spec: {containers: [{name: c}]}}}}`,
			"ReplicaSet default/b: 60000 pods to create after 60000 for other workloads, more than MaxExpandedPods (100000) in all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := readYAML(t, tc.input)
			c.Default(loader.DefaultOptions{})
			before := snapshot(t, c)
			r, err := c.ExpandWorkloads()
			if err == nil || err.Error() != tc.want || len(r.Workloads) != 0 {
				t.Errorf("error %v, report %q; want %q", err, created(r), tc.want)
			}
			if snapshot(t, c) != before {
				t.Error("the cluster changed")
			}
		})
	}
}

func TestExpandingTwiceCreatesNothingTheSecondTime(t *testing.T) {
	t.Parallel()
	c, r := expand(t, webDeployment+`
--- {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db}, spec: {replicas: 2, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}, volumeClaimTemplates: [{metadata: {name: data}}]}}
--- {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent}, spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c}]}}}}
--- {apiVersion: batch/v1, kind: Job, metadata: {name: report}, spec: {parallelism: 2, template: {spec: {containers: [{name: c}]}}}}
--- {apiVersion: v1, kind: Node, metadata: {name: a}}
--- {apiVersion: v1, kind: Node, metadata: {name: b}}
`)
	want := []string{"Deployment default/web", "StatefulSet default/db", "DaemonSet default/agent", "Job default/report"}
	var got []string
	for _, w := range r.Workloads {
		got = append(got, w.Kind+" "+w.Namespace+"/"+w.Name)
	}
	if !slices.Equal(got, want) || r.Pods() != 3+2+2+2 {
		t.Fatalf("created %q", created(r))
	}
	before := snapshot(t, c)
	again, err := c.ExpandWorkloads()
	if err != nil || len(again.Workloads) != 0 || snapshot(t, c) != before {
		t.Errorf("expanding again created %q, %v", created(again), err)
	}
	if d := c.Default(loader.DefaultOptions{}); d.Objects != 0 {
		t.Errorf("what was created lacked defaults: %s", d)
	}
}

func TestExpandReportNamesTenWorkloadsAtMost(t *testing.T) {
	t.Parallel()
	var input strings.Builder
	for i := range 12 {
		fmt.Fprintf(&input, "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs-%d}, spec: {template: {spec: {containers: [{name: c}]}}}}\n", i)
	}
	_, r := expand(t, input.String())
	const want = "created 12 pods for 12 workloads as their controllers would: ReplicaSet default/rs-0 1, "
	if got := r.String(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "ReplicaSet default/rs-9 1 and 2 more") {
		t.Errorf("got %q", got)
	}
}
