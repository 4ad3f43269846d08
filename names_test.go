package labelprinter

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestRealServerEscaping reads the raw request URI each name arrives as.
func TestRealServerEscaping(t *testing.T) {
	var mu sync.Mutex
	var uris []string
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.RequestURI)
		mu.Unlock()
		w.Write([]byte(`{}`))
	})
	c, _ := rtClient(t, srv.URL+"/base")
	ctx := t.Context()
	names := map[string]string{"a/b": "a%2Fb", "a b": "a%20b", "q?x": "q%3Fx", "h#1": "h%231", "50%": "50%25", "ü": "%C3%BC", "a+b;c": "a+b%3Bc", "..x": "..x"}
	for name, esc := range names {
		uris = nil
		_, _ = c.Labels.Get(ctx, name)
		_ = c.Images.Delete(ctx, name)
		_ = c.Tables.Put(ctx, name, []byte(`{}`))
		_, _ = c.Printers.Trigger(ctx, name)
		want := []string{"/base/api/v3/labels/" + esc, "/base/api/v3/images/" + esc, "/base/api/v3/tables/" + esc, "/base/api/v3/printers/" + esc + "/trigger"}
		if strings.Join(uris, " ") != strings.Join(want, " ") {
			t.Errorf("%q arrived as %v, want %v", name, uris, want)
		}
	}
}
