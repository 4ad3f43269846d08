package printersim

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loginAt posts the login form with tok to base through client, with extra headers, and
// returns the answer (not following its redirect) and its body.
func loginAt(t *testing.T, client *http.Client, base, tok string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/ui/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestSessionCookiePerPort: a browser (its cookie jar keeps a host's cookies for every port)
// logged in to two simulators on one host stays logged in to both, and neither is sent the
// other's session under its own name.
func TestSessionCookiePerPort(t *testing.T) {
	const token = "two-sims"
	a, b := startSim(t, WithUI(), WithToken(token)), startSim(t, WithUI(), WithToken(token))
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Transport: a.client.Transport, Jar: jar}
	defer browser.CloseIdleConnections()
	for _, s := range []*simT{a, b} {
		if resp, body := loginAt(t, browser, s.srv.URL, token); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("login at %s: %d %s", s.srv.URL, resp.StatusCode, body)
		}
	}
	for _, s := range []*simT{a, b} {
		resp, err := browser.Get(s.srv.URL + "/ui/printers")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s after logging in to both: %d, want 200", s.srv.URL, resp.StatusCode)
		}
		u, _ := url.Parse(s.srv.URL)
		if n := len(jar.Cookies(u)); n != 2 {
			t.Errorf("the browser holds %d cookies for %s, want one per simulator", n, u.Host)
		}
	}
}

// TestSessionCookieSecure: a page reached over TLS, directly or through a proxy named with
// WithTrustedProxies that says so in X-Forwarded-Proto, gets a Secure cookie named with the
// __Host- prefix; the same header from a proxy not named is not believed. A trusted proxy that
// rewrites Host has the page's controls judged against X-Forwarded-Host.
func TestSessionCookieSecure(t *testing.T) {
	const token = "secure-cookie"
	check := func(what string, resp *http.Response, secure bool) {
		t.Helper()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("%s: login %d %v", what, resp.StatusCode, resp.Cookies())
		}
		c := resp.Cookies()[0]
		if c.Secure != secure || strings.HasPrefix(c.Name, "__Host-") != secure || c.Path != "/" || c.Domain != "" {
			t.Errorf("%s: cookie %s Secure=%v Path=%q Domain=%q, want Secure=%v with __Host- as much", what, c.Name, c.Secure, c.Path, c.Domain, secure)
		}
	}

	direct := httptest.NewUnstartedServer(New(WithUI(), WithToken(token)))
	direct.StartTLS()
	defer direct.Close()
	tlsClient := direct.Client()
	resp, _ := loginAt(t, tlsClient, direct.URL, token)
	check("over TLS", resp, true)
	tlsClient.CloseIdleConnections()

	proxied := startSim(t, WithUI(), WithToken(token), WithTrustedProxies(netip.MustParsePrefix("127.0.0.0/8")))
	resp, _ = loginAt(t, proxied.client, proxied.srv.URL, token, "X-Forwarded-Proto", "https")
	check("through a trusted proxy over https", resp, true)
	resp, _ = loginAt(t, proxied.client, proxied.srv.URL, token, "X-Forwarded-Proto", "http")
	check("through a trusted proxy over http", resp, false)
	session := resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	code, body := proxied.do("POST", "/ui/printers/line1/trigger", "", nil, "Cookie", session, "Origin", "https://printers.example", "X-Forwarded-Host", "printers.example")
	if code != http.StatusConflict {
		t.Errorf("a control through a trusted proxy that rewrote Host: %d %s, want the trigger's 409", code, body)
	}

	untrusted := startSim(t, WithUI(), WithToken(token), WithTrustedProxies(netip.MustParsePrefix("192.0.2.1/32")))
	resp, _ = loginAt(t, untrusted.client, untrusted.srv.URL, token, "X-Forwarded-Proto", "https")
	check("X-Forwarded-Proto from an address not trusted", resp, false)
	session = resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	if code, _ := untrusted.do("POST", "/ui/printers/line1/trigger", "", nil, "Cookie", session, "Origin", "https://printers.example", "X-Forwarded-Host", "printers.example"); code != http.StatusForbidden {
		t.Errorf("X-Forwarded-Host from an address not trusted: %d, want 403", code)
	}
}

// TestLoginThrottled: after 10 wrong tokens in a minute from one client address, its next
// login, even with the right token, is answered 429 with Retry-After and a page saying when;
// another address (behind a trusted proxy, by X-Forwarded-For) still logs in; the header from a
// client that is not a trusted proxy does not make it another address.
func TestLoginThrottled(t *testing.T) {
	const token = "throttled"
	s := startSim(t, WithUI(), WithToken(token))
	for i := range loginFailLimit {
		if resp, body := loginAt(t, s.client, s.srv.URL, fmt.Sprint("guess", i), "X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong login %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	resp, body := loginAt(t, s.client, s.srv.URL, token, "X-Forwarded-For", "192.0.2.200")
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || err != nil || ra < 1 || ra > 60 || !strings.Contains(body, "try again in "+strconv.Itoa(ra)+" s") || len(resp.Cookies()) != 0 {
		t.Errorf("the 11th login in a minute: %d, Retry-After %q, cookies %v, %s", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Cookies(), body)
	}

	p := startSim(t, WithUI(), WithToken(token), WithTrustedProxies(netip.MustParsePrefix("127.0.0.1/32")))
	for i := range loginFailLimit + 1 {
		resp, _ := loginAt(t, p.client, p.srv.URL, "guess", "X-Forwarded-For", "203.0.113.9, 192.0.2.1")
		if want := map[bool]int{true: 401, false: 429}[i < loginFailLimit]; resp.StatusCode != want {
			t.Fatalf("login %d from 192.0.2.1 behind the proxy: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if resp, body := loginAt(t, p.client, p.srv.URL, token, "X-Forwarded-For", "192.0.2.1, 192.0.2.2"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the right token from another address behind the proxy: %d %s", resp.StatusCode, body)
	}
}

// TestLoginFailsBounded: wrong logins from more addresses than are remembered keep the record
// at its bound, and an address's wait ends a minute after its 10th failure.
func TestLoginFailsBounded(t *testing.T) {
	var l loginFails
	now := time.Unix(1e9, 0)
	for i := range loginFailAddrs + 500 {
		l.failed(fmt.Sprint("addr", i), now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := len(l.addrs); n != loginFailAddrs {
		t.Errorf("%d addresses remembered, want the bound %d", n, loginFailAddrs)
	}
	for i := range loginFailLimit {
		if d := l.wait("a", now); d != 0 {
			t.Fatalf("a waits %v after %d failures", d, i)
		}
		l.failed("a", now.Add(time.Duration(i)*time.Second))
	}
	if d := l.wait("a", now.Add(10*time.Second)); d != 50*time.Second {
		t.Errorf("after 10 failures in 9 s, a waits %v 10 s after the first, want 50s", d)
	}
	if d := l.wait("a", now.Add(time.Minute)); d != 0 {
		t.Errorf("a minute after the first failure a waits %v", d)
	}
}
