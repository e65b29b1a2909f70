package extender_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/extender"
)

func managed(names ...string) []configv1.ExtenderManagedResource {
	out := make([]configv1.ExtenderManagedResource, len(names))
	for i, n := range names {
		out[i] = configv1.ExtenderManagedResource{Name: n, IgnoredByScheduler: i%2 == 0}
	}
	return out
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := configv1.Extender{URLPrefix: "http://127.0.0.1:8888", FilterVerb: "filter", PrioritizeVerb: "prioritize", Weight: 1}
	with := func(change func(*configv1.Extender)) configv1.Extender {
		c := ok
		change(&c)
		return c
	}
	tests := []struct {
		name string
		cfgs []configv1.Extender
		want []string // substrings of the error; none for valid
	}{
		{"the seed's configuration is valid", []configv1.Extender{ok}, nil},
		{"an extender that does not prioritize needs no weight", []configv1.Extender{with(func(c *configv1.Extender) { c.PrioritizeVerb, c.Weight = "", 0 })}, nil},
		{"a prioritizer needs a positive weight",
			[]configv1.Extender{with(func(c *configv1.Extender) { c.Weight = 0 })},
			[]string{"extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"}},
		{"urlPrefix must be an http URL with a host",
			[]configv1.Extender{with(func(c *configv1.Extender) { c.URLPrefix = "localhost:8888" })},
			[]string{`extenders[0].urlPrefix: Invalid value: "localhost:8888": must be an http or https URL with a host`}},
		{"httpTimeout may not be negative",
			[]configv1.Extender{with(func(c *configv1.Extender) { c.HTTPTimeout = metav1.Duration{Duration: -time.Second} })},
			[]string{`extenders[0].httpTimeout: Invalid value: "-1s": must not be negative`}},
		{"managed resources must be extended resources",
			[]configv1.Extender{with(func(c *configv1.Extender) { c.ManagedResources = managed("cpu", "kubernetes.io/foo", "bad name!") })},
			[]string{
				`extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name`,
				`extenders[0].managedResources[1].name: Invalid value: "kubernetes.io/foo": is an invalid extended resource name`,
				`extenders[0].managedResources[2].name: Invalid value: "bad name!": name part must consist of alphanumeric characters`,
			}},
		{"a resource may be managed once across all extenders",
			[]configv1.Extender{
				with(func(c *configv1.Extender) { c.ManagedResources = managed("example.com/gpu") }),
				with(func(c *configv1.Extender) { c.ManagedResources = managed("example.com/gpu") }),
			},
			[]string{`extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": duplicate extender managed resource name`}},
		{"only one extender may bind",
			[]configv1.Extender{with(func(c *configv1.Extender) { c.BindVerb = "bind" }), with(func(c *configv1.Extender) { c.BindVerb = "bind" })},
			[]string{`extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := extender.Validate(tc.cfgs...)
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted it; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestNewValidatesItsOneExtender(t *testing.T) {
	t.Parallel()
	_, err := extender.New(configv1.Extender{URLPrefix: "http://x", PrioritizeVerb: "p"})
	if want := "invalid extender configuration: extender.weight: Invalid value: 0: must have a positive weight applied to it"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestIgnoredResourcesAreThoseIgnoredByScheduler(t *testing.T) {
	t.Parallel()
	got := extender.IgnoredResources(
		configv1.Extender{ManagedResources: managed("a.com/x", "a.com/y", "a.com/z")},
		configv1.Extender{ManagedResources: managed("b.com/x")},
	)
	if strings.Join(got, " ") != "a.com/x a.com/z b.com/x" {
		t.Errorf("IgnoredResources = %v", got)
	}
}
