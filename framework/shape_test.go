package framework

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/testcluster"
)

func TestSameShape(t *testing.T) {
	base := func() *v1.Pod { return testcluster.Pod("a", testcluster.Basic) }
	for _, tc := range []struct {
		name   string
		change func(*v1.Pod)
		same   bool
	}{
		{"a replica with another name and UID is the same shape", func(p *v1.Pod) { p.Name, p.UID = "b", "b" }, true},
		{"a request written another way is the same shape", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("0.1")
		}, true},
		{"an empty toleration list is the same shape as none", func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{} }, true},
		{"a condition the other pod lacks is another shape", func(p *v1.Pod) {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
		}, false},
		{"a larger request is another shape", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("101m")
		}, false},
		{"a node selector is another shape", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }, false},
		{"another priority is another shape", func(p *v1.Pod) { p.Spec.Priority = new(int32(7)) }, false},
		{"a pod being deleted is never the same shape", func(p *v1.Pod) { p.DeletionTimestamp = new(metav1.Now()) }, false},
		{"another nominated node is another shape", func(p *v1.Pod) { p.Status.NominatedNodeName = "n1" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			tc.change(b)
			if got := sameShape(base(), b); got != tc.same {
				t.Fatalf("sameShape = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestSameShapeIgnoresConditionTimes(t *testing.T) {
	a, b := testcluster.Pod("a", testcluster.Basic), testcluster.Pod("b", testcluster.Basic)
	a.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, LastTransitionTime: metav1.Unix(1, 0)}}
	b.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, LastTransitionTime: metav1.Unix(2, 0)}}
	if !sameShape(a, b) {
		t.Fatal("pods differing only in a condition's time are not the same shape")
	}
	b.Status.Conditions[0].Reason = "Unschedulable"
	if sameShape(a, b) {
		t.Fatal("pods whose conditions differ in reason are the same shape")
	}
}

// TestBareStatusLooksAtEveryField: bareStatus must see a value in every
// field of PodStatus but the two sameShape ignores or compares itself
// (conditions, start time), so that a field added to PodStatus is not
// passed over when pod shapes are compared.
func TestBareStatusLooksAtEveryField(t *testing.T) {
	if !bareStatus(&v1.PodStatus{}) {
		t.Fatal("an empty status is not bare")
	}
	typ := reflect.TypeFor[v1.PodStatus]()
	for i := range typ.NumField() {
		field := typ.Field(i)
		t.Run(field.Name, func(t *testing.T) {
			var s v1.PodStatus
			setSomething(t, reflect.ValueOf(&s).Elem().Field(i))
			ignored := field.Name == "Conditions" || field.Name == "StartTime"
			if got := bareStatus(&s); got != ignored {
				t.Fatalf("a status with only %s set is bare: %v, want %v", field.Name, got, ignored)
			}
		})
	}
}

// setSomething gives v a value that is not its type's zero value.
func setSomething(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	default:
		t.Fatalf("no value for a field of kind %v", v.Kind())
	}
}

func BenchmarkSameShape(b *testing.B) {
	replica := func(name string) *v1.Pod {
		p := testcluster.Pod(name, testcluster.TopologySpreading)
		p.Labels = map[string]string{"app": "web"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: new(true)}}
		return p
	}
	x, y := replica("a"), replica("b")
	b.Run("sameShape", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !sameShape(x, y) {
				b.Fatal("replicas differ")
			}
		}
	})
	// As a memo compares: its pod's spec marshalled once, the incoming
	// pod's each time.
	b.Run("marshalled", func(b *testing.B) {
		b.ReportAllocs()
		kept := marshalSpec(x)
		for b.Loop() {
			if !sameShapeSpec(x, y, kept, marshalSpec(y)) {
				b.Fatal("replicas differ")
			}
		}
	})
}

// TestMarshalledSpecsShowEveryField: sameShape takes two specs that
// marshal alike for equal, so a value in any field of PodSpec, or of the
// API structs within it three levels down, must show in what the spec
// marshals to.
func TestMarshalledSpecsShowEveryField(t *testing.T) {
	empty, err := (&v1.PodSpec{}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	fields := 0
	var check func(name string, path []int, typ reflect.Type, depth int)
	check = func(name string, path []int, typ reflect.Type, depth int) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			at := append(slices.Clone(path), i)
			fieldName := name + "." + f.Name
			elem := f.Type
			for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
				elem = elem.Elem()
			}
			apiStruct := elem.Kind() == reflect.Struct && strings.HasPrefix(elem.PkgPath(), "k8s.io/api") || elem == reflect.TypeFor[intstr.IntOrString]()
			if f.Type.Kind() != reflect.Struct {
				// A value here, or an element, or a pointer to a zero one.
				var spec v1.PodSpec
				setSomething(t, fieldAt(reflect.ValueOf(&spec).Elem(), at))
				got, err := spec.Marshal()
				if err != nil {
					t.Fatalf("%s: %v", fieldName, err)
				}
				if bytes.Equal(got, empty) {
					t.Errorf("a spec with %s set marshals as an empty one", fieldName)
				}
				fields++
			}
			if apiStruct && depth > 0 {
				check(fieldName, at, elem, depth-1)
			}
		}
	}
	check("PodSpec", nil, reflect.TypeFor[v1.PodSpec](), 3)
	if fields < 200 {
		t.Fatalf("only %d fields checked", fields)
	}
}

// fieldAt returns the field of v that path names, field index by field
// index, making the pointers and first slice elements on the way.
func fieldAt(v reflect.Value, path []int) reflect.Value {
	for k, i := range path {
		v = v.Field(i)
		if k == len(path)-1 {
			break
		}
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				}
				v = v.Elem()
				continue
			}
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
		}
	}
	return v
}
