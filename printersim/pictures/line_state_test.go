package pictures_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestPageLineStateInChromium: the page's Start and Stop buttons change the line, and each
// printer's own state line says so (running with the beat, or stopped) without a reload, even
// when no printer has a job and the line triggers nothing.
func TestPageLineStateInChromium(t *testing.T) {
	exe := chromium(t)
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPrinters("line1", "line2"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("feed").textContent === "live" && document.querySelectorAll(".printer .state").length === 2 && [...document.querySelectorAll(".printer .state")].every(s => s.textContent.startsWith("stopped"))`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the page did not go live showing the line stopped: %v", err)
	}
	for _, step := range []struct {
		button, want string
		running      bool
	}{{"line-start", "running, a beat every 1s", true}, {"line-stop", "stopped", false}} {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID(step.button))); err != nil {
			t.Fatal(err)
		}
		cond := `[...document.querySelectorAll(".printer .state")].every(s => s.textContent.startsWith("` + step.want + `"))`
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(3*time.Second))); err != nil {
			shown, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".printer .state")].map(s => s.textContent)`))
			t.Errorf("after %s each printer should say %q: %q (%v)", step.button, step.want, shown, err)
		}
		if running, _ := srv.Sim.Line(); running != step.running {
			t.Errorf("after %s the line runs: %v", step.button, running)
		}
	}
}
