package main

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
)

// servedVerbs are the verbs the demo answers, by extender field.
var servedVerbs = map[string][]string{
	"filterVerb":     {verbFilter, verbFilterOnlyOne},
	"prioritizeVerb": {verbPrioritize},
	"bindVerb":       {verbBind},
	"preemptVerb":    nil,
}

// checkConfig reads data, the KubeSchedulerConfiguration kube-scheduler
// runs with, as kube-scheduler reads it, and checks the extenders it
// lists at addr's port: kube-scheduler must call only verbs the demo
// serves, at the root of its URL, and send whole nodes (the demo has no
// node cache). It returns the profiles' scheduler names: kube-scheduler
// calls its extenders for the pods of every profile.
func checkConfig(data []byte, addr string) ([]string, error) {
	cfg, err := kubesched.LoadConfig(data)
	if err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-addr %q: %w", addr, err)
	}
	found := false
	for i, e := range cfg.Extenders {
		u, err := url.Parse(e.URLPrefix)
		if err != nil || extenderPort(u) != port {
			continue
		}
		found = true
		if err := checkExtender(e, u); err != nil {
			return nil, fmt.Errorf("extenders[%d] (%s): %w", i, e.URLPrefix, err)
		}
	}
	if !found {
		return nil, fmt.Errorf("no extender in the configuration has a urlPrefix on port %s: kube-scheduler would never call the demo", port)
	}
	var profiles []string
	for _, p := range cfg.Profiles {
		profiles = append(profiles, *p.SchedulerName)
	}
	slices.Sort(profiles)
	return profiles, nil
}

// extenderPort is the port kube-scheduler calls u at.
func extenderPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// checkExtender checks one extender entry that calls the demo.
func checkExtender(e configv1.Extender, u *url.URL) error {
	if strings.Trim(u.Path, "/") != "" {
		return fmt.Errorf("the demo serves its verbs at the root, not under %q", u.Path)
	}
	if e.NodeCacheCapable {
		return fmt.Errorf("nodeCacheCapable: the demo has no node cache; set it to false so that kube-scheduler sends whole nodes")
	}
	for _, f := range []struct{ field, verb string }{
		{"filterVerb", e.FilterVerb}, {"prioritizeVerb", e.PrioritizeVerb}, {"bindVerb", e.BindVerb}, {"preemptVerb", e.PreemptVerb},
	} {
		served := servedVerbs[f.field]
		if f.verb == "" || slices.Contains(served, f.verb) {
			continue
		}
		if len(served) == 0 {
			return fmt.Errorf("%s %q: the demo serves no such verb; remove it", f.field, f.verb)
		}
		return fmt.Errorf("%s %q: the demo serves %q", f.field, f.verb, served)
	}
	return nil
}
