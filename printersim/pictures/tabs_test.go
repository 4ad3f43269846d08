package pictures_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

// eventStreams is a proxy in front of a simulator that counts the event streams (/ui/events)
// its clients hold open and have opened.
type eventStreams struct {
	open, opened atomic.Int64
	srv          *httptest.Server
}

// countEventStreams starts an eventStreams proxy to target on 127.0.0.1, closed when the test
// ends (after the browsers the test opens later).
func countEventStreams(t *testing.T, target string) *eventStreams {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	tr := &http.Transport{}
	rp.Transport = tr
	es := &eventStreams{}
	es.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui/events" {
			es.open.Add(1)
			es.opened.Add(1)
			defer es.open.Add(-1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { es.srv.Close(); tr.CloseIdleConnections() })
	return es
}

// TestTenTabsShareOneStreamInChromium: ten tabs of one Chromium on the page hold one event
// stream between them (a stream each held the browser's 6 connections to the simulator from
// the 7th tab on, which never loaded, and no picture loaded in any): each tab shows each
// print live and its picture loads; the tab that opened the stream closes, and the nine others
// still show the next print live, on the one stream.
func TestTenTabsShareOneStreamInChromium(t *testing.T) {
	exe := chromium(t)
	srv, streams := tenTabsSetup(t)
	root := openBrowser(t, exe)
	if err := chromedp.Do(root, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	const tabs = 10
	tab := make([]context.Context, tabs)
	closeTab := make([]context.CancelFunc, tabs)
	for i := range tabs {
		tab[i], closeTab[i] = chromedp.NewContext(root)
		defer closeTab[i]()
		if err := chromedp.Do(tab[i], chromedp.Navigate("about:blank")); err != nil {
			t.Fatalf("opening tab %d: %v", i+1, err)
		}
		// A tab that cannot get a connection never loads: bounded, so that it fails soon.
		nav, cancel := context.WithTimeout(tab[i], 10*time.Second)
		err := chromedp.Do(nav, chromedp.Navigate(streams.srv.URL+"/"))
		cancel()
		if err != nil {
			t.Fatalf("tab %d of %d did not load: %v", i+1, tabs, err)
		}
	}
	for i := range tabs {
		if err := pollAcross(tab[i], `document.getElementById("feed").textContent === "live" && document.querySelectorAll(".printer").length === 1`, 10*time.Second); err != nil {
			t.Fatalf("tab %d of %d did not go live: %v", i+1, tabs, err)
		}
	}
	// shows waits until each of the tabs from first on lists trigger n with its picture loaded.
	shows := func(first, n int) {
		t.Helper()
		cond := showsPrint(n)
		for i := first; i < tabs; i++ {
			if err := pollAcross(tab[i], cond, 10*time.Second); err != nil {
				t.Fatalf("tab %d of %d does not show trigger %d with its picture: %v", i+1, tabs, n, err)
			}
		}
	}
	for n := 1; n <= 3; n++ {
		if printed, _ := srv.Sim.PressTrigger("line1"); !printed {
			t.Fatal("a trigger did not print")
		}
		shows(0, n)
	}
	if open, opened := streams.open.Load(), streams.opened.Load(); open != 1 || opened != 1 {
		t.Errorf("ten tabs hold %d event streams, %d opened; want one", open, opened)
	}

	// The first tab, which opened the stream, closes; the others stay live on it.
	if err := chromedp.Cancel(tab[0]); err != nil {
		t.Fatalf("closing the first tab: %v", err)
	}
	if printed, _ := srv.Sim.PressTrigger("line1"); !printed {
		t.Fatal("a trigger did not print")
	}
	shows(1, 4)
	if open := streams.open.Load(); open != 1 {
		t.Errorf("nine tabs hold %d event streams; want one", open)
	}
}

// tenTabsSetup starts a simulator with the page, pictures and a job on line1, and an
// eventStreams proxy in front of it (the address the tabs open); both are closed when the
// test ends.
func tenTabsSetup(t *testing.T) (*printersim.Server, *eventStreams) {
	t.Helper()
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw), printersim.WithPrinters("line1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/v3/labels/Carton", pageLabel},
		{"PUT", "/api/v3/tables/Products", `{"columns":["SKU","Name"],"rows":[["S12-342C","Hex bolt M8"]]}`},
		{"POST", "/api/v3/printers/line1/printJob", `{"labelName":"Carton","tableName":"Products","keyColumn":"SKU","key":"S12-342C"}`},
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
	return srv, countEventStreams(t, srv.URL)
}

// showsPrint is a page's condition: live, listing trigger n with its picture loaded.
func showsPrint(n int) string {
	return fmt.Sprintf(`(() => { const li = document.querySelector('.prints li[data-n="%d"]'); const i = li && li.querySelector("img");
		return document.getElementById("feed").textContent === "live" && i !== null && i.complete && i.naturalWidth > 0; })()`, n)
}

// TestTenTabsShareOneStreamInFirefox: as TestTenTabsShareOneStreamInChromium, in Firefox
// (whose limit is also 6 connections a server): ten tabs, one event stream, each print with
// its picture in every tab, the nine left live on the same stream once the first closes.
func TestTenTabsShareOneStreamInFirefox(t *testing.T) {
	exe := firefox(t)
	srv, streams := tenTabsSetup(t)
	ff := openFirefox(t, exe)
	const tabs = 10
	tab := make([]*bidi, tabs)
	for i := range tabs {
		var err error
		if tab[i], err = ff.newTab(); err != nil {
			t.Fatalf("opening tab %d: %v", i+1, err)
		}
		if err := tab[i].open(streams.srv.URL + "/"); err != nil {
			t.Fatalf("tab %d: %v", i+1, err)
		}
	}
	for i := range tabs {
		if err := tab[i].poll(`document.getElementById("feed") !== null && document.getElementById("feed").textContent === "live" && document.querySelectorAll(".printer").length === 1`, 10*time.Second); err != nil {
			t.Fatalf("tab %d of %d did not go live: %v", i+1, tabs, err)
		}
	}
	shows := func(first, n int) {
		t.Helper()
		for i := first; i < tabs; i++ {
			if err := tab[i].poll(showsPrint(n), 10*time.Second); err != nil {
				t.Fatalf("tab %d of %d does not show trigger %d with its picture: %v", i+1, tabs, n, err)
			}
		}
	}
	// One print before the first tab closes and one after: Firefox on ten tabs is slow enough
	// that three each way would take a minute.
	if printed, _ := srv.Sim.PressTrigger("line1"); !printed {
		t.Fatal("a trigger did not print")
	}
	shows(0, 1)
	if open, opened := streams.open.Load(), streams.opened.Load(); open != 1 || opened != 1 {
		t.Errorf("ten tabs hold %d event streams, %d opened; want one", open, opened)
	}
	if err := tab[0].closeTab(); err != nil {
		t.Fatalf("closing the first tab: %v", err)
	}
	if printed, _ := srv.Sim.PressTrigger("line1"); !printed {
		t.Fatal("a trigger did not print")
	}
	shows(1, 2)
	if open := streams.open.Load(); open != 1 {
		t.Errorf("nine tabs hold %d event streams; want one", open)
	}
}

// TestPageWithoutSharedWorkerInChromium: in a browser without shared workers (Chromium with
// SharedWorker taken away before the page's script runs) the page runs the feed as a worker
// of its own: it goes live on a stream of its own, and shows a print with its picture.
func TestPageWithoutSharedWorkerInChromium(t *testing.T) {
	exe := chromium(t)
	srv, streams := tenTabsSetup(t)
	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: "delete window.SharedWorker;"})
		return chromedp.Void{}, err
	}, chromedp.Navigate(streams.srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if err := pollAcross(ctx, `typeof SharedWorker === "undefined" && document.getElementById("feed").textContent === "live"`, 10*time.Second); err != nil {
		t.Fatalf("the page without SharedWorker did not go live: %v", err)
	}
	if printed, _ := srv.Sim.PressTrigger("line1"); !printed {
		t.Fatal("a trigger did not print")
	}
	if err := pollAcross(ctx, showsPrint(1), 10*time.Second); err != nil {
		t.Fatalf("the page without SharedWorker does not show the print with its picture: %v", err)
	}
	if open, opened := streams.open.Load(), streams.opened.Load(); open != 1 || opened != 1 {
		t.Errorf("the tab holds %d event streams, %d opened; want one", open, opened)
	}
}
