package main

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzProbeRequest feeds /probe queries and scrape-timeout headers to the request checks and the
// default allow list. Whatever comes in: nothing panics; an accepted request has an http(s)
// target of at most maxTargetLen bytes with a host, no credentials, at most maxPrinters
// distinct, non-empty printer names that are valid UTF-8 without control characters, and the
// one module it named (the default module when it named none); an accepted timeout is between
// minBudget and maxTimeout; and an address the default list lets through is loopback or private.
func FuzzProbeRequest(f *testing.F) {
	for _, seed := range []struct{ query, timeout string }{
		{"target=http%3A%2F%2F192.168.1.50&printer=line1&printer=line2", "10"},
		{"target=10.0.0.7:8631", "0.5"},
		{"target=http%3A%2F%2F%5B%3A%3Affff%3A10.0.0.1%5D%3A80", "1e9"},
		{"target=https%3A%2F%2Fuser%3Apw%40printer.lan&printer=..", "-1"},
		{"target=http%3A%2F%2F169.254.169.254&printer=%FF", "NaN"},
		{"target=&target=x", ""},
		{"target=http%3A%2F%2F8.8.8.8%2Fapi%2Fv3&printer=a%00b", "Inf"},
		{"target=10.0.0.7&module=plant&debug=true", "2"},
		{"target=10.0.0.7&module=&module=x", "2"},
		{"target=10.0.0.7&module=pl%20ant%FF&debug=1", "0.1"},
	} {
		f.Add(seed.query, seed.timeout)
	}
	allow, err := parseAllowList(defaultAllowTargets, fakeResolver{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query, timeout string) {
		h := http.Header{}
		h.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
		if d, _, err := probeTimeout(h, defaultTimeout, defaultTimeoutOffset); err == nil && (d < minBudget || d > maxTimeout) {
			t.Fatalf("timeout %q gave %v", timeout, d)
		}
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		req, err := parseProbeRequest(q)
		if err != nil {
			return
		}
		u, err := url.Parse(req.target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			t.Fatalf("accepted target %q", req.target)
		}
		if len(q.Get("target")) > maxTargetLen {
			t.Fatalf("a target of %d bytes accepted", len(q.Get("target")))
		}
		switch mods := q["module"]; {
		case len(mods) > 1:
			t.Fatalf("modules %q accepted", mods)
		case len(mods) == 0 || mods[0] == "":
			if req.module != defaultModuleName {
				t.Fatalf("module %q without a module parameter", req.module)
			}
		case req.module != mods[0] || len(req.module) > maxModuleNameLen:
			t.Fatalf("module %q from %q", req.module, mods)
		}
		if req.debug && q.Get("debug") == "" {
			t.Fatal("debug without a debug parameter")
		}
		if u.Hostname() != req.host {
			t.Fatalf("host %q for target %q", req.host, req.target)
		}
		if len(req.printers) > maxPrinters {
			t.Fatalf("%d printers accepted", len(req.printers))
		}
		seen := map[string]bool{}
		for _, p := range req.printers {
			if p == "" || seen[p] || !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl) {
				t.Fatalf("printer %q accepted", p)
			}
			seen[p] = true
		}
		if allow.check(context.Background(), req.host) == nil {
			ip, err := netip.ParseAddr(req.host)
			if err != nil {
				t.Fatalf("host name %q allowed without resolving", req.host)
			}
			if ip = ip.Unmap(); !ip.IsLoopback() && !ip.IsPrivate() {
				t.Fatalf("default list allowed %s", ip)
			}
		}
	})
}
