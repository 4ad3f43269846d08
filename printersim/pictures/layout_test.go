package pictures_test

import (
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
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw), printersim.WithPrinters("line1", "line2"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
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
