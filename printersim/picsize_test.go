package printersim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSizeOf: a label's picture size is its mm at its resolution, rounded half away from zero
// and turned by its rotation, as the drawing gives it; a resolution set alone serves both
// directions; a label without a size, or over MaxPicturePixels, has none.
func TestSizeOf(t *testing.T) {
	for _, c := range []struct {
		label      string
		hdpi, vdpi float64
		w, h       int
	}{
		{`{"width":50,"height":30}`, 300, 300, 591, 354},
		{`{"width":50,"height":30,"rotation":"CW90"}`, 300, 300, 354, 591},
		{`{"width":50,"height":30,"rotation":"CCW90"}`, 300, 300, 354, 591},
		{`{"width":50,"height":30,"rotation":"CW180"}`, 300, 300, 591, 354},
		{`{"width":50,"height":30,"hdpi":600}`, 600, 600, 1181, 709},
		{`{"width":50,"height":30,"vdpi":203}`, 203, 203, 400, 240},
		{`{"width":50,"height":30,"hdpi":600,"vdpi":200}`, 600, 200, 1181, 236},
		{`{"width":25.4,"height":0.1}`, 300, 300, 300, 1},
		{`{"width":50}`, 300, 300, 0, 0},
		{`{"width":50,"height":-1}`, 300, 300, 0, 0},
		{`{"width":"50","height":30}`, 300, 300, 0, 0},
		{`{"width":1000,"height":1000}`, 300, 300, 0, 0}, // 139 Mpx, over the cap
		{`{"width":50,"height":30,"hdpi":20000}`, 20000, 20000, 0, 0},
		{`not json`, 300, 300, 0, 0},
	} {
		s := sizeOf(json.RawMessage(c.label))
		if s.hdpi != c.hdpi || s.vdpi != c.vdpi || s.w != c.w || s.h != c.h {
			t.Errorf("%s: %v x %v dpi, %d x %d px; want %v x %v dpi, %d x %d px", c.label, s.hdpi, s.vdpi, s.w, s.h, c.hdpi, c.vdpi, c.w, c.h)
		}
	}
}

// TestPrintsListGivesPictureSize: the prints list and the print events give each print's
// picture size in pixels, so that the page reserves it before the picture loads.
func TestPrintsListGivesPictureSize(t *testing.T) {
	srv, err := Start(WithUI(), WithPrinters("p"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Sim.mu.Lock()
	srv.Sim.labels["L"] = json.RawMessage(`{"format":3,"width":50,"height":30,"rotation":"CW90","objs":[]}`)
	srv.Sim.mu.Unlock()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("POST", srv.URL+"/api/v3/printers/p/printJob", strings.NewReader(`{"labelName":"L"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for range 2 {
		if printed, _ := srv.Sim.PressTrigger("p"); !printed {
			t.Fatal("a trigger did not print")
		}
	}
	resp, err = client.Get(srv.URL + "/ui/printers/p/prints")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Prints []map[string]any `json:"prints"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	if len(l.Prints) != 2 {
		t.Fatalf("%d prints listed, want 2", len(l.Prints))
	}
	for _, e := range l.Prints {
		if e["width"] != 354.0 || e["height"] != 591.0 {
			t.Errorf("print %v: picture %v x %v px, want 354 x 591 (50 x 30 mm turned, at 300 dpi)", e["n"], e["width"], e["height"])
		}
	}
	srv.Sim.mu.Lock()
	ev := frame(event{name: "print", print: srv.Sim.printers["p"].prints[1].entry()})
	srv.Sim.mu.Unlock()
	if !bytes.Contains(ev, []byte(`"width":354,"height":591`)) {
		t.Errorf("the print event %q does not give the picture's size", ev)
	}
}
