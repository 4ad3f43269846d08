package labelprinter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
)

// mkBase is mounted under a prefix so an absolute path in an operation would show.
const mkBase = "http://printer.test/prefix"

// mkClient returns a Client whose transport is a fresh httpmock transport that fails the test
// on any request it was not told about.
func mkClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mock := httpmock.NewMockTransport()
	mock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		return httpmock.NewStringResponse(599, "unexpected"), nil
	})
	opts = append([]Option{WithHTTPClient(&http.Client{Transport: mock})}, opts...)
	c, err := NewClient(mkBase, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = func(context.Context, time.Duration) error { return nil }
	t.Cleanup(func() { _ = c.Close() })
	return c, mock
}

// mkSeen is what a responder saw of one request.
type mkSeen struct {
	method, rawPath, query string
	header                 http.Header
	body                   []byte
	hasBody                bool
	contentLength          int64 // as the request declares it; -1 for unknown (chunked)
	transferEncoding       []string
}

// mkRecord answers every request on the mock with status and body, and records what it saw.
func mkRecord(mock *httpmock.MockTransport, status int, body string, header ...string) *[]mkSeen {
	var seen []mkSeen
	mock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		s := mkSeen{method: r.Method, rawPath: r.URL.EscapedPath(), query: r.URL.RawQuery, header: r.Header.Clone(), contentLength: r.ContentLength, transferEncoding: r.TransferEncoding}
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength == 0 {
			s.contentLength = -1 // net/http would stream this body chunked
		}
		if r.Body != nil {
			s.body, _ = io.ReadAll(r.Body)
			s.hasBody = true
			r.Body.Close()
		}
		seen = append(seen, s)
		resp := httpmock.NewStringResponse(status, body)
		for i := 0; i+1 < len(header); i += 2 {
			resp.Header.Set(header[i], header[i+1])
		}
		return resp, nil
	})
	return &seen
}

func mkJSONEqual(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: body %q is not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("%s: body\n got %s\nwant %s", what, gb, wb)
	}
}

// TestWireShape checks method, escaped path, query, headers and body of every operation.
func TestWireShape(t *testing.T) {
	pngFile := filepath.Join(t.TempDir(), "logo.png")
	if err := os.WriteFile(pngFile, []byte("\x89PNG\r\n\x1a\nrest"), 0o600); err != nil {
		t.Fatal(err)
	}
	jpegFile := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(jpegFile, []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2}, 0o600); err != nil {
		t.Fatal(err)
	}
	tiffFile := filepath.Join(t.TempDir(), "scan.tif")
	if err := os.WriteFile(tiffFile, []byte("MM\x00*\x00\x00\x00\x08"), 0o600); err != nil {
		t.Fatal(err)
	}
	const p = "/prefix/api/v3"
	cases := []struct {
		name        string
		call        func(context.Context, *Client) error
		method      string
		path        string
		query       url.Values
		contentType string // "" means no Content-Type and no body
		accept      string
		body        string // JSON compared semantically; raw when contentType is not JSON
	}{
		{"Labels.List", func(ctx context.Context, c *Client) error { _, err := c.Labels.List(ctx); return err }, "GET", p + "/labels", nil, "", "application/json", ""},
		{"Labels.Get", func(ctx context.Context, c *Client) error { _, err := c.Labels.Get(ctx, "a/b c"); return err }, "GET", p + "/labels/a%2Fb%20c", nil, "", "application/json", ""},
		{"Labels.Put", func(ctx context.Context, c *Client) error {
			return c.Labels.Put(ctx, "L?1", map[string]any{"format": 3, "text": "<b>&"})
		}, "PUT", p + "/labels/L%3F1", nil, "application/json", "application/json", `{"format":3,"text":"<b>&"}`},
		{"Labels.Put raw", func(ctx context.Context, c *Client) error {
			return c.Labels.Put(ctx, "L", json.RawMessage(`{"format": 3}`))
		}, "PUT", p + "/labels/L", nil, "application/json", "application/json", `{"format":3}`},
		{"Labels.Delete", func(ctx context.Context, c *Client) error { return c.Labels.Delete(ctx, "100%") }, "DELETE", p + "/labels/100%25", nil, "", "application/json", ""},
		{"Labels.Simulate", func(ctx context.Context, c *Client) error { _, err := c.Labels.Simulate(ctx, "L#1", nil); return err }, "GET", p + "/labels/L%231/simulation", nil, "", "application/json", ""},
		{"Labels.Simulate table", func(ctx context.Context, c *Client) error {
			_, err := c.Labels.Simulate(ctx, "L", &SimulationOptions{TableName: "My Table", KeyColumn: "SKU", Key: "S12&x"})
			return err
		}, "GET", p + "/labels/L/simulation", url.Values{"tableName": {"My Table"}, "keyColumn": {"SKU"}, "key": {"S12&x"}}, "", "application/json", ""},
		{"Images.List", func(ctx context.Context, c *Client) error { _, err := c.Images.List(ctx, nil); return err }, "GET", p + "/images", nil, "", "application/json", ""},
		{"Images.List details", func(ctx context.Context, c *Client) error {
			_, err := c.Images.List(ctx, &ImageListOptions{Details: true})
			return err
		}, "GET", p + "/images", url.Values{"details": {"true"}}, "", "application/json", ""},
		{"Images.Info", func(ctx context.Context, c *Client) error { _, err := c.Images.Info(ctx, "ü"); return err }, "GET", p + "/images/%C3%BC/info", nil, "", "application/json", ""},
		{"Images.Download", func(ctx context.Context, c *Client) error {
			_, err := c.Images.Download(ctx, "logo", io.Discard)
			return err
		}, "GET", p + "/images/logo", nil, "", "*/*", ""},
		{"Images.Put", func(ctx context.Context, c *Client) error {
			return c.Images.Put(ctx, "logo", strings.NewReader("PNGDATA"), "image/png", &ImagePutOptions{Intent: IntentSpotColor})
		}, "PUT", p + "/images/logo", url.Values{"intent": {"SPOT_COLOR"}}, "image/png", "application/json", "PNGDATA"},
		{"Images.Put unknown intent, declared size", func(ctx context.Context, c *Client) error {
			return c.Images.Put(ctx, "logo", io.MultiReader(strings.NewReader("TIFF")), "image/tiff", &ImagePutOptions{Intent: "VENDOR_X", Size: 4})
		}, "PUT", p + "/images/logo", url.Values{"intent": {"VENDOR_X"}}, "image/tiff", "application/json", "TIFF"},
		{"Images.Put bytes.Buffer", func(ctx context.Context, c *Client) error {
			return c.Images.Put(ctx, "logo", bytes.NewBufferString("JPEGDATA"), "image/jpeg", nil)
		}, "PUT", p + "/images/logo", nil, "image/jpeg", "application/json", "JPEGDATA"},
		{"Images.PutFile png", func(ctx context.Context, c *Client) error { return c.Images.PutFile(ctx, "f", pngFile, nil) }, "PUT", p + "/images/f", nil, "image/png", "application/json", "\x89PNG\r\n\x1a\nrest"},
		{"Images.PutFile jpeg", func(ctx context.Context, c *Client) error { return c.Images.PutFile(ctx, "f", jpegFile, nil) }, "PUT", p + "/images/f", nil, "image/jpeg", "application/json", "\xff\xd8\xff\xe0\x01\x02"},
		{"Images.PutFile tiff", func(ctx context.Context, c *Client) error { return c.Images.PutFile(ctx, "f", tiffFile, nil) }, "PUT", p + "/images/f", nil, "image/tiff", "application/json", "MM\x00*\x00\x00\x00\x08"},
		{"Images.PutJSON", func(ctx context.Context, c *Client) error {
			return c.Images.PutJSON(ctx, "pbm", ImageUpload{Data: []byte("P1\n1 1\n1\n"), Intent: IntentRaw})
		}, "PUT", p + "/images/pbm", nil, "application/json", "application/json", `{"data":"UDEKMSAxCjEK","intent":"RAW"}`},
		{"Images.Delete", func(ctx context.Context, c *Client) error { return c.Images.Delete(ctx, "logo") }, "DELETE", p + "/images/logo", nil, "", "application/json", ""},
		{"Tables.List", func(ctx context.Context, c *Client) error { _, err := c.Tables.List(ctx); return err }, "GET", p + "/tables", nil, "", "application/json", ""},
		{"Tables.Get", func(ctx context.Context, c *Client) error { _, err := c.Tables.Get(ctx, "My Table"); return err }, "GET", p + "/tables/My%20Table", nil, "", "application/json", ""},
		{"Tables.Put", func(ctx context.Context, c *Client) error {
			return c.Tables.Put(ctx, "T", []byte(`{"columns":["a"],"rows":[]}`))
		}, "PUT", p + "/tables/T", nil, "application/json", "application/json", `{"columns":["a"],"rows":[]}`},
		{"Tables.Delete", func(ctx context.Context, c *Client) error { return c.Tables.Delete(ctx, "T") }, "DELETE", p + "/tables/T", nil, "", "application/json", ""},
		{"Printers.PrintJob", func(ctx context.Context, c *Client) error {
			_, err := c.Printers.PrintJob(ctx, "line 1", &PrintJob{LabelName: "MEDIUM", Copies: 3, Queue: Ptr(false), Freeze: Ptr(false)})
			return err
		}, "POST", p + "/printers/line%201/printJob", nil, "application/json", "application/json", `{"labelName":"MEDIUM","copies":3,"queue":false,"freeze":false}`},
		{"Printers.PrintJob database", func(ctx context.Context, c *Client) error {
			_, err := c.Printers.PrintJob(ctx, "", &PrintJob{
				TableName: "My Table", KeyColumn: "SKU", Key: "S12-342C", LabelColumn: "Label", LabelName: "MEDIUM",
				Queue: Ptr(true), FirstRow: 2, RowCount: 5, CopiesColumn: "N", PrintedColumn: "Done", PrintDelay: 1.5,
				AutoPrintGap: 10, AutoPrintInterval: 20, Checkpoint: Ptr(true), Description: "line <1>",
				LabelData: json.RawMessage(`{"format":3}`), Extra: map[string]any{"repeatPrint": true, "zeta": 1},
			})
			return err
		}, "POST", p + "/printJob", nil, "application/json", "application/json",
			`{"tableName":"My Table","keyColumn":"SKU","key":"S12-342C","labelColumn":"Label","labelName":"MEDIUM","queue":true,"firstRow":2,"rowCount":5,"copiesColumn":"N","printedColumn":"Done","printDelay":1.5,"autoPrintGap":10,"autoPrintInterval":20,"checkpoint":true,"description":"line <1>","labelData":{"format":3},"repeatPrint":true,"zeta":1}`},
		{"Printers.DeselectJobs", func(ctx context.Context, c *Client) error {
			_, err := c.Printers.DeselectJobs(ctx, "line1")
			return err
		}, "POST", p + "/printers/line1/printJob", nil, "", "application/json", ""},
		{"Printers.DeselectJobs single", func(ctx context.Context, c *Client) error { _, err := c.Printers.DeselectJobs(ctx, ""); return err }, "POST", p + "/printJob", nil, "", "application/json", ""},
		{"Printers.AbortPrint", func(ctx context.Context, c *Client) error { _, err := c.Printers.AbortPrint(ctx, "line1"); return err }, "POST", p + "/printers/line1/abortPrint", nil, "", "application/json", ""},
		{"Printers.Trigger", func(ctx context.Context, c *Client) error { _, err := c.Printers.Trigger(ctx, "a/b"); return err }, "POST", p + "/printers/a%2Fb/trigger", nil, "", "application/json", ""},
		{"Printers.Status", func(ctx context.Context, c *Client) error { _, err := c.Printers.Status(ctx); return err }, "GET", p + "/status", nil, "", "application/json", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, mock := mkClient(t, WithBearerToken("tok"), WithUserAgent("plant/2"), WithHeader("X-Api-Key", "k1"))
			seen := mkRecord(mock, 200, `{}`)
			if err := tc.call(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			if len(*seen) != 1 {
				t.Fatalf("%d requests, want 1", len(*seen))
			}
			s := (*seen)[0]
			if s.method != tc.method || s.rawPath != tc.path {
				t.Errorf("request %s %s, want %s %s", s.method, s.rawPath, tc.method, tc.path)
			}
			q, _ := url.ParseQuery(s.query)
			if len(q) != len(tc.query) || (len(q) > 0 && q.Encode() != tc.query.Encode()) {
				t.Errorf("query %q, want %q", s.query, tc.query.Encode())
			}
			h := s.header
			if got := h.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if got := h.Get("Accept"); got != tc.accept {
				t.Errorf("Accept %q, want %q", got, tc.accept)
			}
			if got := h.Get("User-Agent"); got != "plant/2 go-labelprinter/"+moduleVersion() {
				t.Errorf("User-Agent %q", got)
			}
			if h.Get("Authorization") != "Bearer tok" || h.Get("X-Api-Key") != "k1" {
				t.Errorf("auth headers %v", h)
			}
			if h.Get("Idempotency-Key") != "" || h.Get("X-Idempotency-Key") != "" {
				t.Error("idempotency header sent")
			}
			// Small embedded servers refuse chunked bodies: every body declares its length, and
			// a request without one declares none at all.
			if s.contentLength < 0 || len(s.transferEncoding) > 0 {
				t.Errorf("body of unknown length (Content-Length %d, Transfer-Encoding %v)", s.contentLength, s.transferEncoding)
			}
			if s.contentLength != int64(len(s.body)) {
				t.Errorf("Content-Length %d for a body of %d bytes", s.contentLength, len(s.body))
			}
			switch {
			case tc.contentType == "application/json" && tc.body != "":
				mkJSONEqual(t, tc.name, s.body, tc.body)
			case string(s.body) != tc.body:
				t.Errorf("body %q, want %q", s.body, tc.body)
			}
		})
	}
}

// TestWireBasicAuth checks the basic credentials header.
func TestWireBasicAuth(t *testing.T) {
	c, mock := mkClient(t, WithBasicAuth("op", "pw"))
	seen := mkRecord(mock, 200, `{"triggers":1,"triggerBounces":0,"printedLabels":1}`)
	if _, err := c.Printers.Counters(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if got := (*seen)[0].header.Get("Authorization"); got != "Basic b3A6cHc=" {
		t.Errorf("Authorization %q", got)
	}
}

// TestDecodeDocumented checks the typed decoders on what a printer may write.
func TestDecodeDocumented(t *testing.T) {
	c, mock := mkClient(t)
	mock.RegisterResponder("GET", mkBase+"/api/v3/images/logo/info", httpmock.NewStringResponder(200,
		`{"fileSize":1.2e3,"format":{"alpha":"STRAIGHT","bitsPerChannel":8.0,"channels":4},"height":20,"height_mm":1.7,"intent":"VENDOR_NEW","state":"SOMETHING_NEW","uid":"u1","width":30,"width_mm":2.5,"extra":true}`))
	info, err := c.Images.Info(t.Context(), "logo")
	if err != nil {
		t.Fatal(err)
	}
	want := ImageInfo{FileSize: 1200, Width: 30, Height: 20, WidthMM: 2.5, HeightMM: 1.7,
		Format: ImageFormat{Alpha: AlphaStraight, BitsPerChannel: 8, Channels: 4}, Intent: "VENDOR_NEW", State: "SOMETHING_NEW", UID: "u1"}
	if *info != want {
		t.Errorf("info %+v\nwant %+v", *info, want)
	}
	mock.RegisterResponder("GET", mkBase+"/api/v3/printers/p/printCounters", httpmock.NewStringResponder(200, `{"triggers":3,"triggerBounces":3.0,"printedLabels":3e0}`))
	pc, err := c.Printers.Counters(t.Context(), "p")
	if err != nil || *pc != (PrintCounters{3, 3, 3}) {
		t.Errorf("counters %+v %v", pc, err)
	}
	mock.RegisterResponderWithQuery("GET", mkBase+"/api/v3/printHistory", "resolution=WEEKS&start=1700000000&end=1700003600",
		httpmock.NewStringResponder(200, `{"time":[1700000000, 1700003600],"count":[5,1e1]}`))
	h, err := c.Printers.History(t.Context(), "", &HistoryOptions{Resolution: ResolutionWeeks, Start: time.Unix(1700000000, 0), End: time.Unix(1700003600, 0)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Buckets()
	if err != nil || len(b) != 2 || !b[1].Start.Equal(time.Unix(1700003600, 0)) || b[1].Count != 10 {
		t.Errorf("buckets %+v %v", b, err)
	}
}

// TestEmptyAndBadBodies pins what an empty or wrong 2xx body gives each kind of operation.
func TestEmptyAndBadBodies(t *testing.T) {
	c, mock := mkClient(t)
	mock.RegisterNoResponder(httpmock.NewStringResponder(200, ""))
	ctx := t.Context()
	if raw, err := c.Printers.PrintJob(ctx, "p", &PrintJob{LabelName: "L"}); err != nil || len(raw) != 0 {
		t.Errorf("empty printJob answer: %q %v", raw, err)
	}
	if raw, err := c.Labels.Get(ctx, "L"); err != nil || len(raw) != 0 {
		t.Errorf("empty label: %q %v", raw, err)
	}
	if m, err := c.Labels.List(ctx); err != nil || len(m) != 0 {
		t.Errorf("empty list: %v %v", m, err)
	}
	var de *DecodeError
	if _, err := c.Printers.Counters(ctx, "p"); !errors.As(err, &de) || de.What != "PrintCounters" {
		t.Errorf("empty counters: %v", err)
	}
	mock.RegisterNoResponder(httpmock.NewStringResponder(200, "<html>login</html>"))
	if _, err := c.Printers.Trigger(ctx, "p"); !errors.As(err, &de) {
		t.Errorf("HTML answer to trigger: %v", err)
	}
	mock.RegisterNoResponder(httpmock.NewStringResponder(200, `{"triggers":"3"}`))
	_, err := c.Printers.Counters(ctx, "p")
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &de) || !errors.As(err, &ute) || !strings.Contains(err.Error(), "GET /prefix/api/v3/printers/p/printCounters") {
		t.Errorf("string counter: %v", err)
	}
}

// TestAPIErrors checks the error mapping of non-2xx answers.
func TestAPIErrors(t *testing.T) {
	cases := []struct {
		status int
		body   string
		target error
		msg    string
	}{
		{404, `{"message":"no label \"x\""}`, ErrNotFound, `no label "x"`},
		{401, `{"error":"token expired"}`, ErrUnauthorized, "token expired"},
		{403, "forbidden here\n", ErrForbidden, "forbidden here"},
		{409, `{"message":1}`, ErrConflict, ""},
		{429, `{}`, ErrRateLimited, ""},
		{500, `<html><body>boom</body></html>`, ErrServer, ""},
		{415, `{"message":"bad type"}`, nil, "bad type"},
	}
	for _, tc := range cases {
		c, mock := mkClient(t, WithRetry(RetryPolicy{MaxAttempts: 1}))
		mock.RegisterNoResponder(httpmock.NewStringResponder(tc.status, tc.body))
		err := c.Images.Put(t.Context(), "logo", strings.NewReader("x"), "image/png", nil)
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("%d: %v is not an *APIError", tc.status, err)
		}
		if apiErr.StatusCode != tc.status || apiErr.Method != "PUT" || apiErr.Path != "/prefix/api/v3/images/logo" || apiErr.Message != tc.msg || string(apiErr.Body) != tc.body {
			t.Errorf("%d: %+v", tc.status, apiErr)
		}
		if tc.target != nil && !errors.Is(err, tc.target) {
			t.Errorf("%d: errors.Is(%v) false", tc.status, tc.target)
		}
		for _, other := range []error{ErrNotFound, ErrUnauthorized, ErrForbidden, ErrConflict, ErrRateLimited, ErrServer} {
			if other != tc.target && errors.Is(err, other) {
				t.Errorf("%d matches %v", tc.status, other)
			}
		}
	}
	c, mock := mkClient(t)
	mock.RegisterNoResponder(httpmock.NewStringResponder(415, `{"message":"use PNG"}`))
	err := c.Images.Put(t.Context(), "logo", strings.NewReader("x"), "image/png", nil)
	if got, want := err.Error(), "PUT /prefix/api/v3/images/logo: 415 Unsupported Media Type: use PNG"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	mock.RegisterNoResponder(httpmock.NewBytesResponder(500, bytes.Repeat([]byte("x"), 1<<20)))
	c.policy.MaxAttempts = 1
	err = c.Labels.Delete(t.Context(), "L")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || len(apiErr.Body) != maxErrorBody || len(apiErr.Message) > maxMessage || len(err.Error()) > maxMessage+100 {
		t.Errorf("1 MiB error body: kept %d bytes, message %d bytes", len(apiErr.Body), len(err.Error()))
	}
}

// TestNothingSentForBadInput proves every client-side check runs before any request.
func TestNothingSentForBadInput(t *testing.T) {
	c, mock := mkClient(t)
	ctx := t.Context()
	badNames := []string{"", ".", "..", "a\x00b", "tab\there", "del\x7f", "c1\u0085", "bad\xffutf8"}
	var calls []func() error
	for _, n := range badNames {
		calls = append(calls,
			func() error { _, err := c.Labels.Get(ctx, n); return err },
			func() error { return c.Labels.Put(ctx, n, json.RawMessage(`{}`)) },
			func() error { return c.Labels.Delete(ctx, n) },
			func() error { _, err := c.Labels.Simulate(ctx, n, nil); return err },
			func() error { _, err := c.Images.Info(ctx, n); return err },
			func() error { _, err := c.Images.Download(ctx, n, io.Discard); return err },
			func() error { return c.Images.Put(ctx, n, strings.NewReader("x"), "image/png", nil) },
			func() error { return c.Images.PutJSON(ctx, n, ImageUpload{Data: []byte("x")}) },
			func() error { return c.Images.Delete(ctx, n) },
			func() error { _, err := c.Images.WaitReady(ctx, n); return err },
			func() error { _, err := c.Tables.Get(ctx, n); return err },
			func() error { return c.Tables.Put(ctx, n, json.RawMessage(`{}`)) },
			func() error { return c.Tables.Delete(ctx, n) },
			func() error { _, err := c.Printers.AbortPrint(ctx, n); return err },
			func() error { _, err := c.Printers.Trigger(ctx, n); return err },
		)
		if n != "" { // "" is the single-printer path for these
			calls = append(calls,
				func() error { _, err := c.Printers.PrintJob(ctx, n, &PrintJob{LabelName: "L"}); return err },
				func() error { _, err := c.Printers.DeselectJobs(ctx, n); return err },
				func() error { _, err := c.Printers.Counters(ctx, n); return err },
				func() error { _, err := c.Printers.History(ctx, n, nil); return err },
			)
		}
	}
	jobs := []*PrintJob{
		nil, {}, {Copies: 2}, {LabelName: "L", Copies: -1}, {LabelName: "L", TableName: "T", FirstRow: -1},
		{LabelName: "L", TableName: "T", RowCount: -2}, {LabelName: "L", Key: "k"}, {LabelName: "L", KeyColumn: "k"},
		{LabelColumn: "c"}, {LabelName: "L", FirstRow: 1}, {LabelName: "L", RowCount: 1}, {LabelName: "L", CopiesColumn: "c"},
		{LabelName: "L", PrintedColumn: "c"}, {LabelName: "L", Extra: map[string]any{"labelName": "x"}},
		{LabelData: json.RawMessage(`{bad`)}, {LabelName: "L", Extra: map[string]any{"": 1}},
	}
	for _, j := range jobs {
		calls = append(calls, func() error { _, err := c.Printers.PrintJob(ctx, "p", j); return err })
	}
	for _, o := range []*SimulationOptions{{TableName: "T"}, {KeyColumn: "k"}, {Key: "v"}, {TableName: "T", KeyColumn: "k"}, {TableName: "T", Key: "v"}, {KeyColumn: "k", Key: "v"}} {
		calls = append(calls, func() error { _, err := c.Labels.Simulate(ctx, "L", o); return err })
	}
	calls = append(calls,
		func() error {
			_, err := c.Printers.History(ctx, "p", &HistoryOptions{Start: time.Unix(100, 0), End: time.Unix(99, 0)})
			return err
		},
		func() error { _, err := c.Printers.History(ctx, "p", &HistoryOptions{Resolution: "YEARS"}); return err },
		func() error { return c.Labels.Put(ctx, "L", []byte(`{not json`)) },
		func() error { return c.Labels.Put(ctx, "L", json.RawMessage(`[1,`)) },
		func() error { return c.Labels.Put(ctx, "L", nil) },
		func() error { return c.Tables.Put(ctx, "T", func() {}) },
		func() error { return c.Images.Put(ctx, "i", strings.NewReader("x"), "image/gif", nil) },
		func() error { return c.Images.Put(ctx, "i", strings.NewReader("x"), "", nil) },
		func() error { return c.Images.Put(ctx, "i", nil, "image/png", nil) },
		func() error { return c.Images.Put(ctx, "i", bytes.NewReader(nil), "image/png", nil) },
		func() error {
			return c.Images.Put(ctx, "i", strings.NewReader("x"), "image/png", &ImagePutOptions{Size: -1})
		},
		func() error { // a seeker that holds 1 byte, declared as 2
			return c.Images.Put(ctx, "i", strings.NewReader("x"), "image/png", &ImagePutOptions{Size: 2})
		},
		func() error { // a reader that tells its Len, declared otherwise
			return c.Images.Put(ctx, "i", bytes.NewBufferString("xyz"), "image/png", &ImagePutOptions{Size: 2})
		},
		func() error { return c.Images.PutJSON(ctx, "i", ImageUpload{}) },
		func() error { return c.Images.PutFile(ctx, "i", filepath.Join(t.TempDir(), "missing.png"), nil) },
		func() error { _, err := c.Images.Download(ctx, "i", nil); return err },
		func() error { var noCtx context.Context; _, err := c.Labels.List(noCtx); return err },
	)
	for i, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("call %d: %v, want ErrInvalidArgument", i, err)
		}
	}
	if n := mock.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
	t.Logf("%d bad inputs, %d requests", len(calls), mock.GetTotalCallCount())
	if _, err := c.Printers.PrintJob(ctx, "p", nil); err == nil || !strings.Contains(err.Error(), "DeselectJobs") {
		t.Errorf("empty job error does not point to DeselectJobs: %v", err)
	}
}

// TestNewClientValidation checks base URLs and options.
func TestNewClientValidation(t *testing.T) {
	good := map[string]string{
		"http://h":                 "http://h/api/v3",
		"http://h:8080/":           "http://h:8080/api/v3",
		"https://h/prefix":         "https://h/prefix/api/v3",
		"http://h/api/v3":          "http://h/api/v3",
		"http://h/x/api/v3/":       "http://h/x/api/v3",
		"HTTP://192.168.1.50":      "http://192.168.1.50/api/v3",
		"http://[fe80::1%25eth0]/": "http://[fe80::1%25eth0]/api/v3",
		"http://h/a%2Fb":           "http://h/a%2Fb/api/v3",
	}
	for in, want := range good {
		c, err := NewClient(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if c.BaseURL() != want {
			t.Errorf("%q: BaseURL %q, want %q", in, c.BaseURL(), want)
		}
	}
	bad := []string{"", "printer.local", "printer.local:8080/api", "192.168.1.50:8080", "//printer/api", "http://", "http:printer",
		"ftp://printer/", " http://printer/", "http://printer/api?x=1", "http://printer/#f", "http://u:s3cr3t@printer/", "http://h:99999/", "http://h:x/"}
	for _, in := range bad {
		_, err := NewClient(in)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%q accepted (%v)", in, err)
		} else if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: password in error %q", in, err)
		}
	}
	badOpts := []Option{nil, WithHTTPClient(nil), WithTLSConfig(nil), WithBearerToken(""), WithBearerToken("a\nb"),
		WithBasicAuth("", "p"), WithBasicAuth("a:b", "p"), WithHeader("", "v"), WithHeader("Bad Name", "v"),
		WithHeader("X-K", "v\r\nInjected: 1"), WithHeader("Idempotency-Key", "1"), WithHeader("x-idempotency-key", "1"),
		WithHeader("Content-Type", "text/plain"), WithUserAgent(" "), WithRetry(RetryPolicy{MaxAttempts: -1}),
		WithRetry(RetryPolicy{MinWait: time.Second, MaxWait: time.Millisecond}), WithLogger(nil),
		WithMaxResponseBytes(0), WithPollInterval(0)}
	for i, o := range badOpts {
		if _, err := NewClient("http://h", o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("option %d accepted: %v", i, err)
		}
	}
	if _, err := NewClient("http://h", WithBearerToken("t"), WithBasicAuth("u", "p")); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("two Authorization options accepted: %v", err)
	}
	if _, err := NewClient("http://h", WithHTTPClient(&http.Client{Transport: httpmock.NewMockTransport()}), WithTLSConfig(DefaultTransport().TLSClientConfig)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TLS config on a non-http.Transport accepted: %v", err)
	}
}
