package hub

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// checkListen validates a listen address and reports its host. Unless
// allowRemote, the host must be "localhost" or a loopback IP literal; an
// empty host (every interface) and any other name or address is refused.
func checkListen(listen string, allowRemote bool) (host string, err error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %v", listen, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return "", fmt.Errorf("listen address %q: bad port: %v", listen, err)
	}
	if allowRemote || isLoopback(host) {
		return host, nil
	}
	return "", fmt.Errorf("refusing to listen on %q: not a loopback address; "+
		"the hub is a development host for one machine (use 127.0.0.1, [::1] or localhost, "+
		"or pass --allow-remote to expose it deliberately)", listen)
}

// isLoopback reports whether host is "localhost" or a loopback IP literal.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

// deriveOrigin is the https origin clients reach the hub at: the listen host
// as written (localhost stays localhost), or 127.0.0.1 when listening on
// every interface, with the bound port.
func deriveOrigin(listenHost string, bound net.Addr) string {
	port := "443"
	if tcp, ok := bound.(*net.TCPAddr); ok {
		port = fmt.Sprint(tcp.Port)
	}
	host := listenHost
	if addr, err := netip.ParseAddr(host); host == "" || (err == nil && addr.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "https://" + net.JoinHostPort(host, port)
}
