package pictures_test

import (
	"net"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestPageRestartWithOtherPrintersInChromium: a page showing printers line1 and line2, left
// open while the simulator restarts on the same address with printer alpha alone, shows alpha
// alone and goes live again.
func TestPageRestartWithOtherPrintersInChromium(t *testing.T) {
	exe := chromium(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	a := printersim.Serve(ln, printersim.New(printersim.WithUI(), printersim.WithPrinters("line1", "line2")))
	aClosed := false
	defer func() {
		if !aClosed {
			a.Close()
		}
	}()
	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(a.URL+"/")); err != nil {
		t.Fatal(err)
	}
	const names = `[...document.querySelectorAll(".printer .name")].map(e => e.textContent).join(",")`
	if err := pollAcross(ctx, `document.getElementById("feed").textContent === "live" && `+names+` === "line1,line2"`, 20*time.Second); err != nil {
		t.Fatalf("the page did not go live showing line1 and line2: %v", err)
	}
	a.Close()
	aClosed = true
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address %s could not be listened on again: %v", addr, err)
	}
	b := printersim.Serve(ln, printersim.New(printersim.WithUI(), printersim.WithPrinters("alpha")))
	defer b.Close()
	if err := pollAcross(ctx, `document.getElementById("feed") !== null && document.getElementById("feed").textContent === "live" && `+names+` === "alpha"`, 15*time.Second); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](names))
		t.Fatalf("after the restart the page shows %q, want alpha alone, live: %v", shown, err)
	}
}

// TestPageRestartWithOtherPrintersInFirefox: as TestPageRestartWithOtherPrintersInChromium, in
// Firefox: the page left open while the simulator restarts with alpha alone shows alpha alone
// and goes live again.
func TestPageRestartWithOtherPrintersInFirefox(t *testing.T) {
	exe := firefox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	a := printersim.Serve(ln, printersim.New(printersim.WithUI(), printersim.WithPrinters("line1", "line2")))
	aClosed := false
	defer func() {
		if !aClosed {
			a.Close()
		}
	}()
	ff := openFirefox(t, exe)
	if err := ff.navigate(a.URL + "/"); err != nil {
		t.Fatal(err)
	}
	const names = `[...document.querySelectorAll(".printer .name")].map(e => e.textContent).join(",")`
	if err := ff.poll(`document.getElementById("feed").textContent === "live" && `+names+` === "line1,line2"`, 20*time.Second); err != nil {
		t.Fatalf("the page did not go live showing line1 and line2: %v", err)
	}
	a.Close()
	aClosed = true
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address %s could not be listened on again: %v", addr, err)
	}
	b := printersim.Serve(ln, printersim.New(printersim.WithUI(), printersim.WithPrinters("alpha")))
	defer b.Close()
	if err := ff.poll(`document.getElementById("feed") !== null && document.getElementById("feed").textContent === "live" && `+names+` === "alpha"`, 15*time.Second); err != nil {
		var shown string
		_ = ff.eval(names, &shown)
		t.Fatalf("after the restart the page shows %q, want alpha alone, live: %v", shown, err)
	}
}
