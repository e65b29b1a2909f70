package framework

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/fwk"
)

// WithListers gives the framework's plugins the cluster objects they read
// (see [fwk.Listers]), typically a controller's informer listers.
func WithListers(l fwk.Listers) Option {
	return func(c *config) error {
		c.listers = l
		return nil
	}
}

// WithObjects gives the framework's plugins these objects as a fixed,
// in-memory cluster (see [fwk.NewListers]). The objects must not be modified
// afterwards.
func WithObjects(objs ...runtime.Object) Option {
	return func(c *config) error {
		l, err := fwk.NewListers(objs...)
		if err != nil {
			return fmt.Errorf("WithObjects: %w", err)
		}
		c.listers = l
		return nil
	}
}
