package pictures_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

// oddPrinterNames are printer names the API can address, each written into a URL path segment
// with a character a page must escape: a slash, a query and fragment mark, a percent sign, a
// space, a dot segment's look-alike, letters outside ASCII and a quote.
var oddPrinterNames = []string{"a/b", "x?y#z", "50% off", "hall 7", "..x", "ünï", `say "hi"`, "%2e%2e"}

// TestPageOddPrinterNamesInChromium: every printer name the API can address works on the
// page: the page goes live, each printer's card shows its job, its trigger button prints on
// that printer and no other, and the print's picture loads in that printer's card.
func TestPageOddPrinterNamesInChromium(t *testing.T) {
	exe := chromium(t)
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw), printersim.WithPrinters(oddPrinterNames...))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer func() { client.CloseIdleConnections(); srv.Close() }()
	api := func(method, path, body string, want int) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	api("PUT", "/api/v3/labels/Carton", pageLabel, 204)
	for _, name := range oddPrinterNames {
		api("POST", "/api/v3/printers/"+url.PathEscape(name)+"/printJob", `{"labelName":"Carton"}`, 200)
	}

	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	names, _ := json.Marshal(oddPrinterNames)
	cards := `(() => { const want = ` + string(names) + `;
		const shown = [...document.querySelectorAll(".printer")].map(p => p.querySelector(".name").textContent);
		return document.getElementById("feed").textContent === "live" && shown.length === want.length &&
			want.every(n => shown.includes(n)) &&
			[...document.querySelectorAll(".printer .queue tbody")].every(tb => tb.textContent.includes("Carton")); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cards, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("feed").textContent + " | " + [...document.querySelectorAll(".printer")].map(p => p.querySelector(".name").textContent + ": " + p.querySelector(".state").textContent + " / " + p.querySelector(".queue").textContent).join(" | ")`))
		t.Fatalf("the page did not go live with every printer and its job: %v\n%s", err, shown)
	}
	for i, name := range oddPrinterNames {
		q, _ := json.Marshal(name)
		card := `[...document.querySelectorAll(".printer")].find(p => p.querySelector(".name").textContent === ` + string(q) + `)`
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const c = `+card+`; c.scrollIntoView(); c.querySelector(".trigger").click(); return true; })()`)); err != nil {
			t.Fatal(err)
		}
		cond := fmt.Sprintf(`(() => { const c = %s; const i = c.querySelectorAll(".prints li.print img");
			c.scrollIntoView(); return i.length === 1 && i[0].complete && i[0].naturalWidth > 0; })()`, card)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](card+`.outerHTML`))
			t.Fatalf("printer %q: its trigger's print and picture did not show in its card: %v\n%s", name, err, state)
		}
		for j, other := range oddPrinterNames {
			c, ok := srv.Sim.Counters(other)
			want := int64(0)
			if j <= i {
				want = 1
			}
			if !ok || c.PrintedLabels != want {
				t.Errorf("after the page triggered %q, printer %q printed %d labels (known %v), want %d", name, other, c.PrintedLabels, ok, want)
			}
		}
	}
}
