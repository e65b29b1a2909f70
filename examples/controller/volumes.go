package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csiplugins "k8s.io/csi-translation-lib/plugins"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/names"
)

// defaultBindTimeout is VolumeBindingArgs' bindTimeoutSeconds when a
// configuration leaves it out.
const defaultBindTimeout = 600 * time.Second

// bindPollInterval is how often PreBind looks again whether the pod's
// claims are bound, as kube-scheduler's VolumeBinding does.
const bindPollInterval = time.Second

// volumeBinder does for the controller what kube-scheduler v1.37.2's
// VolumeBinding does after a pod's node is chosen: Reserve assumes the
// volumes the placement binds and the claims it selects a node for
// (assume), PreBind writes them and waits for the PV controller and the
// provisioners to bind the claims (bind), and Unreserve gives back what
// was assumed and not written (revert).
type volumeBinder struct {
	client kubernetes.Interface
	log    *slog.Logger
	// pvs and pvcs are the informers' PersistentVolumes and claims with
	// what was assumed laid over them; the frameworks list them.
	pvs  *assumeCache[*v1.PersistentVolume]
	pvcs *assumeCache[*v1.PersistentVolumeClaim]
	// What PreBind checks the claims against.
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	csiNodes storagelisters.CSINodeLister
	csi      csitrans.CSITranslator
}

func newVolumeBinder(client kubernetes.Interface, factory informers.SharedInformerFactory, log *slog.Logger) *volumeBinder {
	core := factory.Core().V1()
	return &volumeBinder{
		client:   client,
		log:      log,
		pvs:      newAssumeCache[*v1.PersistentVolume](schema.GroupResource{Resource: "persistentvolumes"}, core.PersistentVolumes().Informer()),
		pvcs:     newAssumeCache[*v1.PersistentVolumeClaim](schema.GroupResource{Resource: "persistentvolumeclaims"}, core.PersistentVolumeClaims().Informer()),
		pods:     core.Pods().Lister(),
		nodes:    core.Nodes().Lister(),
		csiNodes: factory.Storage().V1().CSINodes().Lister(),
		csi:      csitrans.New(),
	}
}

// podVolumes is what VolumeBinding's PreBind writes for one placement.
// Its objects are replaced by what the API server returns as they are
// written.
type podVolumes struct {
	// bindings are PersistentVolumes, each with spec.claimRef naming
	// the claim it is to be bound to.
	bindings []*v1.PersistentVolume
	// provisions are claims annotated with the node to provision on.
	provisions []*v1.PersistentVolumeClaim
	// timeout bounds the wait for the claims to be bound.
	timeout time.Duration
}

// assume lays what res says VolumeBinding's Reserve assumes over the
// listers, as AssumePodVolumes does, and returns what PreBind has to
// write: nil when the pod's claims are all bound already. On error
// nothing is left assumed.
func (b *volumeBinder) assume(pod *v1.Pod, res *framework.Result, timeout time.Duration) (*podVolumes, error) {
	unbound := b.unboundClaims(pod)
	if len(unbound) == 0 {
		return nil, nil
	}
	// The writes replace the objects: res keeps the ones it returned.
	pv := &podVolumes{provisions: slices.Clone(filter.ProvisionedClaims(res)), timeout: timeout}
	for _, vol := range filter.Volumes(res) {
		if err := b.pvs.Assume(vol); err != nil {
			b.revert(pv)
			return nil, err
		}
		pv.bindings = append(pv.bindings, vol)
	}
	for i, claim := range filter.ProvisionedClaims(res) {
		if err := b.pvcs.Assume(claim); err != nil {
			pv.provisions = pv.provisions[:i]
			b.revert(pv)
			return nil, err
		}
	}
	// kubesched leaves out of res.Volumes a volume whose claimRef names
	// its claim already (the PV controller's binding half done), which
	// kube-scheduler has nothing to assume about but still writes and
	// waits for.
	for _, key := range unbound {
		if slices.ContainsFunc(pv.bindings, func(v *v1.PersistentVolume) bool { return claimRefKey(v) == key }) ||
			slices.ContainsFunc(pv.provisions, func(c *v1.PersistentVolumeClaim) bool { return objectKey(c) == key }) {
			continue
		}
		vol, err := b.volumeNaming(key)
		if err != nil {
			b.revert(pv)
			return nil, err
		}
		pv.bindings = append(pv.bindings, vol)
	}
	return pv, nil
}

// unboundClaims returns the namespace/name of each claim of pod's
// volumes that is not fully bound, as the listers show them: missing
// claims too, as kube-scheduler counts them.
func (b *volumeBinder) unboundClaims(pod *v1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var name string
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, vol)
		default:
			continue
		}
		key := pod.Namespace + "/" + name
		if claim, err := b.pvcs.Get(key); err != nil || !fullyBound(claim) {
			out = append(out, key)
		}
	}
	return out
}

// volumeNaming returns the volume whose claimRef names the claim called
// key (namespace/name) with its UID: the one VolumeBinding matched to it,
// since it prefers a volume bound to the claim beforehand.
func (b *volumeBinder) volumeNaming(key string) (*v1.PersistentVolume, error) {
	claim, err := b.pvcs.Get(key)
	if err != nil {
		return nil, err
	}
	vols, err := b.pvs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var found *v1.PersistentVolume
	for _, v := range vols {
		if ref := v.Spec.ClaimRef; ref != nil && ref.Namespace == claim.Namespace && ref.Name == claim.Name && ref.UID == claim.UID &&
			(found == nil || v.Name < found.Name) {
			found = v
		}
	}
	if found == nil {
		return nil, fmt.Errorf("PersistentVolumeClaim %q is unbound, and the placement neither binds a volume to it nor provisions one", key)
	}
	return found, nil
}

// revert drops what assume laid over the listers and was not written
// since, as Unreserve does. It may be called more than once.
func (b *volumeBinder) revert(pv *podVolumes) {
	if pv == nil {
		return
	}
	for _, vol := range pv.bindings {
		b.pvs.Restore(vol)
	}
	for _, claim := range pv.provisions {
		b.pvcs.Restore(claim)
	}
}

// bind is VolumeBinding's PreBind: it writes each volume's claimRef,
// then each claim's selected node, and waits, looking every second,
// until the PV controller and the provisioners have bound all of them,
// at most pv.timeout. Whatever is not written is no longer assumed when
// it returns an error.
func (b *volumeBinder) bind(ctx context.Context, pod *v1.Pod, pv *podVolumes) error {
	if err := b.write(ctx, pv); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, bindPollInterval, pv.timeout, false, func(context.Context) (bool, error) {
		return b.bound(pod, pv)
	})
	if err != nil {
		return fmt.Errorf("binding volumes: %w", err)
	}
	return nil
}

// write updates the volumes, then the claims, through the API, each
// replaced in pv by what the API server returns. The PV controller
// takes it from there; a write that fails is not undone.
func (b *volumeBinder) write(ctx context.Context, pv *podVolumes) error {
	pvs, pvcs := 0, 0
	defer func() {
		b.revert(&podVolumes{bindings: pv.bindings[pvs:], provisions: pv.provisions[pvcs:]})
	}()
	for ; pvs < len(pv.bindings); pvs++ {
		vol, err := b.client.CoreV1().PersistentVolumes().Update(ctx, pv.bindings[pvs], metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		b.log.Debug("updated a PersistentVolume's claimRef, waiting for the claim to be bound", "pv", vol.Name, "pvc", claimRefKey(vol))
		pv.bindings[pvs] = vol
	}
	for ; pvcs < len(pv.provisions); pvcs++ {
		claim := pv.provisions[pvcs]
		claim, err := b.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		pv.provisions[pvcs] = claim
	}
	return nil
}

// bound reports whether every claim pv writes is bound, as the informers
// show the cluster, and fails when something undid the work: the pod
// deleted, a volume's claimRef cleared or its node affinity no longer
// matching, a provisioner giving up (it removes the selected node).
func (b *volumeBinder) bound(pod *v1.Pod, pv *podVolumes) (bool, error) {
	node, err := b.nodes.Get(pod.Spec.NodeName)
	if err != nil {
		return false, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err)
	}
	csiNode, err := b.csiNodes.Get(node.Name)
	if err != nil {
		csiNode = nil // a node without a CSINode migrated no plugin
	}
	if _, err := b.pods.Pods(pod.Namespace).Get(pod.Name); apierrors.IsNotFound(err) {
		return false, fmt.Errorf("pod does not exist any more: %w", err)
	}
	for _, want := range pv.bindings {
		vol, err := b.pvs.informerObject(want.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		claim, err := b.pvcs.informerObject(claimRefKey(want))
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		if olderThan(vol, want) {
			return false, nil // the informer has not seen our write yet
		}
		if vol, err = b.translate(vol, csiNode); err != nil {
			return false, fmt.Errorf("failed to translate pv to csi: %w", err)
		}
		if err := volume.CheckNodeAffinity(vol, node.Labels); err != nil {
			return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", vol.Name, node.Name, err)
		}
		if vol.Spec.ClaimRef == nil || vol.Spec.ClaimRef.UID == "" {
			return false, fmt.Errorf("ClaimRef got reset for pv %q", vol.Name)
		}
		if !fullyBound(claim) {
			return false, nil
		}
	}
	for _, want := range pv.provisions {
		claim, err := b.pvcs.informerObject(objectKey(want))
		if err != nil {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", err)
		}
		if olderThan(claim, want) {
			return false, nil
		}
		if claim.Annotations == nil {
			return false, fmt.Errorf("selectedNode annotation reset for PVC %q", claim.Name)
		}
		if claim.Annotations[volume.AnnSelectedNode] != pod.Spec.NodeName {
			return false, fmt.Errorf("provisioning failed for PVC %q", claim.Name)
		}
		if claim.Spec.VolumeName != "" {
			vol, err := b.pvs.informerObject(claim.Spec.VolumeName)
			if apierrors.IsNotFound(err) {
				return false, nil // the volume is on its way, or the claim will be unbound
			}
			if err != nil {
				return false, fmt.Errorf("failed to get pv %q from cache: %w", claim.Spec.VolumeName, err)
			}
			if vol, err = b.translate(vol, csiNode); err != nil {
				return false, err
			}
			if err := volume.CheckNodeAffinity(vol, node.Labels); err != nil {
				return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", vol.Name, node.Name, err)
			}
		}
		if !fullyBound(claim) {
			return false, nil
		}
	}
	b.log.Debug("the pod's claims are bound", "pod", key(pod))
	return true, nil
}

// migratedPlugins are the in-tree volume plugins whose volumes
// kube-scheduler v1.37.2 reads as their CSI driver's on a node whose
// CSINode says the driver took them over.
var migratedPlugins = []string{
	csiplugins.AWSEBSInTreePluginName,
	csiplugins.GCEPDInTreePluginName,
	csiplugins.AzureDiskInTreePluginName,
	csiplugins.CinderInTreePluginName,
	csiplugins.PortworxVolumePluginName,
}

// translate returns vol as its CSI driver's volume when the node's
// CSINode lists its in-tree plugin as migrated, vol itself otherwise:
// the node affinity to check is then the CSI volume's.
func (b *volumeBinder) translate(vol *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	if csiNode == nil || !b.csi.IsPVMigratable(vol) {
		return vol, nil
	}
	plugin, err := b.csi.GetInTreePluginNameFromSpec(vol, nil)
	if err != nil {
		return nil, fmt.Errorf("could not get plugin name from pv: %v", err)
	}
	if !slices.Contains(migratedPlugins, plugin) ||
		!slices.Contains(strings.Split(csiNode.Annotations[v1.MigratedPluginsAnnotationKey], ","), plugin) {
		return vol, nil
	}
	translated, err := b.csi.TranslateInTreePVToCSI(logr.FromSlogHandler(b.log.Handler()), vol)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return translated, nil
}

// fullyBound reports whether the PV controller has finished binding
// claim.
func fullyBound(claim *v1.PersistentVolumeClaim) bool {
	return claim.Spec.VolumeName != "" && metav1.HasAnnotation(claim.ObjectMeta, volume.AnnBindCompleted)
}

// olderThan reports whether the informer's obj predates written, the
// version a write returned. Versions are compared as the API server's
// integers; one that is not (never from an API server) compares as 0.
func olderThan(obj, written metav1.Object) bool {
	return resourceVersion(written) > resourceVersion(obj)
}

func resourceVersion(obj metav1.Object) uint64 {
	v, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// claimRefKey is the namespace/name of the claim vol's claimRef names.
func claimRefKey(vol *v1.PersistentVolume) string {
	if vol.Spec.ClaimRef == nil {
		return ""
	}
	return vol.Spec.ClaimRef.Namespace + "/" + vol.Spec.ClaimRef.Name
}

// bindTimeouts returns, for each profile that binds volumes (its
// VolumeBinding reserves), how long PreBind waits for the claims: the
// profile's VolumeBindingArgs bindTimeoutSeconds in sc, 600 seconds
// without.
func bindTimeouts(profiles map[string]*framework.Framework, sc *configv1.KubeSchedulerConfiguration) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, fw := range profiles {
		if !slices.ContainsFunc(fw.Plugins(), func(p framework.PluginInfo) bool {
			return p.Name == names.VolumeBinding && slices.Contains(p.Points, framework.Reserve)
		}) {
			continue
		}
		out[name] = defaultBindTimeout
		if sc == nil {
			continue
		}
		for _, p := range sc.Profiles {
			if p.SchedulerName == nil || *p.SchedulerName != name {
				continue
			}
			for _, pc := range p.PluginConfig {
				if args, ok := pc.Args.Object.(*configv1.VolumeBindingArgs); ok && pc.Name == names.VolumeBinding && args.BindTimeoutSeconds != nil {
					out[name] = time.Duration(*args.BindTimeoutSeconds) * time.Second
				}
			}
		}
	}
	return out
}
