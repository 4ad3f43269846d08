package pictures_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// browserCookies returns the cookies the browser holds for url, HttpOnly ones included.
func browserCookies(url string) chromedp.Action[[]*network.Cookie] {
	return func(ctx context.Context, t *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
		return res.Cookies, err
	}
}

// TestPageLogoutInChromium: the page's Log out button, clicked in Chromium (whose form post
// carries Origin "null" under the page's no-referrer policy), ends the session: the page shows
// the login form, the browser holds no session cookie, and the session's id, sent again, is
// refused by the simulator.
func TestPageLogoutInChromium(t *testing.T) {
	exe := chromium(t)
	const token = "page-logout-token"
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer func() { client.CloseIdleConnections(); srv.Close() }()

	ctx := openBrowser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`))); err != nil {
		t.Fatalf("logging in: %v", err)
	}
	if err := pollAcross(ctx, `document.getElementById("feed") !== null && document.getElementById("feed").textContent === "live"`, 20*time.Second); err != nil {
		t.Fatalf("the page did not go live after the login: %v", err)
	}
	cookies, err := chromedp.Run(ctx, browserCookies(srv.URL+"/"))
	if err != nil || len(cookies) != 1 {
		t.Fatalf("the browser's cookies after the login: %v %v", cookies, err)
	}
	session := cookies[0].Name + "=" + cookies[0].Value
	uiAuthorized := func() int {
		req, _ := http.NewRequest("GET", srv.URL+"/ui/printers", nil)
		req.Header.Set("Cookie", session)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := uiAuthorized(); code != http.StatusOK {
		t.Fatalf("the session's cookie before the logout: %d", code)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#logout button`))); err != nil {
		t.Fatalf("clicking Log out: %v", err)
	}
	if err := pollAcross(ctx, `document.querySelector('form[action="/ui/login"]') !== null`, 10*time.Second); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("Log out did not lead to the login form (the page shows %q): %v", strings.TrimSpace(body), err)
	}
	if cookies, err := chromedp.Run(ctx, browserCookies(srv.URL+"/")); err != nil || len(cookies) != 0 {
		t.Errorf("the browser's cookies after Log out: %v %v", cookies, err)
	}
	if code := uiAuthorized(); code != http.StatusUnauthorized {
		t.Errorf("the session's cookie after Log out: %d, want 401", code)
	}
}
