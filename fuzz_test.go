package labelprinter

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"
)

// The fuzz targets check invariants, not just the absence of panics. Seeds come from the
// documented examples and the hostile cases of the reliability suite.

func FuzzDecodeImageInfo(f *testing.F) {
	f.Add([]byte(`{"fileSize":1234,"format":{"alpha":"NONE","bitsPerChannel":8,"channels":3,"colorSpace":"RGB"},"height":20,"height_mm":1.7,"intent":"SPOT_COLOR","state":"READY","uid":"u","width":30,"width_mm":2.5}`))
	f.Add([]byte(`{"fileSize":1.2e3,"format":{"channels":4.0},"state":"NEW_STATE"}`))
	f.Add([]byte(`{"fileSize":"12"}`))
	f.Add([]byte(`{"width":1e400}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var info ImageInfo
		if err := json.Unmarshal(b, &info); err != nil {
			return
		}
		// Whatever decoded must encode again and decode to the same value.
		out, err := json.Marshal(info)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var back ImageInfo
		if err := json.Unmarshal(out, &back); err != nil || back != info {
			t.Fatalf("round trip: %+v -> %s -> %+v (%v)", info, out, back, err)
		}
	})
}

func FuzzDecodeCounters(f *testing.F) {
	f.Add([]byte(`{"triggers":3,"triggerBounces":3.0,"printedLabels":3e0}`))
	f.Add([]byte(`{"triggers":-1,"triggerBounces":0,"printedLabels":9223372036854775807}`))
	f.Add([]byte(`{"triggers":9223372036854775808}`))
	f.Add([]byte(`{"triggers":1.5}`))
	// Partial answers: each is an error, never zeros.
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"status":"busy"}`))
	f.Add([]byte(`{"triggers":102}`))
	f.Add([]byte(`{"triggers":null,"triggerBounces":5,"printedLabels":497}`))
	f.Add([]byte(`{"triggers":"102","triggerBounces":5,"printedLabels":497}`))
	f.Add([]byte(`{"triggers":1,"triggerBounces":2,"printedLabels":3,"triggers":null}`))
	f.Add([]byte(`{"TRIGGERS":1,"triggerbounces":2,"PrintedLabels":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var pc PrintCounters
		err := json.Unmarshal(b, &pc)
		if err != nil || bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
			return
		}
		// Decoded counters were all there, as numbers, with the values encoding/json reads.
		var raw struct {
			Triggers, TriggerBounces, PrintedLabels *json.RawMessage
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", b, err)
		}
		for i, m := range []struct {
			raw *json.RawMessage
			got int64
		}{{raw.Triggers, pc.Triggers}, {raw.TriggerBounces, pc.TriggerBounces}, {raw.PrintedLabels, pc.PrintedLabels}} {
			if m.raw == nil {
				t.Fatalf("accepted %q without counter %d", b, i)
			}
			fv, err := strconv.ParseFloat(string(*m.raw), 64)
			if err != nil || float64(m.got) != math.Trunc(fv) {
				t.Fatalf("counter %d = %d from %s (%v)", i, m.got, *m.raw, err)
			}
		}
	})
}

func FuzzDecodeHistory(f *testing.F) {
	f.Add([]byte(`{"time":[1700000000,1700003600],"count":[5,1e1]}`))
	f.Add([]byte(`{"time":[1,2,3],"count":[1]}`))
	f.Add([]byte(`{"time":[ 1 , 2 ],"count":[]}`))
	f.Add([]byte(`{"time":[],"count":[]}`))
	f.Add([]byte(`{"time":null,"count":[1.0]}`))
	f.Add([]byte(`{"time":["1"],"count":[1]}`))
	// Incomplete answers: each is an error.
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"time":[1]}`))
	f.Add([]byte(`{"count":[1]}`))
	f.Add([]byte(`{"time":[1],"count":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h PrintHistory
		err := json.Unmarshal(b, &h)
		var ref struct{ Time, Count *[]float64 }
		refErr := json.Unmarshal(b, &ref)
		if err != nil || bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
			return
		}
		// Whatever the scanner accepts, encoding/json reads as the same numbers, both arrays
		// there and of one length.
		if refErr != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", b, refErr)
		}
		if ref.Time == nil || ref.Count == nil {
			t.Fatalf("accepted %q without time or count", b)
		}
		if len(*ref.Time) != len(h.Time) || len(*ref.Count) != len(h.Count) || len(h.Time) != len(h.Count) {
			t.Fatalf("lengths %d/%d, encoding/json %d/%d", len(h.Time), len(h.Count), len(*ref.Time), len(*ref.Count))
		}
		for i, v := range h.Time {
			if rv := (*ref.Time)[i]; float64(v) != rv && math.Abs(float64(v)-rv) > math.Abs(rv)*1e-15 {
				t.Fatalf("time[%d] = %d, encoding/json %v", i, v, rv)
			}
		}
		buckets, err := h.Buckets()
		if err != nil {
			t.Fatalf("Buckets of a decoded history: %v", err)
		}
		for i, bk := range buckets {
			if bk.Count != h.Count[i] || bk.Start.Unix() != h.Time[i] {
				t.Fatalf("bucket %d = %+v", i, bk)
			}
		}
	})
}

func FuzzDecodeDictionary(f *testing.F) {
	f.Add([]byte(`{"a":{},"b":{"width":1}}`))
	f.Add([]byte(``))
	f.Add([]byte(`null`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &Client{}
		op := &operation{method: "GET", path: "/labels"}
		var de *DecodeError
		raw, err := c.decodeRaw(op, 200, b)
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("untyped error %v", err)
		}
		if err == nil && len(raw) > 0 && !json.Valid(raw) {
			t.Fatalf("invalid JSON returned: %q", raw)
		}
		m, err := c.decodeDictionary(op, 200, b)
		if err != nil {
			if !errors.As(err, &de) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if m == nil {
			t.Fatal("nil dictionary without an error")
		}
		for k, v := range m {
			if !json.Valid(v) {
				t.Fatalf("entry %q is not JSON: %q", k, v)
			}
		}
	})
}

func FuzzErrorMessage(f *testing.F) {
	f.Add("", []byte(`{"message":"no label"}`))
	f.Add("application/json", []byte(`{"error":"token expired"}`))
	f.Add("application/problem+json", []byte(`{"title":"Bad","detail":"no such table"}`))
	f.Add("", []byte("line one\nline two\r\n"))
	f.Add("text/plain; charset=utf-8", []byte("\n \r\n  first line \t here\nsecond"))
	f.Add("", []byte(`<html>oops</html>`))
	f.Add("text/html", []byte(nginxMTLSPage))
	f.Add("text/html", []byte("<TITLE lang=en>a <b>b</b> &amp;\n c</TITLE><h1>x</h1>"))
	f.Add("text/html", []byte("<titlebar><h1>only &#x41; heading"))
	f.Add("", []byte(`{"message":"a\u0000b\u2028c"}`))
	f.Add("application/octet-stream", []byte("\xff\xfe binary"))
	f.Fuzz(func(t *testing.T, contentType string, b []byte) {
		m := errorMessage(contentType, b)
		if len(m) > maxMessage || strings.ContainsAny(m, "\r\n\x00") || !utf8.ValidString(m) || strings.TrimSpace(m) != m || strings.Contains(m, "  ") {
			t.Fatalf("message %q", m)
		}
		e := &APIError{StatusCode: 500, Method: "GET", Path: "/api/v3/x", Message: m}
		if strings.ContainsAny(e.Error(), "\r\n") {
			t.Fatalf("multi-line error %q", e.Error())
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "5", "-5", "abc", "", "1.5", "99999999", "9223372037", "184467440737095516160", "Wed, 21 Oct 2015 07:28:00 GMT"} {
		f.Add(s)
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter([]string{s}, now)
		if d < 0 {
			t.Fatalf("negative wait %v for %q", d, s)
		}
		if !ok && d != 0 {
			t.Fatalf("wait %v without a value for %q", d, s)
		}
	})
}

func FuzzEscapeName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "..", ".", "", "a b", "?#%", "ü", "a\x00", "%2e%2e", "\x85", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		seg, err := escapeName("Fuzz", "label", name)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if seg == "." || seg == ".." || strings.ContainsAny(seg, "/?# ") {
			t.Fatalf("%q escaped to %q", name, seg)
		}
		back, err := url.PathUnescape(seg)
		if err != nil || back != name {
			t.Fatalf("%q escaped to %q which unescapes to %q (%v)", name, seg, back, err)
		}
		u, err := url.Parse("http://h/api/v3/labels/" + seg)
		if err != nil || u.EscapedPath() != "/api/v3/labels/"+seg {
			t.Fatalf("%q: path %q (%v)", name, u.EscapedPath(), err)
		}
	})
}

func FuzzParseBaseURL(f *testing.F) {
	for _, s := range []string{"http://h", "https://h:8443/api/v3", "printer.local:8080/api", "http://u:p@h/", "http://h/?x#f", "HTTP://H/a%2Fb/", "http://[fe80::1%25eth0]/", "http://", "http://h/api/v2", "http://h/API/V3", "http://[::%25\xbf]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		base, path, err := parseBaseURL(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error %v", err)
			}
			if u, perr := url.Parse(raw); perr == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && len(p) > 3 && strings.Contains(err.Error(), p) {
					t.Fatalf("password in error %q", err)
				}
			}
			return
		}
		u, err := url.Parse(base + "/labels/x")
		if err != nil {
			t.Fatalf("%q gave unparsable base %q: %v", raw, base, err)
		}
		if !strings.HasSuffix(base, path) || u.EscapedPath() != path+"/labels/x" {
			t.Fatalf("%q gave base %q and path %q, which requests %q", raw, base, path, u.EscapedPath())
		}
		if _, ok := apiVersion(path); !ok || !strings.EqualFold(path[len(path)-len("/api/v3"):], "/api/v3") || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("%q gave base %q", raw, base)
		}
	})
}

func FuzzPrintJob(f *testing.F) {
	f.Add("MEDIUM", "", "", "", "", 0, 0, 0, "", true, "repeatPrint", "x")
	f.Add("", "Label", "My Table", "SKU", "S12-342C", 2, 0, 0, "", false, "", "")
	f.Add("", "", "", "", "", -1, -1, -1, `{"format":3}`, false, "labelName", "dup")
	f.Fuzz(func(t *testing.T, label, labelCol, table, keyCol, key string, copies, firstRow, rowCount int, data string, queue bool, extraKey, extraVal string) {
		j := &PrintJob{LabelName: label, LabelColumn: labelCol, TableName: table, KeyColumn: keyCol, Key: key,
			Copies: copies, FirstRow: firstRow, RowCount: rowCount, Queue: Ptr(queue)}
		if data != "" {
			j.LabelData = json.RawMessage(data)
		}
		if extraKey != "" {
			j.Extra = map[string]any{extraKey: extraVal}
		}
		if err := j.Validate(); err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		b, err := j.MarshalJSON()
		if err != nil {
			t.Fatalf("valid job does not encode: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("invalid JSON %q: %v", b, err)
		}
		// encoding/json writes each invalid UTF-8 byte as U+FFFD, as a []rune conversion does.
		valid := func(s string) string { return string([]rune(s)) }
		if label != "" && m["labelName"] != valid(label) {
			t.Fatalf("labelName %v, want %q", m["labelName"], label)
		}
		if m["queue"] != queue {
			t.Fatalf("queue %v, want %v", m["queue"], queue)
		}
		if extraKey != "" && m[valid(extraKey)] != valid(extraVal) {
			t.Fatalf("extra %q = %v", extraKey, m[extraKey])
		}
		if copies > 0 && m["copies"] != float64(copies) {
			t.Fatalf("copies %v", m["copies"])
		}
		checkLikeEncodingJSON(t, j, b)
	})
}

// FuzzPrintJobEncoding holds the PrintJob encoder to encoding/json on the fields FuzzPrintJob
// leaves out: floats, the other strings and flags, and inline label data.
func FuzzPrintJobEncoding(f *testing.F) {
	f.Add("Label <&>", "line\n\"two\"\t\\", "Printed", 12.5, 1e-7, 3e21, true, `{"objects": [ {"text": "a<b"} ]}`)
	f.Add("\xff\xfe", "\u2028\u2029\x00\x1f\x7f", "", math.Copysign(0, -1), math.SmallestNonzeroFloat64, math.MaxFloat64, false, "")
	f.Add("ü😀", "", "c", 1.0, 100.0, 0.000001, false, `[1, 2]`)
	f.Fuzz(func(t *testing.T, label, desc, printed string, delay, gap, interval float64, freeze bool, data string) {
		j := &PrintJob{LabelName: label, Description: desc, PrintedColumn: printed, PrintDelay: delay,
			AutoPrintGap: gap, AutoPrintInterval: interval, Freeze: Ptr(freeze), Checkpoint: Ptr(!freeze)}
		if printed != "" {
			j.TableName = "T"
		}
		if data != "" {
			j.LabelData = json.RawMessage(data)
		}
		if err := j.Validate(); err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error %v", err)
			}
			if _, err := j.MarshalJSON(); err == nil && (math.IsNaN(delay) || math.IsInf(delay, 0)) {
				t.Fatalf("MarshalJSON encodes a printDelay of %v", delay)
			}
			return
		}
		b, err := j.MarshalJSON()
		if err != nil {
			t.Fatalf("valid job does not encode: %v", err)
		}
		checkLikeEncodingJSON(t, j, b)
	})
}

// TestPrintJobEncoding sets every field of PrintJob through reflection, so a field added later
// and forgotten by the encoder fails here, and compares the encoding with encoding/json's.
func TestPrintJobEncoding(t *testing.T) {
	j := &PrintJob{}
	v := reflect.ValueOf(j).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch name := v.Type().Field(i).Name; {
		case name == "Extra":
			f.Set(reflect.ValueOf(map[string]any{"zeta": []int{1, 2}, "alpha": "<b>", "mid\xff": nil}))
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes([]byte(` { "objects" : [ "x\u00e9" ] } `))
		case f.Kind() == reflect.String:
			f.SetString(name + " \"q\" \\ <&> \x01 é \xff")
		case f.Kind() == reflect.Int:
			f.SetInt(int64(i + 1))
		case f.Kind() == reflect.Float64:
			f.SetFloat(float64(i) + 0.25)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Bool:
			f.Set(reflect.ValueOf(Ptr(i%2 == 0)))
		default:
			t.Fatalf("field %s of kind %v: teach this test (and PrintJob.marshal) about it", name, f.Kind())
		}
	}
	b, err := j.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	checkLikeEncodingJSON(t, j, b)
	if want := `"labelName":"LabelName \"q\" \\ <&> \u0001 é \ufffd"`; !strings.Contains(string(b), want) {
		t.Errorf("encoded %s\nwant it to contain %s", b, want)
	}
	if !strings.Contains(string(b), `"labelData":{"objects":["x\u00e9"]}`) {
		t.Errorf("label data not compacted: %s", b)
	}
	if a, m, z := strings.Index(string(b), `"alpha":"<b>"`), strings.Index(string(b), `"mid\ufffd":null`), strings.Index(string(b), `"zeta":[1,2]}`); !(strings.Index(string(b), `"description"`) < a && a < m && m < z) {
		t.Errorf("Extra not merged in key order: %s", b)
	}

	for _, bad := range []*PrintJob{
		{LabelName: "L", PrintDelay: math.NaN()},
		{LabelName: "L", AutoPrintGap: math.Inf(1)},
		{LabelName: "L", AutoPrintInterval: math.Inf(-1)},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidArgument", bad, err)
		}
		if _, err := bad.MarshalJSON(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("MarshalJSON(%+v) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

// checkLikeEncodingJSON fails t unless b, the SDK's encoding of j, decodes to what encoding/json
// makes of the same fields and Extra (HTML escaping aside, which changes no decoded value).
func checkLikeEncodingJSON(t *testing.T, j *PrintJob, b []byte) {
	t.Helper()
	type plain PrintJob // without the MarshalJSON method
	wantBytes, err := json.Marshal((*plain)(j))
	if err != nil {
		t.Fatalf("encoding/json refuses %+v: %v", j, err)
	}
	var want, got map[string]any
	if err := json.Unmarshal(wantBytes, &want); err != nil {
		t.Fatal(err)
	}
	for k, v := range j.Extra {
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var key string
		var val any
		if json.Unmarshal(kb, &key) != nil || json.Unmarshal(vb, &val) != nil {
			t.Fatalf("extra %q: %s", k, vb)
		}
		want[key] = val
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the SDK's encoding is not JSON: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the SDK encodes\n%s\nencoding/json\n%s", b, wantBytes)
	}
}

func FuzzHistoryOptions(f *testing.F) {
	f.Add("HOURS", int64(1_700_000_000), int64(1_700_003_600))
	f.Add("", int64(0), int64(0))
	f.Add("YEARS", int64(5), int64(1))
	f.Add("DAYS", int64(-62135596800), int64(253402300799))
	f.Fuzz(func(t *testing.T, res string, start, end int64) {
		o := &HistoryOptions{Resolution: Resolution(res)}
		if start != 0 {
			o.Start = time.Unix(start, 0)
		}
		if end != 0 {
			o.End = time.Unix(end, 0)
		}
		if err := o.validate("Fuzz"); err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		q, err := encodeQuery("Fuzz", o)
		if err != nil {
			t.Fatal(err)
		}
		v, err := url.ParseQuery(q)
		if err != nil {
			t.Fatalf("unparsable query %q", q)
		}
		var s, e int64
		for name, dst := range map[string]*int64{"start": &s, "end": &e} {
			if raw := v.Get(name); raw != "" {
				if *dst, err = strconv.ParseInt(raw, 10, 64); err != nil {
					t.Fatalf("%s=%q is not an integer", name, raw)
				}
			}
		}
		// A zero time.Time (Unix -62135596800) is "not set" and is not sent.
		hasStart, hasEnd := !o.Start.IsZero(), !o.End.IsZero()
		if hasStart != v.Has("start") || hasEnd != v.Has("end") || hasStart && s != start || hasEnd && e != end {
			t.Fatalf("query %q for start %d end %d", q, start, end)
		}
		if hasStart && hasEnd && e < s {
			t.Fatalf("end before start passed: %q", q)
		}
		if v.Get("resolution") != res {
			t.Fatalf("resolution %q, want %q", v.Get("resolution"), res)
		}
	})
}

// FuzzExactReader holds the declared-length reader to its promise whatever the reader's read
// sizes: a body of exactly the declared length passes whole, and any other ends in an error
// before all declared bytes were handed over, so the printer never sees a complete request.
func FuzzExactReader(f *testing.F) {
	f.Add([]byte("0123456789"), int64(10), uint8(0))
	f.Add([]byte("0123456789"), int64(9), uint8(1))
	f.Add([]byte("0123456789"), int64(11), uint8(2))
	f.Add([]byte("x"), int64(1), uint8(1))
	f.Add([]byte{}, int64(1), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, declared int64, mode uint8) {
		if declared <= 0 || declared > 1<<20 {
			return
		}
		var r io.Reader = bytes.NewReader(data)
		switch mode % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.DataErrReader(iotest.HalfReader(r))
		}
		got, err := io.ReadAll(&exactReader{r: r, declared: declared, left: declared})
		if int64(len(data)) == declared {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("exact body: %d of %d bytes, err %v", len(got), len(data), err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%d bytes declared as %d passed without an error", len(data), declared)
		}
		if int64(len(got)) >= declared {
			t.Fatalf("%d bytes declared as %d: all %d declared bytes were handed over before the error", len(data), declared, len(got))
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatal("bytes handed over differ from the reader's")
		}
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add([]byte(`{"state":"STARTED","ragStatus":"GREEN","errors":[],"ink":[{"state":"STARTED","ragStatus":"GREEN","level":"OK","errors":[],"warnings":[]}],"printers":["line1"]}`))
	f.Add([]byte(`{"state":"WARP","ragStatus":"BLUE","errors":["lid open"],"ink":null,"extra":{"a":1}}`))
	f.Add([]byte(`{"state":3}`))
	f.Add([]byte(`{"ink":[{"level":["OK"]}]}`))
	f.Add([]byte(` null `))
	f.Add([]byte(`{"errors":"none"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var st PrinterStatus
		if err := json.Unmarshal(b, &st); err != nil {
			return
		}
		// encoding/json, on the same bytes, reads the same typed fields.
		var ref struct {
			State     string      `json:"state"`
			RAGStatus string      `json:"ragStatus"`
			Errors    []string    `json:"errors"`
			Ink       []InkStatus `json:"ink"`
		}
		if err := json.Unmarshal(b, &ref); err != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", b, err)
		}
		want := PrinterStatus{State: PrinterState(ref.State), RAGStatus: RAGStatus(ref.RAGStatus), Errors: ref.Errors, Ink: ref.Ink}
		if !sameStatus(&st, &want) {
			t.Fatalf("%q: %+v, encoding/json reads %+v", b, st, want)
		}
		// Raw is the body itself (nil for a JSON null, which leaves the status untouched).
		if st.Raw != nil && (!json.Valid(st.Raw) || !bytes.Equal(st.Raw, bytes.TrimSpace(b))) {
			t.Fatalf("raw %q from %q", st.Raw, b)
		}
		// The typed fields survive a round trip, and the copy does not alias the input.
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var back PrinterStatus
		if err := json.Unmarshal(out, &back); err != nil || !sameStatus(&st, &back) {
			t.Fatalf("round trip: %+v -> %s -> %+v (%v)", st, out, back, err)
		}
		in := bytes.Clone(b)
		var mine PrinterStatus
		if err := json.Unmarshal(in, &mine); err != nil {
			t.Fatal(err)
		}
		for i := range in {
			in[i] = 'x'
		}
		if !bytes.Equal(mine.Raw, st.Raw) {
			t.Fatal("Raw aliases the decoder's input")
		}
	})
}
