package labelprinter

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBaseURLVersion: a base URL naming another API version is refused before anything is
// sent, with the version in the error; /api/v3 is appended only when it is absent.
func TestBaseURLVersion(t *testing.T) {
	for _, in := range []string{"http://h/api/v2", "http://h/api/v2/", "http://h/x/api/v4", "http://h/API/V1", "http://h/api/v3.1", "http://h/api/v30"} {
		_, err := NewClient(in)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%q accepted (%v)", in, err)
			continue
		}
		v := in[strings.LastIndex(strings.TrimRight(strings.ToLower(in), "/"), "/v")+1:]
		if !strings.Contains(strings.ToLower(err.Error()), strings.TrimRight(strings.ToLower(v), "/")) {
			t.Errorf("%q: error does not name the version %s: %v", in, v, err)
		}
	}
	for in, want := range map[string]string{
		"http://h/api/v3":          "http://h/api/v3",
		"http://h/API/V3/":         "http://h/API/V3",
		"http://h/api":             "http://h/api/api/v3",
		"http://h/api/version":     "http://h/api/version/api/v3",
		"http://h/v2":              "http://h/v2/api/v3",
		"http://h/printer7":        "http://h/printer7/api/v3",
		"http://h/printer7/api/v3": "http://h/printer7/api/v3",
	} {
		c, err := NewClient(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if c.BaseURL() != want {
			t.Errorf("%q: BaseURL %q, want %q", in, c.BaseURL(), want)
		}
	}
}

// TestBaseURLHostThatCannotBeRequested: a host url.Parse accepts but cannot give back (an
// IPv6 zone holding a byte that is not UTF-8) is refused by NewClient, not by every call.
func TestBaseURLHostThatCannotBeRequested(t *testing.T) {
	for _, in := range []string{"http://[::%25\xbf]", "http://[::1%25\xc3\xbc]/"} {
		if _, err := NewClient(in); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%q accepted (%v)", in, err)
		}
	}
}

// TestErrorsNameRequestedPath: behind a base URL with a path, APIError, DecodeError and
// TransportError name the path that was requested, prefix included, the one the server saw.
func TestErrorsNameRequestedPath(t *testing.T) {
	seen := make(chan string, 16)
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.EscapedPath()
		switch {
		case strings.HasSuffix(r.URL.Path, "/printCounters"):
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"no printer"}`)
		case strings.HasSuffix(r.URL.Path, "/status"):
			io.WriteString(w, `not json`)
		default:
			rtReset(w)
		}
	})
	c, _ := rtClient(t, srv.URL+"/printer7", WithRetry(RetryPolicy{MaxAttempts: 1}))
	ctx := t.Context()

	_, err := c.Printers.Counters(ctx, "line 1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("counters: %v", err)
	}
	if got := <-seen; apiErr.Path != got || got != "/printer7/api/v3/printers/line%201/printCounters" || !strings.Contains(err.Error(), got) {
		t.Errorf("APIError names %q (%v), the server saw %q", apiErr.Path, err, got)
	}

	_, err = c.Printers.Status(ctx)
	var decErr *DecodeError
	if !errors.As(err, &decErr) {
		t.Fatalf("status: %v", err)
	}
	if got := <-seen; decErr.Path != got || !strings.HasPrefix(got, "/printer7/api/v3/") {
		t.Errorf("DecodeError names %q, the server saw %q", decErr.Path, got)
	}

	_, err = c.Labels.Get(ctx, "L")
	var trErr *TransportError
	if !errors.As(err, &trErr) {
		t.Fatalf("labels: %v", err)
	}
	if got := <-seen; trErr.Path != got || got != "/printer7/api/v3/labels/L" || !strings.Contains(err.Error(), got) {
		t.Errorf("TransportError names %q (%v), the server saw %q", trErr.Path, err, got)
	}
}
