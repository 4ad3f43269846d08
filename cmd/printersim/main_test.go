package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is safe to write from the command and read from the test.
type syncBuffer = testkit.SyncBuffer

// startRun runs the command with args until stop is called, and returns the URL it printed
// and a stop function that returns its exit code.
func startRun(t *testing.T, args ...string) (url string, stdout, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = new(syncBuffer), new(syncBuffer)
	done := make(chan int)
	go func() { done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, stderr) }()
	stop = sync.OnceValue(func() int { cancel(); return <-done })
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`at (http://\S+)`).FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		stop()
		t.Fatalf("no URL printed: %q", stdout.String())
	}
	return url, stdout, stderr, stop
}

func TestRunServesAndLogs(t *testing.T) {
	url, stdout, stderr, stop := startRun(t, "-printers", "line1, line2", "-token", "s3cret-token")
	if !strings.Contains(stdout.String(), "line1, line2") {
		t.Errorf("printer names not printed: %q", stdout.String())
	}
	req, _ := http.NewRequest("GET", url+"/api/v3/printers/line2/printCounters", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"printedLabels":0`) {
		t.Fatalf("counters: %d %s", resp.StatusCode, body)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	log := stderr.String()
	if !strings.Contains(log, "GET /api/v3/printers/line2/printCounters 200") {
		t.Errorf("request not logged: %q", log)
	}
	if strings.Contains(log, "s3cret-token") {
		t.Errorf("token logged: %q", log)
	}
}

// TestRunTokenFileLogsPathsOnly: -token-file gives the token from a file, not the process's
// arguments; the request log prints paths without their query strings.
func TestRunTokenFileLogsPathsOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("f1le-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _, stderr, stop := startRun(t, "-token-file", file)
	client := &http.Client{Transport: &http.Transport{}}
	for _, tc := range []struct {
		auth string
		want int
	}{{"Bearer f1le-token", 200}, {"", 401}} {
		req, _ := http.NewRequest("GET", url+"/api/v3/printHistory?start=0&end=1&apiKey=q3ery-secret", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
	}
	client.CloseIdleConnections()
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	log := stderr.String()
	if !strings.Contains(log, "GET /api/v3/printHistory 200") || strings.Contains(log, "q3ery-secret") || strings.Contains(log, "?") || strings.Contains(log, "f1le-token") {
		t.Errorf("the log: %q, want paths only", log)
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-token", "x", "-token-file", file}, &out, &out); code != 2 || !strings.Contains(out.String(), "--token-file cannot be given with --require-token") {
		t.Errorf("-token with -token-file: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-token-file", file + ".missing"}, &out, &out); code != 2 || !strings.Contains(out.String(), "--token-file cannot be read: "+file+".missing") {
		t.Errorf("a missing -token-file: exit %d, %q", code, out.String())
	}
}

// TestRunRequireContentLength: with the flag, a POST without Content-Length is answered 411,
// and one that declares its empty body is served.
func TestRunRequireContentLength(t *testing.T) {
	url, _, _, stop := startRun(t, "-require-content-length")
	defer stop()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, tc := range []struct {
		body io.Reader
		want int
	}{
		{strings.NewReader(""), http.StatusOK},        // net/http sends Content-Length: 0
		{io.MultiReader(), http.StatusLengthRequired}, // length unknown: chunked
	} {
		req, _ := http.NewRequest("POST", url+"/api/v3/printers/line1/abortPrint", tc.body)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%T body: %d, want %d", tc.body, resp.StatusCode, tc.want)
		}
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-printers", " , "}, &out, &out); code != 2 {
		t.Errorf("empty printer list: exit %d", code)
	}
	if code := run(context.Background(), []string{"-nope"}, &out, &out); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-trigger-every", "-1s"}, &out, &out); code != 2 {
		t.Errorf("negative -trigger-every: exit %d", code)
	}
	if code := run(context.Background(), []string{"-addr", "256.0.0.1:1"}, &out, &out); code != 1 {
		t.Errorf("bad address: exit %d", code)
	}
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{[]string{"-addr", "8633"}, "--addr must be host:port"},
		{[]string{"-addr", "127.0.0.1:99999"}, "--addr needs a port number from 0 to 65535"},
		{[]string{"-addr", "127.0.0.1:0", "-delay", "-1s"}, "--delay cannot be negative"},
		{[]string{"-addr", "127.0.0.1:0", "-trigger-every", "-1s"}, "--trigger-every cannot be negative"},
		{[]string{"-addr", "127.0.0.1:0", "line1"}, "takes no arguments"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q (want %q), stdout %q", tc.args, code, stderr.String(), tc.want, stdout.String())
		}
	}
}

// get answers a GET's status and body, with the bearer token when one is given.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRunSharedDefaults: without -printers the printer is line1, as in labelctl sim; the token
// flag has labelctl sim's name (-require-token) and keeps its older one (-token).
func TestRunSharedDefaults(t *testing.T) {
	url, stdout, _, stop := startRun(t)
	if !strings.Contains(stdout.String(), "serving printers line1 at") {
		t.Errorf("default printer: %q", stdout.String())
	}
	if code, body := get(t, url+"/api/v3/printers/line1/printCounters", ""); code != 200 {
		t.Errorf("line1 counters: %d %s", code, body)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, flag := range []string{"-require-token", "-token"} {
		url, _, _, stop := startRun(t, flag, "tok-"+flag)
		if code, _ := get(t, url+"/api/v3/printCounters", ""); code != 401 {
			t.Errorf("%s: no token answered %d", flag, code)
		}
		if code, body := get(t, url+"/api/v3/printCounters", "tok-"+flag); code != 200 {
			t.Errorf("%s: token answered %d %s", flag, code, body)
		}
		if code := stop(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	}
}

// TestRunLineSurvivesTablePut: a running line whose selected job loses its column to a table
// PUT bounces that job and keeps serving (the process used to die of an index panic).
func TestRunLineSurvivesTablePut(t *testing.T) {
	url, _, _, stop := startRun(t, "-trigger-every", "2ms")
	defer stop()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	send := func(method, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
	}
	send("PUT", "/api/v3/labels/L", `{"format":3}`, 204)
	send("PUT", "/api/v3/tables/T", `{"columns":["SKU","Label"],"rows":[["a","L"]]}`, 204)
	send("POST", "/api/v3/printers/line1/printJob", `{"tableName":"T","labelColumn":"Label","keyColumn":"SKU","key":"a"}`, 200)
	send("PUT", "/api/v3/tables/T", `{"columns":["SKU"],"rows":[["a"]]}`, 204)
	// The line runs every 2 ms: it prints the job until the PUT, then bounces it once and
	// leaves the printer alone. Wait (bounded generously) for that bounce.
	var c struct{ Triggers, TriggerBounces, PrintedLabels int64 }
	for deadline := time.Now().Add(30 * time.Second); c.TriggerBounces == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no bounce seen: %+v", c)
		}
		code, body := get(t, url+"/api/v3/printers/line1/printCounters", "")
		if code != 200 {
			t.Fatalf("counters: %d %s", code, body)
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
	}
	if c.Triggers != c.PrintedLabels+c.TriggerBounces {
		t.Errorf("counters half-updated: %+v", c)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestRunUI: the page is on by default, its URL printed; -ui=false answers 404 at / and /ui/.
func TestRunUI(t *testing.T) {
	get := func(url string) int {
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	url, stdout, _, stop := startRun(t)
	if !strings.Contains(stdout.String(), "open "+url+"/ in a browser") {
		t.Errorf("page URL not printed: %q", stdout.String())
	}
	if code := get(url + "/"); code != 200 {
		t.Errorf("GET / with the page: %d", code)
	}
	if code := get(url + "/ui/printers/line1/prints"); code != 200 {
		t.Errorf("GET /ui/printers/line1/prints with the page: %d", code)
	}
	stop()
	url, stdout, _, stop = startRun(t, "-ui=false")
	defer stop()
	if strings.Contains(stdout.String(), "browser") {
		t.Errorf("page URL printed without the page: %q", stdout.String())
	}
	for _, p := range []string{"/", "/ui/printers/line1/prints", "/ui/events"} {
		if code := get(url + p); code != 404 {
			t.Errorf("GET %s with -ui=false: %d", p, code)
		}
	}
}
