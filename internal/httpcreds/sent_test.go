package httpcreds

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	promconfig "github.com/prometheus/common/config"
)

// TestRecorderSeesWhatIsSent: the values a transport adds on its own are recorded as they
// reach the connection: an OAuth2 access token (no config field holds it), a Cookie given as a
// plain http_headers value, and the Proxy-Authorization of a proxy URL's user; over HTTP/1.1
// and HTTP/2.
func TestRecorderSeesWhatIsSent(t *testing.T) {
	const access = "access-TOKEN-from-the-token-endpoint"
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("http2=%v", h2), func(t *testing.T) {
			var sawProto string
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/token" {
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"access_token":"`+access+`","token_type":"Bearer","expires_in":3600}`)
					return
				}
				sawProto = r.Proto
			}))
			srv.EnableHTTP2 = h2
			srv.StartTLS()
			defer srv.Close()
			hc := promconfig.HTTPClientConfig{
				OAuth2:      &promconfig.OAuth2{ClientID: "id", ClientSecret: "client-secret", TokenURL: srv.URL + "/token"},
				HTTPHeaders: &promconfig.Headers{Headers: map[string]promconfig.Header{"Cookie": {Values: []string{`session="s3ss10n-value"; theme=dark`}}}},
				EnableHTTP2: h2,
			}
			hc.TLSConfig.InsecureSkipVerify = true
			hc.OAuth2.TLSConfig.InsecureSkipVerify = true
			c, creds, err := NewClient(hc, "test")
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			resp, err := c.Get(srv.URL + "/api/v3/status")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if h2 && sawProto != "HTTP/2.0" {
				t.Fatalf("the request went as %s", sawProto)
			}
			got := creds.Values()
			if slices.Contains(got, "dark") {
				t.Errorf("a short cookie value is listed: %q", got)
			}
			for _, want := range []string{"client-secret", "Bearer " + access, access, "s3ss10n-value"} {
				if !slices.Contains(got, want) {
					t.Errorf("%q not among the credentials %q", want, got)
				}
			}
		})
	}
}

// TestRecorderSeesProxyAuthorization: a plain HTTP proxy given as a URL with a user gets
// Proxy-Authorization, which the transport writes; the proxy answers itself.
func TestRecorderSeesProxyAuthorization(t *testing.T) {
	var got string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Proxy-Authorization")
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("plant", "proxy-PASSWORD")
	var hc promconfig.HTTPClientConfig
	hc.ProxyURL = promconfig.URL{URL: pu}
	c, creds, err := NewClient(hc, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	// The target is never dialled: the proxy answers.
	resp, err := c.Get("http://127.0.0.1:9/api/v3/status")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got == "" {
		t.Fatal("the proxy saw no Proxy-Authorization")
	}
	vals := creds.Values()
	for _, want := range []string{got, "proxy-PASSWORD"} {
		if !slices.Contains(vals, want) {
			t.Errorf("%q not among %q", want, vals)
		}
	}
}

// TestRecorderBounded: the Recorder keeps the most recent distinct values, at most maxSent,
// a value sent again counting as recent.
func TestRecorderBounded(t *testing.T) {
	var r Recorder
	r.wrote("Authorization", []string{"Token first-value"})
	for i := range maxSent * 2 {
		r.wrote("authorization", []string{fmt.Sprintf("tok-%03d", i)})
		r.wrote("Authorization", []string{"Token first-value"})
	}
	r.wrote("X-Other", []string{"not-a-credential"})
	got := r.Values()
	if len(got) != maxSent {
		t.Fatalf("%d values kept, want %d", len(got), maxSent)
	}
	if !slices.Contains(got, "Token first-value") || !slices.Contains(got, "first-value") || slices.Contains(got, "tok-000") || slices.Contains(got, "not-a-credential") {
		t.Errorf("kept %q", got)
	}
}
