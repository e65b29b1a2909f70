package loader

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// kept are the kinds Read keeps in Nodes, Pods and Objects: nodes, pods
// and the objects fwk.NewListers accepts, each in the one API
// version its Go type is. The scheme knows these, workloads and the
// older versions Read converts to these, and nothing else, so that an
// object is kept exactly when the scheme recognizes its apiVersion and
// kind.
var kept = map[schema.GroupVersion][]runtime.Object{
	v1.SchemeGroupVersion: {
		&v1.Node{}, &v1.Pod{},
		&v1.Namespace{}, &v1.Service{}, &v1.ReplicationController{},
		&v1.PersistentVolumeClaim{}, &v1.PersistentVolume{},
	},
	appsv1.SchemeGroupVersion: {&appsv1.ReplicaSet{}, &appsv1.StatefulSet{}},
	storagev1.SchemeGroupVersion: {
		&storagev1.StorageClass{}, &storagev1.CSINode{}, &storagev1.CSIDriver{},
		&storagev1.CSIStorageCapacity{}, &storagev1.VolumeAttachment{},
	},
	resourceapi.SchemeGroupVersion: {
		&resourceapi.ResourceClaim{}, &resourceapi.ResourceSlice{}, &resourceapi.DeviceClass{},
		&resourceapi.DeviceTaintRule{},
	},
	policyv1.SchemeGroupVersion: {&policyv1.PodDisruptionBudget{}},
}

// workloads are the kinds Read keeps in Workloads: the controllers of
// pods that ExpandWorkloads expands and no plugin reads.
var workloads = map[schema.GroupVersion][]runtime.Object{
	appsv1.SchemeGroupVersion:      {&appsv1.Deployment{}, &appsv1.DaemonSet{}},
	batchv1.SchemeGroupVersion:     {&batchv1.Job{}},
	resourceapi.SchemeGroupVersion: {&resourceapi.ResourceClaimTemplate{}},
}

var (
	scheme = func() *runtime.Scheme {
		s := runtime.NewScheme()
		for _, kinds := range []map[schema.GroupVersion][]runtime.Object{kept, workloads, older} {
			for gv, types := range kinds {
				s.AddKnownTypes(gv, types...)
			}
		}
		return s
	}()
	// decoder neither converts nor defaults, and ignores unknown fields,
	// which a newer API server may write.
	decoder = serializer.NewCodecFactory(scheme).UniversalDeserializer()
)

// maxListDepth bounds how deeply Lists may nest in Lists' items: kubectl
// nests none, and each level is read whole, again.
const maxListDepth = 8

// errTooLarge is the error for an object over MaxDocumentSize.
var errTooLarge = fmt.Errorf("larger than MaxDocumentSize (%d MiB)", MaxDocumentSize>>20)

// header is what is read of an object before decoding it, if at all.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Items json.RawMessage `json:"items"`
}

// readHeader reads the header of the JSON object in data. Fields of the
// wrong type are left empty, for decoding to report if the object is kept.
func readHeader(data []byte) (header, error) {
	var h header
	if len(data) == 0 || data[0] != '{' {
		return h, fmt.Errorf("want an object, found %s", jsonType(data))
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(data, &h); err != nil && !errors.As(err, &typeErr) {
		return h, err
	}
	return h, nil
}

// jsonType says what the JSON value in data is, for errors.
func jsonType(data []byte) string {
	switch {
	case len(data) == 0:
		return "nothing"
	case data[0] == '{':
		return "an object"
	case data[0] == '[':
		return "a list"
	case string(data) == "null":
		return "null"
	}
	return "a scalar"
}

// describe is the " (Kind namespace/name)" of h in errors, as far as it is
// known; nothing for a List, which kubectl names nothing.
func (h *header) describe() string {
	if isList(h.Kind) {
		return ""
	}
	name := h.Metadata.Name
	if h.Metadata.Namespace != "" {
		name = h.Metadata.Namespace + "/" + name
	}
	s := strings.TrimSpace(h.Kind + " " + name)
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// groupVersionKind checks that h has an apiVersion and a kind.
func (h *header) groupVersionKind() (schema.GroupVersionKind, error) {
	if h.Kind == "" {
		return schema.GroupVersionKind{}, errors.New("missing kind")
	}
	if h.APIVersion == "" {
		return schema.GroupVersionKind{}, errors.New("missing apiVersion")
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gv.WithKind(h.Kind), nil
}

// isList says whether kind is a list's: List, as kubectl writes, or a
// typed list's such as PodList, as the API server writes.
func isList(kind string) bool {
	return strings.HasSuffix(kind, "List")
}

// isList says whether h is a list's: of a list's kind, with items (so
// that a kind that merely ends in "List" is not taken for one).
func (h *header) isList() bool {
	return isList(h.Kind) && h.Items != nil
}

// itemKind is the kind of a typed list's items, which the API server does
// not write in each; nothing for a List, whose items must say.
func itemKind(list schema.GroupVersionKind) schema.GroupVersionKind {
	if list.Kind == "List" {
		return schema.GroupVersionKind{}
	}
	return list.GroupVersion().WithKind(strings.TrimSuffix(list.Kind, "List"))
}

// withDefault fills in h's apiVersion and kind from def where missing.
func (h *header) withDefault(def schema.GroupVersionKind) {
	if def.Kind == "" {
		return
	}
	if h.APIVersion == "" {
		h.APIVersion = def.GroupVersion().String()
	}
	if h.Kind == "" {
		h.Kind = def.Kind
	}
}

// add reads the object in data, whose header is h, into c: kept,
// counted as skipped, or, for a List, its items, which depth Lists
// enclose. where names the object in errors.
func add(c *Cluster, data []byte, h header, where string, depth int) error {
	gvk, err := h.groupVersionKind()
	if err != nil {
		return fmt.Errorf("%s%s: %w", where, h.describe(), err)
	}
	if h.isList() {
		return addItems(c, h.Items, gvk, where, 0, 0, depth+1)
	}
	if !scheme.Recognizes(gvk) {
		c.skip(gvk)
		return nil
	}
	obj, _, err := decoder.Decode(data, &gvk, nil)
	if err != nil {
		return fmt.Errorf("%s%s: %w", where, h.describe(), err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	// Managed fields are most of a dump and no plugin reads them.
	obj.(metav1.Object).SetManagedFields(nil)
	if obj, err = convert(obj); err != nil {
		return fmt.Errorf("%s%s: %w", where, h.describe(), err)
	}
	if err := validate(obj); err != nil {
		return fmt.Errorf("%s%s: %w", where, h.describe(), err)
	}
	c.keep(obj, where)
	return nil
}

// addItems adds the items of a List of kind list, numbered from after+1,
// but the first skip, which are read already; depth Lists enclose them.
func addItems(c *Cluster, items json.RawMessage, list schema.GroupVersionKind, where string, after, skip, depth int) error {
	if len(items) == 0 || string(items) == "null" {
		return nil
	}
	if depth > maxListDepth {
		return fmt.Errorf("%s: Lists nested more than %d deep", where, maxListDepth)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(items, &raw); err != nil {
		return fmt.Errorf("%s: items: want a list, found %s", where, jsonType(items))
	}
	if skip > len(raw) {
		return fmt.Errorf("%s: items: %d, fewer than the %d read already", where, len(raw), skip)
	}
	def := itemKind(list)
	for i, data := range raw[skip:] {
		if err := addItem(c, data, fmt.Sprintf("%s: item %d", where, after+skip+i+1), def, depth); err != nil {
			return err
		}
	}
	return nil
}

// addItem adds an item of a List, which depth Lists enclose; def is the
// kind of a typed list's items.
func addItem(c *Cluster, data []byte, where string, def schema.GroupVersionKind, depth int) error {
	h, err := readHeader(data)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	h.withDefault(def)
	return add(c, data, h, where, depth)
}

// keep keeps obj, read at where.
func (c *Cluster) keep(obj runtime.Object, where string) {
	c.places = append(c.places, placed{obj: obj, where: where})
	switch o := obj.(type) {
	case *v1.Node:
		c.Nodes = append(c.Nodes, o)
	case *v1.Pod:
		c.Pods = append(c.Pods, o)
	case *appsv1.Deployment, *appsv1.DaemonSet, *batchv1.Job, *resourceapi.ResourceClaimTemplate:
		c.Workloads = append(c.Workloads, o)
	default:
		c.Objects = append(c.Objects, o)
	}
}

func (c *Cluster) skip(gvk schema.GroupVersionKind) {
	if c.Skipped == nil {
		c.Skipped = map[string]int{}
	}
	c.Skipped[gvk.String()]++
}

// document is a top-level object being read, whose items, if it is a
// List, arrive one at a time, so that a List as large as a cluster is
// never in memory whole. Whether it is a List is known only at its end
// (kubectl writes "kind" after "items"), so what its items hold waits in
// read until then.
type document struct {
	where string
	// def is the items' kind when the list's kind came before them, as
	// the API server writes typed lists.
	def schema.GroupVersionKind
	// n is the number of items seen.
	n    int
	read Cluster
	// rest are the items from the first without an apiVersion or kind
	// on (a typed list's, when its kind comes last), read once the list's
	// kind is known. restFrom is the number of the first.
	rest     [][]byte
	restFrom int
	// err is the first item's error, reported if the object is a List.
	err error
	// hasItems says that the document has items, read one at a time;
	// badItems, if set, is what they were instead of a list.
	hasItems bool
	badItems string
	// skip is the number of items of the envelope's that were read one
	// at a time already: the items of a YAML List read again with the
	// rest of it for an alias to an anchor in an earlier item.
	skip int
}

// item reads the next item, whose JSON data is not modified afterwards.
func (d *document) item(data []byte) {
	d.n++
	if d.err != nil {
		return
	}
	if len(d.rest) > 0 {
		d.rest = append(d.rest, data)
		return
	}
	where := fmt.Sprintf("%s: item %d", d.where, d.n)
	h, err := readHeader(data)
	if err != nil {
		d.err = fmt.Errorf("%s: %w", where, err)
		return
	}
	h.withDefault(d.def)
	if h.APIVersion == "" || h.Kind == "" {
		d.rest, d.restFrom = append(d.rest, data), d.n
		return
	}
	d.err = add(&d.read, data, h, where, 1)
}

// finish reads the document's other fields, in the JSON object envelope,
// and adds what the document holds to c.
func (d *document) finish(c *Cluster, envelope []byte) error {
	h, err := readHeader(envelope)
	if err != nil {
		return fmt.Errorf("%s: %w", d.where, err)
	}
	gvk, err := h.groupVersionKind()
	if err != nil {
		return fmt.Errorf("%s%s: %w", d.where, h.describe(), err)
	}
	if !isList(gvk.Kind) || !d.hasItems && h.Items == nil {
		// Any items were a field of this object, which no kept kind has.
		return add(c, envelope, h, d.where, 0)
	}
	if d.err != nil {
		return d.err
	}
	if d.badItems != "" {
		return fmt.Errorf("%s: items: want a list, found %s", d.where, d.badItems)
	}
	for i, data := range d.rest {
		if err := addItem(&d.read, data, fmt.Sprintf("%s: item %d", d.where, d.restFrom+i), itemKind(gvk), 1); err != nil {
			return err
		}
	}
	if err := addItems(&d.read, h.Items, gvk, d.where, d.n-d.skip, d.skip, 1); err != nil {
		return err
	}
	c.Merge(&d.read)
	return nil
}
