package labelprinter

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// nginx's own error pages, byte for byte as nginx 1.2x sends them (CRLF line ends): the one it
// answers when ssl_verify_client is on and no client certificate came (its status 496, sent
// as 400), and the one for a body above client_max_body_size.
const (
	nginxMTLSPage = "<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>\r\n" +
		"<center><h1>400 Bad Request</h1></center>\r\n<center>No required SSL certificate was sent</center>\r\n" +
		"<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"
	nginx413Page = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n" +
		"<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)

// TestErrorPageMessages: over real HTTP, the reason of a proxy's HTML page or of a text body
// comes back in APIError.Message and in err.Error(), not only in Body.
func TestErrorPageMessages(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"nginx mTLS", "text/html", nginxMTLSPage, 400, "400 No required SSL certificate was sent"},
		{"nginx 413", "text/html", nginx413Page, 413, "413 Request Entity Too Large"},
		{"title with tags, entities and line breaks", "text/html; charset=utf-8",
			"<!DOCTYPE html><html><head>\n<TITLE>\n  Gateway   <em>Timeout</em>\n  &amp; more\n</TITLE></head><body><h1>ignored</h1></body></html>", 504, "Gateway Timeout & more"},
		{"no title, first h1", "text/html", "<html><body><h1 class=x>Printer\n  busy</h1><p>later</p></body></html>", 503, "Printer busy"},
		{"text first non-empty line", "text/plain; charset=utf-8", "\r\n   \n  label   table missing\t\nsecond line\n", 404, "label table missing"},
		{"text without a type", "", "forbidden here\nmore", 403, "forbidden here"},
		{"JSON problem details", "application/problem+json", `{"type":"about:blank","title":"Conflict","detail":"job running"}`, 409, "job running"},
		{"binary", "application/octet-stream", "\x00\x01binary", 500, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				} else {
					w.Header()["Content-Type"] = nil
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			c, _ := rtClient(t, srv.URL, WithRetry(RetryPolicy{MaxAttempts: 1}))
			_, err := c.Labels.Get(t.Context(), "L")
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("%v is not an *APIError", err)
			}
			if apiErr.Message != tc.want || string(apiErr.Body) != tc.body {
				t.Errorf("Message %q, want %q (Body %q)", apiErr.Message, tc.want, apiErr.Body)
			}
			if tc.want != "" && !strings.HasSuffix(err.Error(), ": "+tc.want) {
				t.Errorf("Error() = %q does not end in the message", err)
			}
		})
	}
}

// TestLongTextMessageBounded: a text body of one long line gives a message cut to 512 bytes on
// a character boundary.
func TestLongTextMessageBounded(t *testing.T) {
	m := errorMessage("text/plain", []byte(strings.Repeat("é", 1000)))
	if len(m) > maxMessage || len(m) < maxMessage-1 || !strings.HasPrefix(m, "éé") || strings.ContainsRune(m, '\uFFFD') {
		t.Errorf("message of %d bytes: %q", len(m), m)
	}
}
