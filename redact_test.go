package labelprinter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The checker below decodes output independently of the redactor: what it finds is what a
// reader of the error could find.

// testUnpercent decodes every valid %XX.
func testUnpercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// testUnJSON decodes every valid JSON string escape, surrogate pairs included.
func testUnJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case '"', '\\', '/':
			b.WriteByte(c)
			i++
		case 'b', 'f', 'n', 'r', 't':
			b.WriteByte(map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[c])
			i++
		case 'u':
			v, err := strconv.ParseUint(s[i+2:min(i+6, len(s))], 16, 16)
			if err != nil || i+6 > len(s) {
				b.WriteByte(s[i])
				continue
			}
			r := rune(v)
			n := 6
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
				if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
					if v2, err := strconv.ParseUint(s[i+8:i+12], 16, 16); err == nil {
						if d := utf16.DecodeRune(rune(v), rune(v2)); d != utf8.RuneError {
							r, n = d, 12
						}
					}
				}
			}
			b.WriteRune(r)
			i += n - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

var testRefs = regexp.MustCompile(`&#([0-9]{1,9});|&#[xX]([0-9a-fA-F]{1,8});|&(amp|lt|gt|quot|apos);`)

// testUnHTML decodes numeric character references and the five XML names.
func testUnHTML(s string) string {
	return testRefs.ReplaceAllStringFunc(s, func(m string) string {
		sub := testRefs.FindStringSubmatch(m)
		var v uint64
		switch {
		case sub[1] != "":
			v, _ = strconv.ParseUint(sub[1], 10, 32)
		case sub[2] != "":
			v, _ = strconv.ParseUint(sub[2], 16, 32)
		default:
			return map[string]string{"amp": "&", "lt": "<", "gt": ">", "quot": `"`, "apos": "'"}[sub[3]]
		}
		r := rune(v)
		if !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		return string(r)
	})
}

// testViews is s as written and through up to two decodings of any kind.
func testViews(s string) []string {
	views := []string{s}
	level := []string{s}
	for range 2 { // as deep as the rule promises, counted here on its own
		var next []string
		for _, v := range level {
			for _, d := range []func(string) string{testUnpercent, testUnJSON, testUnHTML} {
				if w := d(v); w != v {
					next = append(next, w)
				}
			}
		}
		views = append(views, next...)
		level = next
	}
	return views
}

// leak returns a run of secret that a view of out holds: credentialWindow bytes of it, or
// the whole of it when it is shorter; a space and a plus count as one (form encoding).
func leak(out, secret string) (string, bool) {
	out = strings.ReplaceAll(out, redactedMark, "\x00")
	canon := func(s string) string { return strings.ReplaceAll(s, " ", "+") }
	secret = canon(secret)
	n := min(len(secret), credentialWindow)
	for _, v := range testViews(out) {
		v = canon(v)
		for i := 0; i+n <= len(secret); i++ {
			if strings.Contains(v, secret[i:i+n]) {
				return secret[i : i+n], true
			}
		}
	}
	return "", false
}

// spell writes secret the way a server may echo it. Modes below 0x40 apply one spelling to
// every character; above, each character gets its own, drawn from seed.
func spell(secret string, mode uint8, seed uint64) string {
	switch mode % 0x48 {
	case 0:
		return secret
	case 1: // encoding/json
		b, _ := json.Marshal(secret)
		return string(b[1 : len(b)-1])
	case 2:
		return url.QueryEscape(secret)
	case 3:
		return url.PathEscape(secret)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(mode)))
	var b strings.Builder
	for i := 0; i < len(secret); {
		r, n := utf8.DecodeRuneInString(secret[i:])
		raw := secret[i : i+n]
		i += n
		m := int(mode % 0x48)
		if m >= 0x40 {
			m = 4 + rng.IntN(9)
		}
		if r == utf8.RuneError && n == 1 && m != 7 && m != 8 && m != 9 {
			m = 7 // a byte that is not UTF-8 has only its raw and percent spellings
		}
		switch m % 13 {
		case 4: // PHP json_encode: \/ and \uXXXX for non-ASCII
			switch {
			case r == '/':
				b.WriteString(`\/`)
			case r >= 0x80:
				writeU(&b, r, false)
			default:
				b.WriteString(raw)
			}
		case 5: // .NET: \uXXXX, upper case
			writeU(&b, r, true)
		case 6: // \uxxxx, lower case
			writeU(&b, r, false)
		case 7: // %XX
			for j := 0; j < len(raw); j++ {
				fmt.Fprintf(&b, "%%%02X", raw[j])
			}
		case 8: // %xx
			for j := 0; j < len(raw); j++ {
				fmt.Fprintf(&b, "%%%02x", raw[j])
			}
		case 9: // %25XX: percent-encoded twice
			for j := 0; j < len(raw); j++ {
				fmt.Fprintf(&b, "%%25%02X", raw[j])
			}
		case 10:
			fmt.Fprintf(&b, "&#%d;", r)
		case 11:
			fmt.Fprintf(&b, "&#x%x;", r)
		default:
			b.WriteString(raw)
		}
	}
	return b.String()
}

func writeU(b *strings.Builder, r rune, upper bool) {
	f := "\\u%04x"
	if upper {
		f = "\\u%04X"
	}
	if r > 0xFFFF {
		r1, r2 := utf16.EncodeRune(r)
		fmt.Fprintf(b, f+f, r1, r2)
		return
	}
	fmt.Fprintf(b, f, r)
}

// FuzzRedaction places a credential, in a random spelling, in random text and across the
// 64 KiB cut of APIError.Body, and fails when any credentialWindow bytes of it (all of it when
// shorter) can still be read from what the redactor returns, as written or decoded.
func FuzzRedaction(f *testing.F) {
	f.Add("abc/DEF+ghi/JKL==", `{"message":"you sent Bearer `, `"}`, uint8(4), uint64(1), uint16(2))
	f.Add("abc/DEF+ghi/JKL==", "<p>", "</p>", uint8(5), uint64(2), uint16(0))
	f.Add("s3cr3t pass+word/ü", "token=", "&x=1", uint8(2), uint64(3), uint16(9))
	f.Add("CANARY-TOKEN-7f3a", "", "", uint8(0x41), uint64(4), uint16(17))
	f.Add("shortpw", "pw:", "", uint8(9), uint64(5), uint16(3))
	f.Add("tok\xffen-0123456789", `\u00`, "%", uint8(0x47), uint64(6), uint16(30))
	f.Add("😀-emoji-token-1234", "", "", uint8(6), uint64(7), uint16(5))
	// A credential's first letter after a literal backslash, the rest percent-encoded: "\b"
	// and "\t" must not hide it (found by this target; the "b" input is in testdata).
	f.Add("t\xd9", `\`, "0", uint8('d'), uint64(0), uint16(129))
	// A transport's token given to WithRedactedValues, as PHP echoes it in a 401.
	f.Add("abc/DEF+ghi/JKL==", `{"error":"Bearer `, `\/api\/v3"}`, uint8(4), uint64(8), uint16(11))
	f.Fuzz(func(t *testing.T, secret, prefix, suffix string, mode uint8, seed uint64, back uint16) {
		if secret == "" || !validHeaderValue(secret) || strings.ContainsRune(secret, 0) {
			return
		}
		// The redactor is built as NewClient builds it from WithRedactedValues, the option
		// whose values no header of the Client's shows; the Client's own credentials reach
		// the same newRedactor.
		c, err := NewClient("http://printer.invalid", WithRedactedValues(secret))
		if err != nil {
			t.Fatal(err)
		}
		r := c.redactor
		enc := spell(secret, mode, seed)
		text := prefix + enc + suffix
		if run, ok := leak(string(r.redact([]byte(text))), secret); ok {
			t.Fatalf("%q in %q: run %q survives", secret, text, run)
		}
		// Across the cut: the spelling starts k bytes before it.
		k := int(back) % (len(enc) + 1)
		body := strings.Repeat(".", maxErrorBody-k) + enc + suffix
		out := r.readCut(strings.NewReader(body), maxErrorBody)
		if len(out) > maxErrorBody {
			t.Fatalf("kept %d bytes", len(out))
		}
		if run, ok := leak(string(out[max(0, len(out)-4*len(enc)-64):]), secret); ok {
			t.Fatalf("%q spelled %q, cut %d bytes in: run %q survives", secret, enc, k, run)
		}
		if bytes.HasSuffix(out, []byte("[REDA")) {
			t.Fatalf("a mark cut in two")
		}
	})
}

// TestCredentialEchoes: a server that echoes the credential back, in every spelling, in a
// JSON error, an HTML page, a text body, a 2xx body that does not decode, across the 64 KiB
// cut of Body, and in a redirect's Location: no run of it comes back in the error, any of its
// fields, or the debug log.
func TestCredentialEchoes(t *testing.T) {
	const token = "abc/DEF+ghi/JKL==tail-0123456789"
	auths := []struct {
		name   string
		opt    Option
		secret string
	}{
		{"bearer", WithBearerToken(token), token},
		{"basic password", WithBasicAuth("operator", "pa ss/w+rd=é-123456"), "pa ss/w+rd=é-123456"},
		{"short basic password", WithBasicAuth("operator", "pw+/9"), "pw+/9"},
		{"Authorization header", WithHeader("Authorization", "Token "+token), token},
		{"Cookie", WithHeader("Cookie", "session="+token), "session=" + token},
		{"X-Api-Key", WithHeader("X-Api-Key", token), token},
		{"Private-Token", WithHeader("private-token", "glpat-"+token), "glpat-" + token},
	}
	spellings := []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x40, 0x41, 0x42}
	var logs lockedBuffer
	logger := slogDebug(&logs)
	type answer struct {
		status int
		ctype  string
		body   string
	}
	var next atomic.Pointer[answer]
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		b := next.Load()
		if b.status == 302 {
			w.Header().Set("Location", "http://elsewhere.invalid/login/"+b.body+"?token="+b.body)
			w.WriteHeader(302)
			return
		}
		w.Header().Set("Content-Type", b.ctype)
		w.WriteHeader(b.status)
		io.WriteString(w, b.body)
	})
	for _, a := range auths {
		c, _ := rtClient(t, srv.URL, a.opt, WithLogger(logger), WithRetry(RetryPolicy{MaxAttempts: 1}))
		for _, mode := range spellings {
			enc := spell(a.secret, mode, uint64(mode))
			bodies := []answer{
				{401, "application/json", `{"message":"bad credentials ` + enc + `"}`},
				{403, "text/html", "<html><head><title>Denied " + enc + "</title></head><body>" + enc + "</body></html>"},
				{400, "text/plain", "\n" + enc + " refused\n"},
				{200, "application/json", `{"triggers":"` + enc + `"}`},
				// The spelling starts 7 bytes before the cut, then 1 byte before it.
				{500, "text/plain", strings.Repeat("x", maxErrorBody-7) + enc + "\n"},
				{500, "text/plain", strings.Repeat("x", maxErrorBody-1) + enc + "\n"},
				{302, "", enc},
			}
			for i, b := range bodies {
				next.Store(&b)
				_, err := c.Printers.Counters(t.Context(), "p")
				if err == nil {
					t.Fatalf("%s/%d/%d: no error", a.name, mode, i)
				}
				texts := []string{err.Error()}
				if b.status != 500 { // %#v of a 64 KiB Body is its bytes in hex, checked as Body
					texts = append(texts, fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
				}
				var apiErr *APIError
				if errors.As(err, &apiErr) {
					texts = append(texts, apiErr.Message, string(apiErr.Body[max(0, len(apiErr.Body)-4096):]), apiErr.Path)
					if len(apiErr.Body) > maxErrorBody {
						t.Errorf("%s: Body of %d bytes", a.name, len(apiErr.Body))
					}
					// Nothing of a credential that straddles the cut is kept, not even less
					// than a run: the cut falls after the redaction.
					if b.status == 500 && !bytes.HasSuffix(apiErr.Body, []byte("x")) {
						t.Errorf("%s/%d: the cut kept %q", a.name, mode, apiErr.Body[max(0, len(apiErr.Body)-20):])
					}
				}
				var decErr *DecodeError
				if errors.As(err, &decErr) {
					texts = append(texts, decErr.Snippet)
				}
				var redirErr *RedirectError
				if errors.As(err, &redirErr) {
					texts = append(texts, redirErr.Location, redirErr.Path)
				} else if b.status == 302 {
					t.Errorf("%s: redirect gave %v", a.name, err)
				}
				for _, text := range texts {
					if run, ok := leak(text, a.secret); ok {
						t.Errorf("%s, spelling %d, body %d: %q survives in %q", a.name, mode, i, run, text)
					}
				}
			}
		}
	}
	if run, ok := leak(logs.String(), token); ok {
		t.Errorf("%q in the log", run)
	}
}

func slogDebug(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// BenchmarkRedactErrorBody: the cost an error body of 64 KiB pays for redaction, with two
// credentials and one JSON-escaped echo in it.
func BenchmarkRedactErrorBody(b *testing.B) {
	r := newRedactor([]string{"abc/DEF+ghi/JKL==tail-0123456789", "pw+/9"})
	body := strings.Repeat(`{"message":"x"}`, (maxErrorBody-64)/15) + `abc\/DEF+ghi\/JKL==tail`
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r.readCut(strings.NewReader(body), maxErrorBody)
	}
}

// headerTransport adds credentials the Client never sees, as a transport of the caller's does
// (prometheus/common's, an OAuth2 one); fail, when set, is returned instead of sending, as a
// token fetch that failed returns its endpoint's answer.
type headerTransport struct {
	header map[string]string
	fail   error
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.fail != nil {
		return nil, h.fail
	}
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestRedactedValues: credentials a WithHTTPClient transport adds are kept out of errors and
// the log by WithRedactedValues, in every spelling and across the cut, as the Client's own;
// without the option the same echo shows them, so the check can fail.
func TestRedactedValues(t *testing.T) {
	const token = "abc/DEF+ghi/JKL==tail-0123456789"
	const key = "plant-key/ü+9876543210"
	hc := &http.Client{Transport: headerTransport{header: map[string]string{
		"Authorization": "Bearer " + token, "X-Plant-Key": key,
	}}}
	var mode atomic.Int32
	var cut atomic.Bool
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		m := uint8(mode.Load())
		echo := spell(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), m, 1) + " " +
			spell(r.Header.Get("X-Plant-Key"), m, 2)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		if cut.Load() {
			io.WriteString(w, strings.Repeat("x", maxErrorBody-5)+echo)
			return
		}
		io.WriteString(w, `{"message":"refused `+echo+`"}`)
	})
	var logs lockedBuffer
	with, _ := rtClient(t, srv.URL, WithHTTPClient(hc), WithRedactedValues("", token), WithRedactedValues(key),
		WithLogger(slogDebug(&logs)), WithRetry(RetryPolicy{MaxAttempts: 1}))
	without, _ := rtClient(t, srv.URL, WithHTTPClient(hc), WithRetry(RetryPolicy{MaxAttempts: 1}))
	texts := func(err error) []string {
		out := []string{err.Error(), fmt.Sprintf("%+v", err)}
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			out = append(out, apiErr.Message, string(apiErr.Body[max(0, len(apiErr.Body)-4096):]))
		}
		return out
	}
	for _, m := range []uint8{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 0x40, 0x41} {
		for _, c := range []bool{false, true} {
			mode.Store(int32(m))
			cut.Store(c)
			_, err := with.Printers.Counters(t.Context(), "p")
			if err == nil {
				t.Fatal("no error")
			}
			for _, text := range texts(err) {
				for _, s := range []string{token, key} {
					if run, ok := leak(text, s); ok {
						t.Errorf("spelling %d, cut %v: %q survives in %q", m, c, run, text)
					}
				}
			}
			if c {
				continue
			}
			_, err = without.Printers.Counters(t.Context(), "p")
			if _, ok := leak(strings.Join(texts(err), "\n"), token); !ok {
				t.Errorf("spelling %d: without the option the echo does not show, so the check proves nothing: %v", m, err)
			}
		}
	}
	if run, ok := leak(logs.String(), token); ok {
		t.Errorf("%q in the log", run)
	}

	// The transport's own error, as an OAuth2 token fetch reports its endpoint's answer.
	failing := &http.Client{Transport: headerTransport{fail: fmt.Errorf(`oauth2: cannot fetch token: 401 Unauthorized Response: {"client_secret":"%s"}`, spell(token, 4, 0))}}
	c, _ := rtClient(t, srv.URL, WithHTTPClient(failing), WithRedactedValues(token), WithRetry(RetryPolicy{MaxAttempts: 1}))
	_, err := c.Printers.Counters(t.Context(), "p")
	var te *TransportError
	if !errors.As(err, &te) {
		t.Fatalf("got %v", err)
	}
	if run, ok := leak(err.Error(), token); ok {
		t.Errorf("%q survives in the transport error %q", run, err)
	}

	// Redact: the same rule for the caller's text; nothing to redact, nothing changed.
	if run, ok := leak(c.Redact("probe failed: Bearer "+spell(token, 2, 0)), token); ok {
		t.Errorf("Redact kept %q", run)
	}
	none, _ := rtClient(t, srv.URL, WithRedactedValues("", ""))
	if none.redactor != nil || none.Redact("Bearer "+token) != "Bearer "+token {
		t.Error("empty values are redacted")
	}
}

// rotatingTransport sends the token of the moment, as a transport re-reading a file does.
type rotatingTransport struct{ token *atomic.Pointer[string] }

func (rt rotatingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+*rt.token.Load())
	return http.DefaultTransport.RoundTrip(r)
}

// TestRedactedValuesFunc: a credential that rotates while the Client lives is kept out of its
// errors and log lines once WithRedactedValuesFunc gives it, and the function is called for
// errors only, not for a request that succeeds; a Client told only the first value shows the
// rotated one, so the check can fail.
func TestRedactedValuesFunc(t *testing.T) {
	const first, rotated = "abc/DEF+ghi/JKL==first-0123456789", "xyz/UVW+rst/OPQ==second-987654321"
	var token atomic.Pointer[string]
	f := first
	token.Store(&f)
	var ok atomic.Bool
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		if ok.Load() {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
			return
		}
		a := r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"refused `+a+" "+strings.ReplaceAll(a, "/", `\/`)+`"}`)
	})
	hc := &http.Client{Transport: rotatingTransport{&token}}
	var calls atomic.Int32
	var logs lockedBuffer
	c, _ := rtClient(t, srv.URL, WithHTTPClient(hc), WithRedactedValues(first),
		WithRedactedValuesFunc(func() []string { calls.Add(1); return []string{*token.Load()} }),
		WithLogger(slogDebug(&logs)), WithRetry(RetryPolicy{MaxAttempts: 2}))
	static, _ := rtClient(t, srv.URL, WithHTTPClient(hc), WithRedactedValues(first), WithRetry(RetryPolicy{MaxAttempts: 1}))
	if _, err := NewClient(srv.URL, WithRedactedValuesFunc(nil)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil function: got %v", err)
	}

	// A Client without a logger: only an error calls the function.
	quiet, _ := rtClient(t, srv.URL, WithHTTPClient(hc),
		WithRedactedValuesFunc(func() []string { calls.Add(1); return nil }))
	ok.Store(true)
	for range 3 {
		if _, err := quiet.Printers.AbortPrint(t.Context(), "p"); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("requests that succeeded called the function %d times", n)
	}
	ok.Store(false)
	if _, err := quiet.Printers.AbortPrint(t.Context(), "p"); err == nil || calls.Load() == 0 {
		t.Errorf("an error did not call the function (%v)", err)
	}

	rot := rotated
	token.Store(&rot)
	_, err := c.Printers.Counters(t.Context(), "p")
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("got %v", err)
	}
	for _, text := range []string{err.Error(), apiErr.Message, string(apiErr.Body), c.Redact("x " + rotated), logs.String()} {
		for _, s := range []string{first, rotated} {
			if run, ok := leak(text, s); ok {
				t.Errorf("%q survives in %q", run, text)
			}
		}
	}
	_, err = static.Printers.Counters(t.Context(), "p")
	if _, ok := leak(err.Error(), rotated); !ok {
		t.Errorf("without the function the rotated token does not show, so the check proves nothing: %v", err)
	}
}
