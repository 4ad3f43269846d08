package printersim

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// This file holds who may ask the simulator anything: the Host a request names (against DNS
// rebinding), whether a browser marks it as sent from another origin (against a page on
// another site changing state), and which proxies are believed about the scheme and the client.

// WithAllowedHosts lets requests name these hosts (names or addresses, without a port) in their
// Host header, besides the loopback names and addresses, which are always allowed (localhost,
// names under .localhost, 127.0.0.0/8, ::1), and the address the request reached. A request
// naming any other host is answered 421, so that a page whose name an attacker rebinds to the
// simulator's address reads and changes nothing. The commands' flag is --allowed-hosts.
func WithAllowedHosts(hosts ...string) Option {
	return func(c *config) {
		for _, h := range hosts {
			if h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ".")); h != "" {
				c.allowedHosts = append(c.allowedHosts, h)
			}
		}
	}
}

// WithTrustedProxies names the reverse proxies (addresses or CIDR prefixes) whose
// X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-For the simulator believes: a page
// reached through one of them over https gets a Secure session cookie, its controls are
// judged against the host the browser asked for, and wrong logins are counted per client
// address behind it. From any other address those headers are ignored. The commands' flag is
// --trusted-proxy.
func WithTrustedProxies(proxies ...netip.Prefix) Option {
	return func(c *config) { c.trustedProxies = append(c.trustedProxies, proxies...) }
}

// hostAllowed reports whether r's Host names the simulator: a loopback name or address, a
// host given with WithAllowedHosts, or the address the connection reached. A rebinding
// attack needs a name the attacker controls, never one of these.
func (s *Simulator) hostAllowed(r *http.Request) bool {
	if r.Host == "" { // HTTP/1.0 without Host: no browser sends it
		return true
	}
	host := strings.ToLower(hostOnly(r.Host))
	host = strings.TrimSuffix(host, ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if ip.Unmap().IsLoopback() {
			return true
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ap, err := netip.ParseAddrPort(la.String()); err == nil && ap.Addr().Unmap() == ip.Unmap() {
				return true
			}
		}
	}
	for _, h := range s.cfg.allowedHosts {
		if h == host || strings.Trim(h, "[]") == strings.Trim(host, "[]") {
			return true
		}
	}
	return false
}

// hostOnly returns the host of a Host header, without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// crossOrigin reports whether a browser marks r as sent by a page of another origin. Browsers
// send Sec-Fetch-Site on every request, "same-origin" from the page itself (even for a form
// posted under the page's no-referrer policy, whose Origin is then "null"); a browser without
// it is judged by Origin, which must name the host the page was loaded from. Clients other
// than browsers send neither and are not cross-origin.
func (s *Simulator) crossOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site != "same-origin" && site != "none"
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err != nil || u.Host == "" || u.Host != s.requestHost(r)
}

// changesState reports whether a request of r's method may change something.
func changesState(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// fromTrustedProxy reports whether r came from a proxy named with WithTrustedProxies.
func (s *Simulator) fromTrustedProxy(r *http.Request) bool {
	if len(s.cfg.trustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range s.cfg.trustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// requestHost is the host:port the browser asked for: X-Forwarded-Host from a trusted proxy
// (which may rewrite Host), else Host.
func (s *Simulator) requestHost(r *http.Request) string {
	if s.fromTrustedProxy(r) {
		if h := lastForwarded(r.Header.Get("X-Forwarded-Host")); h != "" {
			return h
		}
	}
	return r.Host
}

// overTLS reports whether the browser reached the page over TLS: directly, or through a
// trusted proxy that says so in X-Forwarded-Proto.
func (s *Simulator) overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return s.fromTrustedProxy(r) && strings.EqualFold(lastForwarded(r.Header.Get("X-Forwarded-Proto")), "https")
}

// clientAddr is the address wrong logins are counted against: the last address a trusted
// proxy forwarded for, else the connection's.
func (s *Simulator) clientAddr(r *http.Request) string {
	if s.fromTrustedProxy(r) {
		if f := lastForwarded(r.Header.Get("X-Forwarded-For")); f != "" {
			if ip, err := netip.ParseAddr(f); err == nil {
				return ip.Unmap().String()
			}
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap().String()
	}
	return r.RemoteAddr
}

// lastForwarded is the last entry of a comma-separated X-Forwarded-* header: the one the
// trusted proxy itself added.
func lastForwarded(v string) string {
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// hostRefused is the answer to a request naming a host the simulator does not answer to.
const hostRefused = "this simulator does not answer to the host this request names; start it with --allowed-hosts (WithAllowedHosts) naming that host to reach it by that name"

// crossOriginRefused is the answer to a state-changing request a browser sent from another
// site's page.
const crossOriginRefused = "requests from another site's page may not change the simulator (the browser marked this one cross-origin)"
