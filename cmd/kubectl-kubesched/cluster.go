package main

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesched/kubesched/loader"
)

// listed is one kind the plugin lists, as kubectl get names it, with
// how to list it and keep its objects.
type listed struct {
	resource string
	list     func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error
	// optional kinds may be missing from an older cluster.
	optional bool
}

// kinds are exactly the kinds of kubesched's documented kubectl get line,
// in its order. rbac.yaml grants get and list on each, and nothing else.
var kinds = []listed{
	{resource: "nodes", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range l.Items {
			c.Nodes = append(c.Nodes, &l.Items[i])
		}
		return nil
	}},
	{resource: "pods", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range l.Items {
			c.Pods = append(c.Pods, &l.Items[i])
		}
		return nil
	}},
	{resource: "persistentvolumeclaims", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}},
	{resource: "persistentvolumes", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}},
	{resource: "storageclasses", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}},
	{resource: "csinodes", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}},
	{resource: "resourceslices", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}, optional: true},
	{resource: "deviceclasses", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}, optional: true},
	{resource: "resourceclaims", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.ResourceV1().ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}, optional: true},
	{resource: "devicetaintrules", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.ResourceV1().DeviceTaintRules().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}, optional: true},
	{resource: "poddisruptionbudgets", list: func(ctx context.Context, client kubernetes.Interface, c *loader.Cluster) error {
		l, err := client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		c.Objects = append(c.Objects, objects(l.Items)...)
		return nil
	}},
}

// objects are pointers to items, as runtime.Objects.
func objects[T any, PT interface {
	*T
	runtime.Object
}](items []T) []runtime.Object {
	out := make([]runtime.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}

// readCluster lists every kind of kinds through client. A kind an older
// cluster does not serve (DeviceTaintRules before v1.37, say) is left out
// with a note on stderr; any other error ends the read.
func readCluster(ctx context.Context, client kubernetes.Interface, stderr io.Writer) (*loader.Cluster, error) {
	c := &loader.Cluster{Skipped: map[string]int{}}
	for _, k := range kinds {
		err := k.list(ctx, client, c)
		switch {
		case err == nil:
		case k.optional && apierrors.IsNotFound(err):
			fmt.Fprintf(stderr, "kubesched: the cluster serves no %s; read without them\n", k.resource)
		default:
			return nil, fmt.Errorf("listing %s: %w", k.resource, err)
		}
	}
	return c, nil
}
