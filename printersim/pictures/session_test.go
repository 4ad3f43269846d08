package pictures_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestPageSessionEndsInChromium: a page logged in with the token, whose session ends (here the
// simulator restarted on the same address, so the session is unknown), shows the login form
// again rather than staying on what it last showed, as if still trying to reconnect.
func TestPageSessionEndsInChromium(t *testing.T) {
	exe := chromium(t)
	const token = "page-session-token"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	a := printersim.Serve(ln, printersim.New(printersim.WithUI(), printersim.WithToken(token)))
	aClosed := false
	defer func() {
		if !aClosed {
			a.Close()
		}
	}()

	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(a.URL+"/"),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`))); err != nil {
		t.Fatalf("logging in: %v", err)
	}
	if err := pollAcross(ctx, `document.getElementById("feed") !== null && document.getElementById("feed").textContent === "live"`, 20*time.Second); err != nil {
		t.Fatalf("the page did not go live after the login: %v", err)
	}

	a.Close()
	aClosed = true
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address %s could not be listened on again: %v", addr, err)
	}
	b := printersim.Serve(ln, printersim.New(printersim.WithUI(), printersim.WithToken(token)))
	defer b.Close()
	if err := pollAcross(ctx, `document.querySelector('form[action="/ui/login"]') !== null`, 10*time.Second); err != nil {
		feed, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("feed") || {}).textContent || ""`))
		t.Fatalf("the page whose session ended did not show the login form (it says %q): %v", feed, err)
	}
}

// pollAcross waits until cond is true in the tab, repeating a poll cut short by the page
// navigating (a form's answer, a reload).
func pollAcross(ctx context.Context, cond string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
