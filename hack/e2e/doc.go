// Package e2e holds kubesched's end-to-end tests against a real control
// plane: etcd, kube-apiserver and kube-scheduler built from the module
// proxy at the versions this module's go.mod pins (etcd v3.7.0,
// Kubernetes v1.37.2). It is a module of its own so that neither
// kubesched nor its users ever depend on k8s.io/kubernetes.
package e2e
