package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
)

// defaultAllowTargets is the secure default of a module without credentials and without
// allowed_targets (and of --allow-targets): loopback and the private networks a plant's
// printers live on. Link-local (169.254/16, where cloud metadata services
// answer) and every public address are left out, so an exporter reachable by anyone cannot be
// made to call anything but the plant.
var defaultAllowTargets = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "::1/128", "fc00::/7"}

// resolver looks host names up; *net.Resolver is one, and tests give their own.
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// allowList decides which targets the exporter may call: an address inside one of its
// prefixes, a host name it lists, or a host name that resolves only to addresses inside its
// prefixes.
type allowList struct {
	prefixes []netip.Prefix
	names    map[string]bool // lower case, no trailing dot
	resolver resolver
}

// errNotAllowed marks a target outside the allow list; the probe answers 403 and sends nothing.
var errNotAllowed = errors.New("target is not in the module's allowed targets")

// parseAllowList reads the entries of allowed_targets or --allow-targets: CIDRs
// ("10.1.0.0/16"), single addresses ("10.1.2.3", "::1") and host names
// ("printer1.plant.example").
func parseAllowList(entries []string, r resolver) (*allowList, error) {
	a := &allowList{names: map[string]bool{}, resolver: r}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR", e)
			}
			a.prefixes = append(a.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			if ip.Zone() != "" {
				return nil, fmt.Errorf("%q has a zone; list the address without it", e)
			}
			ip = ip.Unmap()
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		name := normalizeHost(e)
		if !validHostName(name) {
			return nil, fmt.Errorf("%q is neither a CIDR, an address nor a host name", e)
		}
		a.names[name] = true
	}
	if len(a.prefixes) == 0 && len(a.names) == 0 {
		return nil, errors.New("lists nothing")
	}
	return a, nil
}

// normalizeHost lower-cases a host name and drops a trailing dot, so "Printer.Local." and
// "printer.local" are one name.
func normalizeHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// validHostName accepts the letters, digits, hyphens, underscores and dots host names are made of.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// containsAddr reports whether ip lies inside one of the prefixes. An IPv4 address written in
// IPv6 form (::ffff:10.0.0.1) is checked as IPv4.
func (a *allowList) containsAddr(ip netip.Addr) bool {
	if ip.Zone() != "" {
		// A zoned address is link-local by nature; no listed prefix carries a zone.
		return false
	}
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// allowedByName reports whether host is listed by name.
func (a *allowList) allowedByName(host string) bool { return a.names[normalizeHost(host)] }

// check returns nil when host (a URL's host name, without port or brackets) may be probed, and
// an error wrapping errNotAllowed when it may not. A host name that is not listed is resolved,
// bounded by ctx, and allowed only when every address it resolves to is allowed: a name that
// resolves to one private and one public address is refused.
func (a *allowList) check(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if a.containsAddr(ip) {
			return nil
		}
		return errNotAllowed
	}
	if a.allowedByName(host) {
		return nil
	}
	if !validHostName(normalizeHost(host)) {
		return errNotAllowed
	}
	if len(a.prefixes) == 0 {
		return errNotAllowed
	}
	addrs, err := a.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w: %s does not resolve", errNotAllowed, host)
	}
	if len(addrs) == 0 {
		return errNotAllowed
	}
	for _, ip := range addrs {
		if !a.containsAddr(ip) {
			return errNotAllowed
		}
	}
	return nil
}

// dialControl refuses, at connect time, an address outside the prefixes. The check before the
// probe resolved the name once; the dialer resolves it again, and a name whose answer changed in
// between (DNS rebinding) must not reach a public address through it.
func (a *allowList) dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read dial address", errNotAllowed)
	}
	if !a.containsAddr(ap.Addr()) {
		return errNotAllowed
	}
	return nil
}

// dialContext dials addr ("host:port") with the connect-time check, except for a host listed by
// name, which the operator allowed whatever it resolves to.
func (a *allowList) dialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	checked := *d
	checked.Control = a.dialControl
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err == nil && a.allowedByName(host) {
			return d.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
}

// String lists the allowed prefixes and names, for the index page.
func (a *allowList) String() string {
	parts := make([]string, 0, len(a.prefixes)+len(a.names))
	for _, p := range a.prefixes {
		parts = append(parts, p.String())
	}
	names := make([]string, 0, len(a.names))
	for n := range a.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(append(parts, names...), ", ")
}
