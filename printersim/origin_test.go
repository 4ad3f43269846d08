package printersim

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// hostDo sends a request naming host in its Host header (as a page whose name was rebound to
// the simulator's address would) and returns the status and body.
func (s *simT) hostDo(method, path, host, contentType, body string, header ...string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHostAllowList: a request naming a host other than a loopback name or address, the
// address it reached, or one given with WithAllowedHosts is answered 421 naming the flag,
// on the page and the API alike, and changes nothing; the others are served.
func TestHostAllowList(t *testing.T) {
	s := startSim(t, WithUI(), WithAllowedHosts("Printers.Example."))
	port := s.srv.URL[strings.LastIndexByte(s.srv.URL, ':')+1:]
	for _, host := range []string{"rebound.example:" + port, "rebound.example", "localhost.example:" + port, "10.0.0.1:" + port, "printers.example.org"} {
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/", ""},
			{"GET", "/ui/printers", ""},
			{"GET", "/api/v3/labels", ""},
			{"PUT", "/api/v3/labels/Rebound", `{"format":3,"width":10,"height":10,"objs":[]}`},
			{"POST", "/ui/line", `{"running":true}`},
		} {
			code, body := s.hostDo(r.method, r.path, host, "application/json", r.body)
			if code != http.StatusMisdirectedRequest || !strings.Contains(body, "--allowed-hosts") {
				t.Errorf("%s %s with Host %s: %d %s, want 421 naming --allowed-hosts", r.method, r.path, host, code, body)
			}
		}
	}
	if code, body := s.hostDo("GET", "/api/v3/labels/Rebound", "", "", ""); code != http.StatusNotFound {
		t.Errorf("a label PUT under a refused host was stored: %d %s", code, body)
	}
	if running, _ := s.srv.Sim.Line(); running {
		t.Error("the line was started under a refused host")
	}
	for _, host := range []string{"localhost:" + port, "LOCALHOST", "app.localhost:" + port, "127.0.0.1:" + port, "127.1.2.3", "[::1]:" + port, "printers.example:" + port, "printers.example"} {
		if code, body := s.hostDo("GET", "/api/v3/labels", host, "", ""); code != http.StatusOK {
			t.Errorf("GET /api/v3/labels with Host %s: %d %s, want 200", host, code, body)
		}
		if code, body := s.hostDo("GET", "/", host, "", ""); code != http.StatusOK {
			t.Errorf("GET / with Host %s: %d %s, want 200", host, code, body)
		}
	}
}

// TestAPICrossOriginRefused: a request that changes state and that a browser marks as sent
// by another origin's page (Sec-Fetch-Site, or Origin when that is absent) is refused 403
// whatever its body: JSON sent as text/plain (a request a page may send without asking), a
// form, or none; reads and the same requests from the page's own origin, or from clients
// that are not browsers, are served.
func TestAPICrossOriginRefused(t *testing.T) {
	s := startSim(t, WithUI())
	sim := s.srv.Sim
	const label = `{"format":3,"width":10,"height":10,"objs":[]}`
	s.want("PUT", "/api/v3/labels/Kept", "application/json", label, http.StatusNoContent)
	requests := []struct{ method, path, contentType, body string }{
		{"PUT", "/api/v3/labels/Planted", "text/plain", label},
		{"PUT", "/api/v3/labels/Planted", "application/x-www-form-urlencoded", label},
		{"DELETE", "/api/v3/labels/Kept", "", ""},
		{"POST", "/api/v3/printers/line1/printJob", "text/plain", `{"labelName":"Kept"}`},
		{"POST", "/api/v3/printers/line1/trigger", "", ""},
		{"POST", "/api/v3/printers/line1/abortPrint", "multipart/form-data; boundary=x", "--x--"},
		{"POST", "/ui/line", "text/plain", `{"running":true}`},
	}
	marks := [][]string{
		{"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"},
		{"Sec-Fetch-Site", "same-site", "Origin", "http://127.0.0.1:1"},
		{"Origin", "http://evil.example"},
		{"Origin", "http://localhost" + s.srv.URL[strings.LastIndexByte(s.srv.URL, ':'):]},
		{"Origin", "null"},
	}
	for _, m := range marks {
		for _, r := range requests {
			code, body := s.hostDo(r.method, r.path, "", r.contentType, r.body, m...)
			if code != http.StatusForbidden || !strings.Contains(body, "another site") {
				t.Errorf("%s %s (%s) marked %v: %d %s, want 403", r.method, r.path, r.contentType, m, code, body)
			}
		}
		if code, body := s.hostDo("GET", "/api/v3/labels/Kept", "", "", "", m...); code != http.StatusOK {
			t.Errorf("a read marked %v: %d %s", m, code, body)
		}
	}
	if code, _ := s.hostDo("GET", "/api/v3/labels/Planted", "", "", ""); code != http.StatusNotFound {
		t.Error("a label was planted from another origin")
	}
	if running, _ := sim.Line(); running {
		t.Error("the line was started from another origin")
	}
	if n := sim.Requests("POST", triggerRoute); n != 0 {
		t.Errorf("%d triggers from another origin reached the printer", n)
	}
	// The page's own origin, as a browser marks it, and a client that is no browser.
	origin := (&url.URL{Scheme: "http", Host: strings.TrimPrefix(s.srv.URL, "http://")}).String()
	for _, m := range [][]string{{"Sec-Fetch-Site", "same-origin", "Origin", "null"}, {"Origin", origin}, nil} {
		if code, body := s.hostDo("PUT", "/api/v3/labels/Own", "", "application/json", label, m...); code != http.StatusNoContent {
			t.Errorf("a PUT marked %v: %d %s, want 204", m, code, body)
		}
	}
}
