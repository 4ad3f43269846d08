package pictures_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

// TestPageLayoutInChromium: with 200 prints kept on the first of two printers, the second
// printer's card starts within two window heights of the page's top, before and after the
// first printer's list is scrolled to its end and its pictures load: each printer's prints
// scroll in their own area.
func TestPageLayoutInChromium(t *testing.T) {
	exe := chromium(t)
	srv := twoPrintersWithKeptPrints(t)
	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("feed").textContent === "live" && document.querySelectorAll(".printer").length === 2 && document.querySelectorAll(".printer")[0].querySelectorAll(".prints li").length === 200`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the page did not go live with 200 prints: %v", err)
	}
	const second = `(() => { const c = document.querySelectorAll(".printer")[1]; return [c.getBoundingClientRect().top + window.scrollY, window.innerHeight]; })()`
	check := func(when string) {
		t.Helper()
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](second))
		if err != nil {
			t.Fatal(err)
		}
		if at[0] > 2*at[1] {
			t.Errorf("%s: the second printer's card starts %.0f px down, a window is %.0f", when, at[0], at[1])
		}
	}
	check("the list loaded")
	// Scroll the first list to its end, and the page with it, letting its pictures load.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const l = document.querySelector(".printer .prints"); l.scrollTop = l.scrollHeight; l.lastElementChild.scrollIntoView(); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const i = document.querySelector(".printer .prints li:last-child img"); return i && i.complete && i.naturalWidth > 0; })()`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Errorf("the oldest print's picture did not load: %v", err)
	}
	check("the first list scrolled to its end")
}

// twoPrintersWithKeptPrints starts a simulator with the page and two printers, the first with
// KeptPrints prints of a 50 x 30 mm label kept; it is closed when the test ends.
func twoPrintersWithKeptPrints(t *testing.T) *printersim.Server {
	t.Helper()
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw), printersim.WithPrinters("line1", "line2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/v3/labels/L", `{"format":3,"width":50,"height":30,"objs":[]}`},
		{"POST", "/api/v3/printers/line1/printJob", `{"labelName":"L"}`},
	} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d", r.method, r.path, resp.StatusCode)
		}
	}
	for range printersim.KeptPrints {
		if printed, _ := srv.Sim.PressTrigger("line1"); !printed {
			t.Fatal("a trigger did not print")
		}
	}
	return srv
}

// TestPicturesReserveTheirSizeInChromium: with 200 prints kept on the first of two printers,
// each picture has its place before it loads: the first list's height, the place of its
// oldest print and the second printer's card stay where they were (within a pixel) once the
// pictures at both ends of the list have loaded, and a loaded picture's box is the one it
// reserved.
func TestPicturesReserveTheirSizeInChromium(t *testing.T) {
	exe := chromium(t)
	srv := twoPrintersWithKeptPrints(t)
	for _, zoom := range []bool{false, true} {
		t.Run(fmt.Sprintf("zoom=%v", zoom), func(t *testing.T) { picturesReserveTheirSize(t, exe, srv, zoom) })
	}
}

// picturesReserveTheirSize is TestPicturesReserveTheirSizeInChromium in a browser of its own,
// the 1:1 zoom switched on before the list is read when zoom is true.
func picturesReserveTheirSize(t *testing.T, exe string, srv *printersim.Server, zoom bool) {
	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if zoom {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const z = document.getElementById("zoom"); z.checked = true; z.dispatchEvent(new Event("change")); return true; })()`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("feed").textContent === "live" && document.querySelectorAll(".printer").length === 2 && document.querySelectorAll(".printer")[0].querySelectorAll(".prints li").length === 200
		&& [...document.querySelectorAll(".printer")].every(c => c.querySelector(".state").textContent.includes("last trigger") && c.querySelector(".queue tbody tr") !== null)`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the page did not go live with 200 prints: %v", err)
	}
	// The list's height, its oldest print's place in it, the oldest picture's box, the second
	// card's place on the page, and whether the oldest picture has loaded.
	const measure = `(() => {
		const l = document.querySelector(".printer .prints"), last = l.lastElementChild, img = last.querySelector("img");
		const c = document.querySelectorAll(".printer")[1];
		return [l.scrollHeight, last.offsetTop - l.offsetTop, img.getBoundingClientRect().width, img.getBoundingClientRect().height,
			c.getBoundingClientRect().top + window.scrollY, img.complete && img.naturalWidth > 0 ? 1 : 0];
	})()`
	before, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](measure))
	if err != nil {
		t.Fatal(err)
	}
	if before[5] == 1 {
		t.Fatal("the oldest print's picture loaded before the list was scrolled to it: nothing to compare")
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const l = document.querySelector(".printer .prints"); l.scrollTop = l.scrollHeight; return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const i = document.querySelector(".printer .prints li:last-child img"), j = document.querySelector(".printer .prints li:first-child img");
		return i.complete && i.naturalWidth > 0 && j.complete && j.naturalWidth > 0; })()`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the newest and oldest prints' pictures did not load: %v", err)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](measure))
	if err != nil {
		t.Fatal(err)
	}
	for i, what := range []string{"the first list's height", "the oldest print's place in its list", "the oldest picture's width", "the oldest picture's height", "the second card's place"} {
		if math.Abs(after[i]-before[i]) > 1 {
			t.Errorf("%s moved from %.0f px to %.0f px as the pictures loaded", what, before[i], after[i])
		}
	}
	if before[3] < 100 {
		t.Errorf("the oldest picture reserved %.0f x %.0f px before it loaded, not its 50 x 30 mm's shape", before[2], before[3])
	}
	if want := 50 * 96 / 25.4; zoom && math.Abs(after[2]-want) > 1 {
		t.Errorf("at 1:1 the oldest picture is %.1f px wide, want 50 mm, %.1f CSS px", after[2], want)
	}
}
