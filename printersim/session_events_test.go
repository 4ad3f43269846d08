package printersim

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestUILogoutEndsEvents: a page's event stream opened with a session ends when the session is
// logged out (from another tab), so a logged-out page is sent no more prints; a stream opened
// with the token is not affected.
func TestUILogoutEndsEvents(t *testing.T) {
	const token = "logout-token"
	s := startSim(t, WithUI(), WithToken(token))
	noRedirect := &http.Client{Transport: s.client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(s.srv.URL+"/ui/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 1 {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	cookie := resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	withSession := openEvents(t, s, "Cookie", cookie)
	withToken := openEvents(t, s, "Authorization", "Bearer "+token)
	if code, _ := s.do("POST", "/ui/logout", "", nil, "Cookie", cookie); code != http.StatusSeeOther && code != http.StatusOK {
		t.Fatalf("logout: %d", code)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, withSession.rd)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the session's stream ended with %v, want its end", err)
		}
	case <-time.After(5 * time.Second):
		withSession.resp.Body.Close()
		<-ended
		t.Fatal("the stream of a logged-out session still runs after 5 s")
	}
	// The token's stream still gets prints.
	_, _ = s.srv.Sim.PressTrigger("line1")
	if _, e := withToken.nextPrint(); e.N != 1 {
		t.Errorf("the token's stream after the logout: %+v", e)
	}
}
