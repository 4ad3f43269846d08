package printersim

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestUIControlsCrossSite: with a token required and a logged-in browser, no control of the
// page can be worked from another site: a form or script posting from it (its Origin, or
// "null" from a sandboxed frame) is refused with the session cookie attached, and a GET of a
// control's URL changes nothing.
func TestUIControlsCrossSite(t *testing.T) {
	const token = "csrf-token"
	s := startSim(t, WithUI(), WithToken(token))
	sim := s.srv.Sim
	noRedirect := &http.Client{Transport: s.client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(s.srv.URL+"/ui/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 1 {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Cookies())
	}
	cookie := resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	controls := []struct{ path, contentType, body string }{
		{"/ui/printers/line1/trigger", "", ""},
		{"/ui/line", "text/plain", `{"running": true}`},
		{"/ui/faults", "text/plain", `{"kind": "503"}`},
		{"/ui/faults", "application/x-www-form-urlencoded", `{"kind":"delay","delay":"1m"}=`},
		{"/ui/logout", "application/x-www-form-urlencoded", ""},
	}
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1"} {
		for _, c := range controls {
			code, body := s.do("POST", c.path, c.contentType, []byte(c.body), "Cookie", cookie, "Origin", origin)
			if code != http.StatusForbidden {
				t.Errorf("POST %s from %s with the session: %d %s, want 403", c.path, origin, code, body)
			}
		}
	}
	for _, c := range controls {
		if code, _ := s.do("GET", c.path+"?running=true&kind=503", "", nil, "Cookie", cookie); code < 400 {
			t.Errorf("GET %s with the session: %d", c.path, code)
		}
	}
	if running, _ := sim.Line(); running {
		t.Error("the line was started from another site")
	}
	if n := sim.Requests("POST", triggerRoute); n != 0 {
		t.Errorf("%d triggers from another site", n)
	}
	// The session is still open (logout was refused) and no fault waits: the page's own
	// trigger, from the page's origin, gets the API's answer (409: no job selected).
	code, body := s.do("POST", "/ui/printers/line1/trigger", "", nil, "Cookie", cookie, "Origin", s.srv.URL)
	if code != http.StatusConflict || !strings.Contains(string(body), "no job selected") {
		t.Errorf("the page's own trigger after the attempts: %d %s", code, body)
	}
}
