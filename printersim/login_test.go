package printersim

import (
	"net/http"
	"strings"
	"testing"
)

// TestUILoginFormNotFramed: the login form, like the page, may not be framed by another site
// and posts only to the simulator.
func TestUILoginFormNotFramed(t *testing.T) {
	s := startSim(t, WithUI(), WithToken("framed-token"))
	for _, r := range []struct{ method, path, body string }{{"GET", "/", ""}, {"POST", "/ui/login", "token=wrong"}} {
		req, _ := http.NewRequest(r.method, s.srv.URL+r.path, strings.NewReader(r.body))
		if r.body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "form-action 'self'") {
			t.Errorf("%s %s: %d, Content-Security-Policy %q", r.method, r.path, resp.StatusCode, csp)
		}
	}
}
