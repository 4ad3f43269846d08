package pictures_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// firefox returns the Firefox to drive, skipping the test when there is none, or failing it
// when LABELPRINTER_REQUIRE_FIREFOX=1 (as .ci/run sets).
func firefox(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"firefox-esr", "firefox"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("LABELPRINTER_REQUIRE_FIREFOX") == "1" {
		t.Fatal("Firefox not found and LABELPRINTER_REQUIRE_FIREFOX=1: install it (Debian: apt-get install firefox-esr)")
	}
	t.Skip("Firefox not found: install it (Debian: apt-get install firefox-esr) to run the page in Firefox; LABELPRINTER_REQUIRE_FIREFOX=1 makes this a failure")
	return ""
}

// firefoxPrefs keep a throw-away profile quiet and on loopback: no update, telemetry, safe
// browsing, captive-portal or remote-settings request leaves the machine, and every name
// resolves to 127.0.0.1 (the cross-origin test's rebound.test among them).
const firefoxPrefs = `user_pref("network.dns.forceResolve", "127.0.0.1");
user_pref("network.proxy.type", 0);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("network.dns.disablePrefetch", true);
user_pref("network.prefetch-next", false);
user_pref("network.http.speculative-parallel-limit", 0);
user_pref("app.update.disabledForTesting", true);
user_pref("app.normandy.enabled", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("browser.safebrowsing.update.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.page", 0);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.newtabpage.enabled", false);
user_pref("browser.region.network.url", "");
user_pref("browser.search.update", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("extensions.update.enabled", false);
user_pref("extensions.blocklist.enabled", false);
user_pref("extensions.getAddons.cache.enabled", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
user_pref("network.trr.mode", 5);
user_pref("dom.push.connection.enabled", false);
user_pref("media.gmp-manager.url", "http://127.0.0.1:9/");
`

// bidi is a WebDriver BiDi session with a Firefox the test started, on one tab; the tabs
// newTab opens share its connection.
type bidi struct {
	t       *testing.T
	conn    *websocket.Conn
	context string      // the tab's browsing context
	mu      *sync.Mutex // the connection's, for one command at a time
	nextID  *int
}

var bidiURL = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// openFirefox starts Firefox headless with a fresh profile and returns a BiDi session on its
// first tab; Firefox is stopped when the test ends.
func openFirefox(t *testing.T, exe string) *bidi {
	t.Helper()
	profile := t.TempDir()
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxPrefs), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--headless", "--no-remote", "--profile", profile, "--remote-debugging-port", "0", "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := bidiURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	var ws string
	select {
	case ws = <-found:
	case <-exited:
		t.Fatal("Firefox exited before it listened for WebDriver BiDi")
	case <-time.After(60 * time.Second):
		stop()
		t.Fatal("Firefox did not listen for WebDriver BiDi within 60 s")
	}
	conn, _, err := websocket.DefaultDialer.Dial(strings.TrimSuffix(ws, "/")+"/session", nil)
	if err != nil {
		stop()
		t.Fatalf("connecting to Firefox's WebDriver BiDi at %s: %v", ws, err)
	}
	b := &bidi{t: t, conn: conn, mu: new(sync.Mutex), nextID: new(int)}
	t.Cleanup(func() {
		_ = b.send("browser.close", map[string]any{}, nil)
		conn.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			stop()
		}
	})
	if err := b.send("session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatalf("session.new: %v", err)
	}
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := b.send("browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		t.Fatalf("browsingContext.getTree: %v %v", tree, err)
	}
	b.context = tree.Contexts[0].Context
	return b
}

// send runs one BiDi command and decodes its result into res (when not nil); events that
// arrive meanwhile are skipped.
func (b *bidi) send(method string, params any, res any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	*b.nextID++
	id := *b.nextID
	_ = b.conn.SetWriteDeadline(time.Now().Add(time.Minute))
	if err := b.conn.WriteJSON(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		_ = b.conn.SetReadDeadline(time.Now().Add(time.Minute))
		var msg struct {
			ID      *int            `json:"id"`
			Type    string          `json:"type"`
			Error   string          `json:"error"`
			Message string          `json:"message"`
			Result  json.RawMessage `json:"result"`
		}
		if err := b.conn.ReadJSON(&msg); err != nil {
			return err
		}
		if msg.ID == nil || *msg.ID != id {
			continue
		}
		if msg.Type == "error" {
			return fmt.Errorf("%s: %s: %s", method, msg.Error, msg.Message)
		}
		if res != nil {
			return json.Unmarshal(msg.Result, res)
		}
		return nil
	}
}

// newTab opens a tab in the same Firefox and returns it, on the same session.
func (b *bidi) newTab() (*bidi, error) {
	var res struct {
		Context string `json:"context"`
	}
	if err := b.send("browsingContext.create", map[string]any{"type": "tab"}, &res); err != nil {
		return nil, err
	}
	tab := *b
	tab.context = res.Context
	return &tab, nil
}

// closeTab closes the tab.
func (b *bidi) closeTab() error {
	return b.send("browsingContext.close", map[string]any{"context": b.context}, nil)
}

// open starts loading url in the tab without waiting for it to load (a tab that cannot get a
// connection never would).
func (b *bidi) open(url string) error {
	return b.send("browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "none"}, nil)
}

// navigate loads url in the tab and waits until it has loaded.
func (b *bidi) navigate(url string) error {
	return b.send("browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "complete"}, nil)
}

// eval evaluates a JavaScript expression (a promise is awaited) in the tab and decodes its
// JSON-serialised value into v.
func (b *bidi) eval(expr string, v any) error {
	var res struct {
		Type   string `json:"type"`
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := b.send("script.evaluate", map[string]any{
		"expression":   "(async () => JSON.stringify(await (" + expr + ")))()",
		"target":       map[string]any{"context": b.context},
		"awaitPromise": true,
	}, &res)
	if err != nil {
		return err
	}
	if res.Type != "success" {
		return fmt.Errorf("evaluating %s: %s", expr, res.ExceptionDetails.Text)
	}
	var s string
	if err := json.Unmarshal(res.Result.Value, &s); err != nil {
		return fmt.Errorf("evaluating %s: %s %s", expr, res.Result.Type, res.Result.Value)
	}
	return json.Unmarshal([]byte(s), v)
}

// poll evaluates cond until it is true, across navigations, for at most timeout.
func (b *bidi) poll(cond string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		err := b.eval(cond, &ok)
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("still false")
			}
			return fmt.Errorf("waiting for %s: %w", cond, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// click moves the mouse onto the element selector names and clicks it, as a person would.
func (b *bidi) click(selector string) error {
	var node struct {
		Result struct {
			SharedID string `json:"sharedId"`
		} `json:"result"`
	}
	if err := b.send("script.evaluate", map[string]any{
		"expression": "document.querySelector(" + jsString(selector) + ")", "target": map[string]any{"context": b.context}, "awaitPromise": false,
	}, &node); err != nil || node.Result.SharedID == "" {
		return fmt.Errorf("finding %s: %v", selector, err)
	}
	return b.send("input.performActions", map[string]any{"context": b.context, "actions": []any{map[string]any{
		"type": "pointer", "id": "mouse", "parameters": map[string]any{"pointerType": "mouse"},
		"actions": []any{
			map[string]any{"type": "pointerMove", "x": 0, "y": 0, "origin": map[string]any{"type": "element", "element": map[string]any{"sharedId": node.Result.SharedID}}},
			map[string]any{"type": "pointerDown", "button": 0},
			map[string]any{"type": "pointerUp", "button": 0},
		},
	}}}, nil)
}

// cookies returns the tab's cookies (HttpOnly ones included) by name.
func (b *bidi) cookies() (map[string]string, error) {
	var res struct {
		Cookies []struct {
			Name  string `json:"name"`
			Value struct {
				Value string `json:"value"`
			} `json:"value"`
		} `json:"cookies"`
	}
	if err := b.send("storage.getCookies", map[string]any{"partition": map[string]any{"type": "context", "context": b.context}}, &res); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range res.Cookies {
		out[c.Name] = c.Value.Value
	}
	return out, nil
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPageLogoutInFirefox: as TestPageLogoutInChromium, in Firefox: Log out, clicked, shows
// the login form, leaves no session cookie, and the session's id is refused afterwards.
func TestPageLogoutInFirefox(t *testing.T) {
	exe := firefox(t)
	const token = "page-logout-token"
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer func() { client.CloseIdleConnections(); srv.Close() }()

	ff := openFirefox(t, exe)
	if err := ff.navigate(srv.URL + "/"); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	var ok bool
	if err := ff.eval(`(() => { document.querySelector('input[name="token"]').value = `+jsString(token)+`; document.querySelector('form[action="/ui/login"]').requestSubmit(); return true; })()`, &ok); err != nil {
		t.Fatalf("logging in: %v", err)
	}
	if err := ff.poll(`document.getElementById("feed") !== null && document.getElementById("feed").textContent === "live"`, 20*time.Second); err != nil {
		t.Fatalf("the page did not go live after the login: %v", err)
	}
	cookies, err := ff.cookies()
	if err != nil || len(cookies) != 1 {
		t.Fatalf("Firefox's cookies after the login: %v %v", cookies, err)
	}
	var session string
	for name, value := range cookies {
		session = name + "=" + value
	}
	uiStatus := func() int {
		req, _ := http.NewRequest("GET", srv.URL+"/ui/printers", nil)
		req.Header.Set("Cookie", session)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := uiStatus(); code != http.StatusOK {
		t.Fatalf("the session's cookie before the logout: %d", code)
	}
	if err := ff.click(`#logout button`); err != nil {
		t.Fatalf("clicking Log out: %v", err)
	}
	if err := ff.poll(`document.querySelector('form[action="/ui/login"]') !== null`, 10*time.Second); err != nil {
		var body string
		_ = ff.eval(`document.body.innerText`, &body)
		t.Fatalf("Log out did not lead to the login form (the page shows %q): %v", strings.TrimSpace(body), err)
	}
	if cookies, err := ff.cookies(); err != nil || len(cookies) != 0 {
		t.Errorf("Firefox's cookies after Log out: %v %v", cookies, err)
	}
	if code := uiStatus(); code != http.StatusUnauthorized {
		t.Errorf("the session's cookie after Log out: %d, want 401", code)
	}
}

// TestCrossOriginPageInFirefox: as TestCrossOriginPageInChromium, in Firefox (every name
// resolved to 127.0.0.1 by the profile): another site's page, its name rebound to the
// simulator, can neither read nor act.
func TestCrossOriginPageInFirefox(t *testing.T) {
	exe := firefox(t)
	srv, at := attackSetup(t)
	ff := openFirefox(t, exe)
	if err := ff.navigate("http://rebound.test:" + at.port + "/attack"); err != nil {
		t.Fatalf("opening the attack page: %v", err)
	}
	if err := ff.poll(`window.results !== undefined`, 30*time.Second); err != nil {
		t.Fatalf("the attack page did not finish: %v", err)
	}
	var got map[string]string
	if err := ff.eval(`window.results`, &got); err != nil {
		t.Fatal(err)
	}
	checkAttack(t, srv, got)
}
