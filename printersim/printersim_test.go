package printersim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/image/tiff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable clock for processing delays and history.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// simT is a started simulator with a plain net/http client.
type simT struct {
	t      *testing.T
	srv    *Server
	client *http.Client
}

func startSim(t *testing.T, opts ...Option) *simT {
	t.Helper()
	srv, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	s := &simT{t: t, srv: srv, client: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(func() {
		s.client.CloseIdleConnections()
		srv.Close()
	})
	return s
}

// do sends a request with a raw escaped path and returns the status and body.
func (s *simT) do(method, rawPath, contentType string, body []byte, header ...string) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+rawPath, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, rawPath, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: reading body: %v", method, rawPath, err)
	}
	return resp.StatusCode, b
}

func (s *simT) want(method, rawPath, contentType, body string, wantStatus int) []byte {
	s.t.Helper()
	code, b := s.do(method, rawPath, contentType, []byte(body))
	if code != wantStatus {
		s.t.Fatalf("%s %s: status %d, want %d (%s)", method, rawPath, code, wantStatus, b)
	}
	if code >= 400 {
		var e errorBody
		if json.Unmarshal(b, &e) != nil || e.Message == "" {
			s.t.Errorf("%s %s: error body is not {\"message\"}: %s", method, rawPath, b)
		}
	}
	return b
}

func TestLabelsAndTables(t *testing.T) {
	s := startSim(t)
	s.want("GET", "/api/v3/labels", "", "", 200)
	s.want("PUT", "/api/v3/labels/L1", "application/json", `{"format":3,"objs":[{"type":"Text","text":"{{SKU}}: {{Name}}"}]}`, 204)
	s.want("PUT", "/api/v3/labels/bad", "application/json", `[1,2]`, 400)
	s.want("PUT", "/api/v3/labels/bad", "text/plain", `{}`, 415)
	if got := string(s.want("GET", "/api/v3/labels", "", "", 200)); got != `{"L1":{}}` {
		t.Errorf("list = %s", got)
	}
	s.want("GET", "/api/v3/labels/L1", "", "", 200)
	s.want("GET", "/api/v3/labels/nope", "", "", 404)

	s.want("PUT", "/api/v3/tables/T", "application/json", `{"columns":["SKU","Name"],"rows":[["A1","Bolt"],["B2",7]]}`, 204)
	s.want("PUT", "/api/v3/tables/bad", "application/json", `{"columns":["a"],"rows":[["x","y"]]}`, 400)
	s.want("PUT", "/api/v3/tables/bad", "application/json", `{"columns":[]}`, 400)
	if got := string(s.want("GET", "/api/v3/tables", "", "", 200)); got != `{"T":{}}` {
		t.Errorf("tables = %s", got)
	}
	sim := s.want("GET", "/api/v3/labels/L1/simulation?tableName=T&keyColumn=SKU&key=B2", "", "", 200)
	if !strings.Contains(string(sim), `"B2: 7"`) {
		t.Errorf("simulation not filled: %s", sim)
	}
	if got := s.want("GET", "/api/v3/labels/L1/simulation", "", "", 200); !strings.Contains(string(got), "{{SKU}}") {
		t.Errorf("plain simulation changed the label: %s", got)
	}
	s.want("GET", "/api/v3/labels/L1/simulation?tableName=T&key=B2", "", "", 400)
	s.want("GET", "/api/v3/labels/L1/simulation?tableName=T&keyColumn=SKU&key=ZZ", "", "", 404)
	s.want("GET", "/api/v3/labels/L1/simulation?tableName=X&keyColumn=SKU&key=B2", "", "", 404)
	s.want("DELETE", "/api/v3/tables/T", "", "", 204)
	s.want("DELETE", "/api/v3/tables/T", "", "", 404)
	s.want("DELETE", "/api/v3/labels/L1", "", "", 204)
	s.want("DELETE", "/api/v3/labels/L1", "", "", 404)
	s.want("PATCH", "/api/v3/labels/L1", "", "", 405)
	s.want("GET", "/api/v3/nothing", "", "", 404)
}

func TestNamesAreOneSegment(t *testing.T) {
	s := startSim(t)
	names := map[string]string{
		"a/b":        "a%2Fb",
		"sp ace":     "sp%20ace",
		"q?":         "q%3F",
		"h#":         "h%23",
		"100%":       "100%25",
		"plus+semi;": "plus+semi%3B",
		"ümlaut":     "%C3%BCmlaut",
	}
	for name, esc := range names {
		s.want("PUT", "/api/v3/labels/"+esc, "application/json", `{}`, 204)
		if _, ok := s.srv.Sim.Label(name); !ok {
			t.Errorf("PUT /labels/%s did not store %q (have %v)", esc, name, s.srv.Sim.LabelNames())
		}
		s.want("GET", "/api/v3/labels/"+esc, "", "", 200)
	}
	var list map[string]any
	_ = json.Unmarshal(s.want("GET", "/api/v3/labels", "", "", 200), &list)
	if len(list) != len(names) {
		t.Errorf("list has %d labels, want %d", len(list), len(names))
	}
}

func TestToken(t *testing.T) {
	s := startSim(t, WithToken("tok"))
	if code, _ := s.do("GET", "/api/v3/labels", "", nil); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code, _ := s.do("GET", "/api/v3/labels", "", nil, "Authorization", "Bearer nope"); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	if code, _ := s.do("GET", "/api/v3/labels", "", nil, "Authorization", "Bearer tok"); code != 200 {
		t.Errorf("right token: %d", code)
	}
}

func encode(t *testing.T, kind string) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 30, 20))
	img.Set(1, 1, color.NRGBA{R: 200, A: 128})
	var b bytes.Buffer
	var err error
	switch kind {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "tiff":
		err = tiff.Encode(&b, image.NewGray(image.Rect(0, 0, 30, 20)), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestImages(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := startSim(t, WithClock(clock), WithProcessingDelay(time.Second))
	pbm := []byte("P4\n# comment\n16 2\n\xff\xff\x00\x00")
	cases := []struct {
		name, ct string
		body     []byte
		want     imageInfo
	}{
		{"p", "image/png", encode(t, "png"), imageInfo{Width: 30, Height: 20, Format: imageFormat{Alpha: "STRAIGHT", BitsPerChannel: 8, Channels: 4, ColorSpace: "RGB"}}},
		{"j", "image/jpeg", encode(t, "jpeg"), imageInfo{Width: 30, Height: 20, Format: imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 3, ColorSpace: "RGB"}}},
		{"t", "image/tiff", encode(t, "tiff"), imageInfo{Width: 30, Height: 20, Format: imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 1, ColorSpace: "GRAY"}}},
		{"n", "application/json", []byte(`{"data":"` + base64.StdEncoding.EncodeToString(pbm) + `","intent":"RAW"}`), imageInfo{Width: 16, Height: 2, Intent: "RAW", Format: imageFormat{Alpha: "NONE", BitsPerChannel: 1, Channels: 1, ColorSpace: "GRAY"}}},
		{"bad", "image/png", []byte("not a png"), imageInfo{}},
	}
	for _, c := range cases {
		s.want("PUT", "/api/v3/images/"+c.name+"?intent=PERCEPTUAL", c.ct, string(c.body), 204)
		var info imageInfo
		_ = json.Unmarshal(s.want("GET", "/api/v3/images/"+c.name+"/info", "", "", 200), &info)
		if info.State != "PROCESSING" {
			t.Errorf("%s: state %s before the delay", c.name, info.State)
		}
	}
	clock.Add(time.Second)
	for _, c := range cases {
		var info imageInfo
		_ = json.Unmarshal(s.want("GET", "/api/v3/images/"+c.name+"/info", "", "", 200), &info)
		if c.name == "bad" {
			if info.State != "ERROR" {
				t.Errorf("garbage: state %s, want ERROR", info.State)
			}
			continue
		}
		if info.State != "READY" || info.Width != c.want.Width || info.Height != c.want.Height || info.Format != c.want.Format {
			t.Errorf("%s: info %+v, want %+v", c.name, info, c.want)
		}
		wantIntent := "PERCEPTUAL"
		if c.want.Intent != "" {
			wantIntent = c.want.Intent
		}
		if info.Intent != wantIntent || info.UID == "" || info.WidthMM <= 0 {
			t.Errorf("%s: intent %q uid %q width_mm %v", c.name, info.Intent, info.UID, info.WidthMM)
		}
	}
	code, body := s.do("GET", "/api/v3/images/p", "", nil)
	if code != 200 || !bytes.Equal(body, cases[0].body) {
		t.Errorf("download: %d, %d bytes", code, len(body))
	}
	s.want("PUT", "/api/v3/images/x", "image/gif", "GIF89a", 415)
	s.want("PUT", "/api/v3/images/x", "application/json", `{"intent":"RAW"}`, 400)
	var list map[string]imageInfo
	_ = json.Unmarshal(s.want("GET", "/api/v3/images?details=1", "", "", 200), &list)
	if len(list) != len(cases) || list["p"].Width != 30 {
		t.Errorf("details list: %+v", list)
	}
	if got := string(s.want("GET", "/api/v3/images", "", "", 200)); strings.Contains(got, "width") {
		t.Errorf("list without details has details: %s", got)
	}
	s.want("DELETE", "/api/v3/images/p", "", "", 204)
	s.want("GET", "/api/v3/images/p/info", "", "", 404)
}

func counters(t *testing.T, s *simT, path string) Counters {
	t.Helper()
	var c Counters
	if err := json.Unmarshal(s.want("GET", path, "", "", 200), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPrintFlow(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 18, 10, 30, 0, 0, time.UTC)} // a Wednesday
	s := startSim(t, WithPrinters("line1", "line2"), WithClock(clock))
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
	s.want("PUT", "/api/v3/labels/M", "application/json", `{"format":3}`, 204)
	s.want("PUT", "/api/v3/tables/T", "application/json", `{"columns":["SKU","Label","N","Done"],"rows":[["a","L",2,0],["b","M",1,0],["c","",1,0]]}`, 204)

	job := "/api/v3/printers/line1/printJob"
	for body, code := range map[string]int{
		`{}`:                                400,
		`{"copies":2}`:                      400,
		`{"labelName":"L","key":"a"}`:       400,
		`{"labelName":"L","firstRow":1}`:    400,
		`{"labelName":"L","copies":-1}`:     400,
		`{"labelName":"L","copies":"2"}`:    400,
		`{"labelName":"nope"}`:              404,
		`{"labelName":"L","tableName":"X"}`: 404,
		`{"tableName":"T","labelColumn":"Label","keyColumn":"SKU","key":"zz"}`: 404,
		`{"tableName":"T","labelColumn":"Label","keyColumn":"SKU"}`:            400,
		`{"tableName":"T","labelColumn":"Nope","keyColumn":"SKU","key":"a"}`:   400,
		`not json`: 400,
	} {
		s.want("POST", job, "application/json", body, code)
	}
	if code, _ := s.do("POST", "/api/v3/printers/line9/printJob", "application/json", []byte(`{"labelName":"L"}`)); code != 404 {
		t.Errorf("unknown printer: %d", code)
	}

	// One-row database job with copies from the row: 2 labels, then the job is done.
	s.want("POST", job, "application/json", `{"tableName":"T","keyColumn":"SKU","key":"a","labelColumn":"Label","copiesColumn":"N","printedColumn":"Done"}`, 200)
	s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	clock.Add(time.Hour)
	s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	s.want("POST", "/api/v3/printers/line1/trigger", "", "", 409)
	if c := counters(t, s, "/api/v3/printers/line1/printCounters"); c != (Counters{Triggers: 3, TriggerBounces: 1, PrintedLabels: 2}) {
		t.Errorf("counters %+v", c)
	}
	if got := string(s.want("GET", "/api/v3/tables/T", "", "", 200)); !strings.Contains(got, `["a","L",2,2]`) {
		t.Errorf("printedColumn not counted: %s", got)
	}

	// Row range with labelName as fallback for the empty Label cell: one label per row.
	s.want("POST", job, "application/json", `{"tableName":"T","labelName":"L","labelColumn":"Label","firstRow":1}`, 200)
	b1 := s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	b2 := s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	if !strings.Contains(string(b1), `"label":"M"`) || !strings.Contains(string(b2), `"label":"L"`) {
		t.Errorf("row labels: %s %s", b1, b2)
	}
	s.want("POST", "/api/v3/printers/line1/trigger", "", "", 409)

	// Queue appends, a job without queue replaces, abort and deselect clear.
	s.want("POST", job, "application/json", `{"labelName":"L"}`, 200)
	s.want("POST", job, "application/json", `{"labelName":"M","queue":true}`, 200)
	if n := s.srv.Sim.QueueLength("line1"); n != 2 {
		t.Errorf("queue length %d, want 2", n)
	}
	s.want("POST", job, "application/json", `{"labelName":"M","queue":false}`, 200)
	if n := s.srv.Sim.QueueLength("line1"); n != 1 {
		t.Errorf("queue length %d after replace, want 1", n)
	}
	s.want("POST", "/api/v3/printers/line1/abortPrint", "", "", 200)
	s.want("POST", "/api/v3/printers/line1/abortPrint", "", "", 200)
	if n := s.srv.Sim.QueueLength("line1"); n != 0 {
		t.Errorf("queue length %d after abort", n)
	}
	s.want("POST", job, "application/json", `{"labelData":{"format":3},"copies":1}`, 200)
	s.want("POST", job, "application/json", ``, 200)
	if n := s.srv.Sim.QueueLength("line1"); n != 0 {
		t.Errorf("queue length %d after deselect", n)
	}

	// Single-printer paths address the first printer.
	s.want("POST", "/api/v3/printJob", "application/json", `{"labelName":"L","copies":1}`, 200)
	if n := s.srv.Sim.QueueLength("line1"); n != 1 {
		t.Errorf("top-level printJob did not select on line1")
	}
	if c := counters(t, s, "/api/v3/printCounters"); c.PrintedLabels != 4 {
		t.Errorf("single-printer counters %+v", c)
	}
	if c := counters(t, s, "/api/v3/printers/line2/printCounters"); c != (Counters{}) {
		t.Errorf("line2 counters %+v", c)
	}

	// History: 4 events, 10:30 (x1), 11:30 (x3).
	var h historyBody
	_ = json.Unmarshal(s.want("GET", "/api/v3/printers/line1/printHistory?resolution=HOURS", "", "", 200), &h)
	base := time.Date(2026, 11, 18, 10, 0, 0, 0, time.UTC).Unix()
	if len(h.Time) != 2 || h.Time[0] != base || h.Time[1] != base+3600 || h.Count[0] != 1 || h.Count[1] != 3 {
		t.Errorf("hourly history %+v", h)
	}
	_ = json.Unmarshal(s.want("GET", "/api/v3/printHistory?resolution=WEEKS", "", "", 200), &h)
	monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC).Unix()
	if len(h.Time) != 1 || h.Time[0] != monday || h.Count[0] != 4 {
		t.Errorf("weekly history %+v, want Monday %d", h, monday)
	}
	_ = json.Unmarshal(s.want("GET", "/api/v3/printers/line1/printHistory?start="+itoa(base+3600)+"&end="+itoa(base+7200), "", "", 200), &h)
	if len(h.Time) != 1 || h.Count[0] != 3 {
		t.Errorf("ranged daily history %+v", h)
	}
	s.want("GET", "/api/v3/printHistory?resolution=YEARS", "", "", 400)
	s.want("GET", "/api/v3/printHistory?start=10&end=5", "", "", 400)
	s.want("GET", "/api/v3/printHistory?start=abc", "", "", 400)
	s.want("GET", "/api/v3/printers/line9/printHistory", "", "", 404)

	var st statusBody
	_ = json.Unmarshal(s.want("GET", "/api/v3/status", "", "", 200), &st)
	if st.State != "STARTED" || len(st.Printers) != 2 || len(st.Ink) != 1 {
		t.Errorf("status %+v", st)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestFaults(t *testing.T) {
	s := startSim(t)
	s.want("PUT", "/api/v3/labels/L", "application/json", `{}`, 204)
	const route = "/api/v3/printers/{name}/printJob"

	s.srv.Sim.InjectFault(Fault{Method: "GET", Route: "/api/v3/labels/{name}", Times: 2, Status: 503, RetryAfter: "1"})
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest("GET", s.srv.URL+"/api/v3/labels/L", nil)
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("fault %d: %d %q", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	s.want("GET", "/api/v3/labels/L", "", "", 200)
	if n := s.srv.Sim.Requests("GET", "/api/v3/labels/{name}"); n != 3 {
		t.Errorf("requests counted %d, want 3", n)
	}

	// A reset after the request was read: the job is selected, the answer is lost.
	s.srv.Sim.InjectFault(Fault{Method: "POST", Route: route, Times: 1, Reset: ResetAfterRead})
	req, _ := http.NewRequest("POST", s.srv.URL+"/api/v3/printers/line1/printJob", strings.NewReader(`{"labelName":"L"}`))
	if resp, err := s.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("reset after read: got a response")
	}
	if s.srv.Sim.QueueLength("line1") != 1 {
		t.Error("reset after read: the job did not take effect")
	}
	if n := s.srv.Sim.Requests("POST", route); n != 1 {
		t.Errorf("printJob requests %d, want 1", n)
	}

	// A reset before reading: nothing happens.
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", ``, 200)
	s.srv.Sim.InjectFault(Fault{Method: "POST", Route: route, Times: 1, Reset: ResetBeforeRead})
	req, _ = http.NewRequest("POST", s.srv.URL+"/api/v3/printers/line1/printJob", strings.NewReader(`{"labelName":"L"}`))
	if resp, err := s.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("reset before read: got a response")
	}
	if s.srv.Sim.QueueLength("line1") != 0 {
		t.Error("reset before read: the job took effect")
	}

	// A truncated answer.
	s.srv.Sim.InjectFault(Fault{Method: "GET", Route: "/api/v3/printCounters", Times: 1, Truncate: true})
	resp, err := s.client.Get(s.srv.URL + "/api/v3/printCounters")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated body: %v, want unexpected EOF", err)
	}

	// A delay ends early when the client gives up; Times 0 applies until cleared.
	s.srv.Sim.InjectFault(Fault{Method: "GET", Route: "/api/v3/status", Delay: time.Hour})
	short := &http.Client{Transport: &http.Transport{}, Timeout: 100 * time.Millisecond}
	if resp, err := short.Get(s.srv.URL + "/api/v3/status"); err == nil {
		resp.Body.Close()
		t.Error("delayed answer arrived")
	}
	short.CloseIdleConnections()
	s.srv.Sim.ClearFaults()
	s.want("GET", "/api/v3/status", "", "", 200)
	if s.srv.Sim.TotalRequests() < 10 {
		t.Errorf("total requests %d", s.srv.Sim.TotalRequests())
	}
}

func TestBodyCap(t *testing.T) {
	s := startSim(t, WithMaxBodyBytes(1024))
	s.want("PUT", "/api/v3/labels/big", "application/json", `{"x":"`+strings.Repeat("a", 2048)+`"}`, 413)
	s.want("PUT", "/api/v3/images/big", "image/png", strings.Repeat("a", 2048), 413)
}

func TestConcurrentClients(t *testing.T) {
	s := startSim(t, WithPrinters("p"))
	s.want("PUT", "/api/v3/labels/L", "application/json", `{}`, 204)
	s.want("POST", "/api/v3/printers/p/printJob", "application/json", `{"labelName":"L"}`, 200)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 10; k++ {
				req, _ := http.NewRequest("POST", s.srv.URL+"/api/v3/printers/p/trigger", nil)
				resp, err := s.client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	c, _ := s.srv.Sim.Counters("p")
	if c.PrintedLabels != 500 || c.Triggers != 500 || len(s.srv.Sim.PrintEvents("p")) != 500 {
		t.Errorf("after 500 concurrent triggers: %+v", c)
	}
}

func TestOrStart(t *testing.T) {
	url, stop, err := OrStart("http://printer.example")
	if err != nil || url != "http://printer.example" {
		t.Fatalf("given URL: %q %v", url, err)
	}
	stop()
	url, stop, err = OrStart("", WithPrinters("x"))
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("started: %q %v", url, err)
	}
	defer stop()
	resp, err := http.Get(url + "/api/v3/printers/x/printCounters")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
}
