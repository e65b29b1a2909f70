package nodeinfo

import v1 "k8s.io/api/core/v1"

// DefaultBindAllHostIP is the host IP a port binds to when none is given;
// it conflicts with the same protocol and port on every IP.
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is one (protocol, port) pair bound on a host IP.
type ProtocolPort struct {
	// Protocol is "TCP", "UDP" or "SCTP"; TCP when a container port
	// leaves it empty.
	Protocol string
	// Port is the host port, always positive.
	Port int32
}

// HostPortInfo records the host ports in use on a node, by host IP.
type HostPortInfo map[string]map[ProtocolPort]struct{}

// normalize fills in the defaults the API server would: an empty IP binds
// all addresses and an empty protocol is TCP.
func normalize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return ip, protocol
}

// Add marks a port used. Ports <= 0 are not host ports and are ignored.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = normalize(ip, protocol)
	m, ok := h[ip]
	if !ok {
		m = make(map[ProtocolPort]struct{}, 1)
		h[ip] = m
	}
	m[ProtocolPort{Protocol: protocol, Port: port}] = struct{}{}
}

// Remove releases a port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = normalize(ip, protocol)
	if m, ok := h[ip]; ok {
		delete(m, ProtocolPort{Protocol: protocol, Port: port})
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// Len returns the number of (ip, protocol, port) entries.
func (h HostPortInfo) Len() int {
	n := 0
	for _, m := range h {
		n += len(m)
	}
	return n
}

// CheckConflict reports whether binding (ip, protocol, port) would clash
// with a port in use: the same protocol and port on the same IP, or on
// 0.0.0.0 on either side.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = normalize(ip, protocol)
	pp := ProtocolPort{Protocol: protocol, Port: port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range [2]string{DefaultBindAllHostIP, ip} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

// HostPorts returns the host ports a pod binds: those of its regular
// containers and of restartable (sidecar) init containers, which run for
// the pod's whole life. Ordinary init containers have exited before the pod
// runs and hold no ports. A nil pod has none.
func HostPorts(pod *v1.Pod) []v1.ContainerPort {
	var ports []v1.ContainerPort
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		ports = appendHostPorts(ports, c.Ports)
	}
	for i := range pod.Spec.Containers {
		ports = appendHostPorts(ports, pod.Spec.Containers[i].Ports)
	}
	return ports
}

func appendHostPorts(dst, ports []v1.ContainerPort) []v1.ContainerPort {
	for _, p := range ports {
		if p.HostPort > 0 {
			dst = append(dst, p)
		}
	}
	return dst
}
