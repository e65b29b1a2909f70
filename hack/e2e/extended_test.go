package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// gpuResource is the extended resource the DeviceClass of
// TestDRAExtendedResourcesAgree provides; no node offers it itself.
const gpuResource = "example.com/gpu"

// askingForGPUs is a pod for scheduler with a container per name, each
// asking for one example.com/gpu.
func askingForGPUs(name, scheduler string, containers ...string) *v1.Pod {
	p := pod(name, scheduler, "100m", "64Mi")
	c := p.Spec.Containers[0]
	p.Spec.Containers = nil
	for _, n := range containers {
		c := *c.DeepCopy()
		c.Name = n
		c.Resources.Requests[gpuResource] = resource.MustParse("1")
		c.Resources.Limits = v1.ResourceList{gpuResource: resource.MustParse("1")}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

// extendedShape is what a scheduler made for a bound pod asking for
// extended resources, without what differs between runs (names the API
// server generates, UIDs, times), to compare between schedulers.
type extendedShape struct {
	Node         string
	GenerateName string
	Annotations  map[string]string
	Owners       []string // kind/name, controller
	Finalizers   []string
	Requests     []resourceapi.DeviceRequest
	Results      []resourceapi.DeviceRequestAllocationResult
	NodeSelector *v1.NodeSelector
	Timestamped  bool // status.allocation.allocationTimestamp set
	ReservedFor  []resourceapi.ResourceClaimConsumerReference
	Mappings     []v1.ContainerExtendedResourceRequest
}

// shapeOf returns the shape of what was made for the bound pod p: its
// claim for extended resources, found by owner, and its
// status.extendedResourceClaimStatus, which must name that claim.
func shapeOf(ctx context.Context, client kubernetes.Interface, p *v1.Pod) (extendedShape, error) {
	list, err := client.ResourceV1().ResourceClaims(p.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return extendedShape{}, err
	}
	var claim *resourceapi.ResourceClaim
	for i := range list.Items {
		for _, o := range list.Items[i].OwnerReferences {
			if o.UID == p.UID {
				if claim != nil {
					return extendedShape{}, fmt.Errorf("%s owns claims %s and %s", p.Name, claim.Name, list.Items[i].Name)
				}
				claim = &list.Items[i]
			}
		}
	}
	if claim == nil {
		return extendedShape{}, fmt.Errorf("no claim owned by %s", p.Name)
	}
	s := extendedShape{
		Node: p.Spec.NodeName, GenerateName: claim.GenerateName, Annotations: claim.Annotations, Finalizers: claim.Finalizers,
		Requests: claim.Spec.Devices.Requests, ReservedFor: claim.Status.ReservedFor,
	}
	if !strings.HasPrefix(claim.Name, claim.GenerateName) {
		return s, fmt.Errorf("claim %s is not named from its generateName %q", claim.Name, claim.GenerateName)
	}
	for _, o := range claim.OwnerReferences {
		s.Owners = append(s.Owners, fmt.Sprintf("%s %s/%s, controller %v", o.APIVersion, o.Kind, o.Name, o.Controller != nil && *o.Controller))
	}
	for i := range s.ReservedFor {
		if s.ReservedFor[i].UID != p.UID {
			return s, fmt.Errorf("claim %s reserved for %+v, not %s", claim.Name, s.ReservedFor[i], p.Name)
		}
		s.ReservedFor[i].UID = ""
	}
	if a := claim.Status.Allocation; a != nil {
		s.Results, s.NodeSelector, s.Timestamped = a.Devices.Results, a.NodeSelector, a.AllocationTimestamp != nil
	}
	ext := p.Status.ExtendedResourceClaimStatus
	if ext == nil || ext.ResourceClaimName != claim.Name {
		return s, fmt.Errorf("%s's extendedResourceClaimStatus is %+v, want it to name %s", p.Name, ext, claim.Name)
	}
	s.Mappings = ext.RequestMappings
	return s, nil
}

// TestDRAExtendedResourcesAgree gives each scheduler, on a fresh control
// plane, a DeviceClass that provides example.com/gpu, three devices in
// ResourceSlices on two of three nodes, and three pods asking for
// example.com/gpu in their containers, one after another: two GPUs (two
// containers), then one, then one more. Each scheduler binds the first
// to the node with two devices and the second to the node with one,
// each after creating its claim (allocated, reserved for it, named from
// the pod) and naming it in the pod's status.extendedResourceClaimStatus;
// no device is held twice; and the third gets the same message from
// both. What each made is compared field by field but for generated
// names, UIDs and times.
func TestDRAExtendedResourcesAgree(t *testing.T) {
	type outcome struct {
		shapes  map[string]string
		message string
	}
	outcomes := map[string]outcome{}
	for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
		t.Run(scheduler, func(t *testing.T) {
			ctx := context.Background()
			cp, client := startControlPlaneOpts(t, ctx, false)
			for i := range 3 {
				if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "4", "8Gi", nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			createGPUs(ctx, t, client, gpuResource)
			pods := client.CoreV1().Pods(metav1.NamespaceDefault)
			// Every change of the pods, to see what each had when it was
			// bound: a nomination before, the claim named in its status.
			w, err := pods.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			nominatedFirst, namedAtBinding := map[string]bool{}, map[string]string{}
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				for e := range w.ResultChan() {
					p, ok := e.Object.(*v1.Pod)
					switch {
					case !ok:
					case p.Spec.NodeName == "" && p.Status.NominatedNodeName != "":
						nominatedFirst[p.Name] = true
					case p.Spec.NodeName != "" && namedAtBinding[p.Name] == "":
						namedAtBinding[p.Name] = "none"
						if ext := p.Status.ExtendedResourceClaimStatus; ext != nil {
							namedAtBinding[p.Name] = ext.ResourceClaimName
						}
					}
				}
			}()
			if scheduler == v1.DefaultSchedulerName {
				if err := cp.StartScheduler(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false")
			}

			// One after another, so that the third is the one left.
			trainers := []*v1.Pod{
				askingForGPUs("trainer-0", scheduler, "learner", "evaluator"),
				askingForGPUs("trainer-1", scheduler, "learner"),
				askingForGPUs("trainer-2", scheduler, "learner"),
			}
			for i, p := range trainers {
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if i < 2 {
					eventually(t, time.Minute, p.Name+" is bound", func() (bool, error) {
						got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
						return err == nil && got.Spec.NodeName != "", err
					})
				}
			}
			o := outcome{shapes: map[string]string{}}
			o.message = awaitNoDeviceLeft(ctx, t, pods, "trainer-2")
			w.Stop()
			<-watched

			held := map[string]string{}
			for _, name := range []string{"trainer-0", "trainer-1"} {
				p, err := pods.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				s, err := shapeOf(ctx, client, p)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range s.Results {
					if r.Pool != p.Spec.NodeName {
						t.Errorf("%s runs on %s with device %s/%s of another node", name, p.Spec.NodeName, r.Pool, r.Device)
					}
					device := r.Pool + "/" + r.Device
					if other, dup := held[device]; dup {
						t.Errorf("device %s held by %s and %s", device, other, name)
					}
					held[device] = name
				}
				if !nominatedFirst[name] {
					t.Errorf("%s was not nominated to its node before it was bound", name)
				}
				if got := namedAtBinding[name]; got != p.Status.ExtendedResourceClaimStatus.ResourceClaimName {
					t.Errorf("%s's status named claim %q when it was bound, want its claim's name already", name, got)
				}
				b, err := json.MarshalIndent(s, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				o.shapes[name] = string(b)
			}
			// trainer-2 got no claim.
			list, err := client.ResourceV1().ResourceClaims(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 2 {
				t.Errorf("%d claims, want those of trainer-0 and trainer-1", len(list.Items))
			}
			outcomes[scheduler] = o
			t.Logf("%s: devices %v; trainer-2: %s", scheduler, held, o.message)
		})
	}
	a, b := outcomes[v1.DefaultSchedulerName], outcomes[kubeschedName]
	if a.message != b.message {
		t.Errorf("the pod left without a device:\n kube-scheduler: %s\n kubesched:      %s", a.message, b.message)
	}
	for _, name := range []string{"trainer-0", "trainer-1"} {
		if a.shapes[name] != b.shapes[name] {
			t.Errorf("what was made for %s differs:\n kube-scheduler: %s\n kubesched:      %s", name, a.shapes[name], b.shapes[name])
		}
	}
}
