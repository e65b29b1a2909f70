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

// servedVerbs are the verbs the demo answers, by extender field; /bind
// only with -bind.
func servedVerbs(bind bool) map[string][]string {
	v := map[string][]string{
		"filterVerb":     {verbFilter, verbFilterOnlyOne},
		"prioritizeVerb": {verbPrioritize},
		"bindVerb":       nil,
		"preemptVerb":    nil,
	}
	if bind {
		v["bindVerb"] = []string{verbBind}
	}
	return v
}

// checkConfig reads data, the KubeSchedulerConfiguration kube-scheduler
// runs with, as kube-scheduler reads it, and checks the extenders it
// lists at addr's port: kube-scheduler must call only verbs the demo
// serves (/bind only if bind), at the root of its URL, and send whole
// nodes (the demo has no node cache). It returns the profiles' scheduler
// names: kube-scheduler calls its extenders for the pods of every
// profile.
func checkConfig(data []byte, addr string, bind bool) ([]string, error) {
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
		if err := checkExtender(e, u, servedVerbs(bind)); err != nil {
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

// checkExtender checks one extender entry that calls the demo, which
// serves the verbs served.
func checkExtender(e configv1.Extender, u *url.URL, served map[string][]string) error {
	if strings.Trim(u.Path, "/") != "" {
		return fmt.Errorf("the demo serves its verbs at the root, not under %q", u.Path)
	}
	if e.NodeCacheCapable {
		return fmt.Errorf("nodeCacheCapable: the demo has no node cache; set it to false so that kube-scheduler sends whole nodes")
	}
	for _, f := range []struct{ field, verb string }{
		{"filterVerb", e.FilterVerb}, {"prioritizeVerb", e.PrioritizeVerb}, {"bindVerb", e.BindVerb}, {"preemptVerb", e.PreemptVerb},
	} {
		verbs := served[f.field]
		switch {
		case f.verb == "" || slices.Contains(verbs, f.verb):
			continue
		case f.field == "bindVerb" && len(verbs) == 0:
			return fmt.Errorf("%s %q: the demo serves /%s only with -bind; add it, or remove bindVerb to let kube-scheduler bind", f.field, f.verb, verbBind)
		case len(verbs) == 0:
			return fmt.Errorf("%s %q: the demo serves no such verb; remove it", f.field, f.verb)
		}
		return fmt.Errorf("%s %q: the demo serves %q", f.field, f.verb, verbs)
	}
	return nil
}
