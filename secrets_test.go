package labelprinter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

const (
	canaryToken  = "CANARY-TOKEN-7f3a"
	canaryPass   = "CANARY-PW-91c2"
	canaryHeader = "CANARY-HDR-55e0"
)

var canaries = []string{canaryToken, canaryPass, canaryHeader}

// lockedBuffer collects log output from concurrent requests.
type lockedBuffer = testkit.SyncBuffer

// errorChain returns err and everything it wraps, through both Unwrap forms.
func errorChain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

// TestNoSecretLeaks drives every failure path with canary credentials and a debug logger, and
// looks for the canaries in every rendering of every error in the chain and in every log line.
func TestNoSecretLeaks(t *testing.T) {
	// The printer echoes the request headers back, as a misconfigured proxy might.
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"message":"you sent %s %s %s","triggers":"%s"}`, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.URL, r.Header.Get("Authorization"))
		}
	}
	other := httptest.NewServer(echo(200))
	defer other.Close()
	servers := map[string]http.HandlerFunc{
		"401 echo":    echo(401),
		"500 echo":    echo(500),
		"decode echo": echo(200),
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/x?token="+canaryToken, http.StatusFound)
		},
		"reset":        func(w http.ResponseWriter, r *http.Request) { rtReset(w) },
		"slow headers": func(w http.ResponseWriter, r *http.Request) { time.Sleep(300 * time.Millisecond) },
	}
	auths := map[string][]Option{
		"bearer": {WithBearerToken(canaryToken)},
		"basic":  {WithBasicAuth("operator", canaryPass)},
		"header": {WithHeader("X-Api-Key", canaryHeader)},
	}
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	checked := 0
	check := func(where string, err error) {
		t.Helper()
		for _, e := range errorChain(err) {
			for _, form := range []string{fmt.Sprint(e), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
				checked++
				for _, c := range canaries {
					if strings.Contains(form, c) {
						t.Errorf("%s: canary %s in %T: %s", where, c, e, form)
					}
				}
			}
		}
	}
	for authName, opts := range auths {
		for srvName, h := range servers {
			srv := httptest.NewServer(h)
			tr := DefaultTransport()
			tr.ResponseHeaderTimeout = 100 * time.Millisecond
			c, err := NewClient(srv.URL, append(opts, WithLogger(logger), WithHTTPClient(&http.Client{Transport: tr}), WithRetry(RetryPolicy{MaxAttempts: 2, MinWait: time.Millisecond, MaxWait: time.Millisecond}))...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, err1 := c.Printers.Counters(ctx, "p")
			_, err2 := c.Printers.PrintJob(ctx, "p", &PrintJob{LabelName: "L"})
			_, err3 := c.Labels.Get(ctx, "L")
			if err1 == nil {
				t.Errorf("%s/%s: counters succeeded", authName, srvName)
			}
			for _, err := range []error{err1, err2, err3} {
				check(authName+"/"+srvName, err)
			}
			for _, v := range []any{c, *c, c.common, c.rc} {
				for _, form := range []string{fmt.Sprintf("%v", v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v)} {
					checked++
					for _, cn := range canaries {
						if strings.Contains(form, cn) {
							t.Errorf("%s: canary %s in a rendering of %T", authName, cn, v)
						}
					}
				}
			}
			c.Close()
			srv.Close()
		}
	}
	// Transport failures before any server: dial, TLS.
	for authName, opts := range auths {
		c, _ := NewClient("http://127.0.0.1:1", append(opts, WithLogger(logger), WithRetry(RetryPolicy{MaxAttempts: 1}))...)
		_, err := c.Labels.List(context.Background())
		check(authName+"/dial", err)
		tlsSrv := httptest.NewTLSServer(echo(200))
		tlsSrv.Config.ErrorLog = nil
		c2, _ := NewClient(tlsSrv.URL, append(opts, WithLogger(logger))...)
		_, err = c2.Labels.List(context.Background())
		check(authName+"/tls", err)
		c2.Close()
		tlsSrv.Close()
	}
	_, err := NewClient("http://user:" + canaryPass + "@printer/")
	check("userinfo base URL", err)

	lines := strings.Count(logs.String(), "\n")
	if lines == 0 {
		t.Error("the debug logger saw nothing")
	}
	for _, c := range canaries {
		if strings.Contains(logs.String(), c) {
			t.Errorf("canary %s in the log", c)
		}
	}
	t.Logf("%d error renderings and %d log lines checked, 0 canary hits expected", checked, lines)
}

// TestSilentWithoutLogger: a Client with no logger writes nothing anywhere it could be seen.
func TestSilentWithoutLogger(t *testing.T) {
	srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, `{}`)
	})
	var logs lockedBuffer
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c, _ := rtClient(t, srv.URL)
	if _, err := c.Labels.List(t.Context()); err != nil {
		t.Fatal(err)
	}
	if logs.String() != "" {
		t.Errorf("logged without a logger: %q", logs.String())
	}
}

// TestCallerClientUntouched: the caller's http.Client keeps its transport, redirect policy,
// timeout and jar after NewClient and 100 calls.
func TestCallerClientUntouched(t *testing.T) {
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) })
	tr := DefaultTransport()
	redirect := func(*http.Request, []*http.Request) error { return nil }
	hc := &http.Client{Transport: tr, CheckRedirect: redirect, Timeout: 7 * time.Second}
	c, _ := rtClient(t, srv.URL, WithHTTPClient(hc))
	for i := 0; i < 100; i++ {
		if _, err := c.Labels.List(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if hc.Transport != tr || fmt.Sprintf("%p", hc.CheckRedirect) != fmt.Sprintf("%p", redirect) || hc.Timeout != 7*time.Second || hc.Jar != nil {
		t.Errorf("caller's client changed: %+v", hc)
	}
}
