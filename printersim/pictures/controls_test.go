package pictures_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestPageControlErrorsInChromium: a control the simulator refuses (a delay that is not a
// duration) says why beside the fault buttons, and the live status still says "live".
func TestPageControlErrorsInChromium(t *testing.T) {
	exe := chromium(t)
	srv, err := printersim.Start(printersim.WithUI())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("feed").textContent === "live"`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the page did not go live: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.getElementById("delay").value = "soon"; return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-fault="delay"]`))); err != nil {
		t.Fatal(err)
	}
	const shown = `(() => { const a = document.getElementById("fault-answer"); return [a ? a.textContent : "", document.getElementById("feed").textContent]; })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const a = document.getElementById("fault-answer"); return !!a && a.textContent.includes("delay must be a duration"); })()`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](shown))
		t.Fatalf("the refusal is not beside the fault buttons: answer and status %q (%v)", got, err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](shown)); err != nil || got[1] != "live" {
		t.Errorf("the live status after a refused control: %q (%v), want \"live\"", got, err)
	}
}
