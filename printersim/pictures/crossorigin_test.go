package pictures_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// attackPage is another site's page. It asks its own origin (which a rebinding attack has
// pointed at the simulator) to read and to act, and asks the simulator at its own address to
// read and to act with requests a page may send without asking (no-cors: text/plain JSON, a
// form, no body). window.results holds what each attempt got: a status, or "blocked" when the
// browser gave the page nothing to read.
const attackPage = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body><script>
(async () => {
  const sim = %q, r = {};
  const attempt = async (key, url, init) => {
    try { const resp = await fetch(url, init); r[key] = resp.type === "opaque" ? "opaque" : String(resp.status); }
    catch (e) { r[key] = "blocked"; }
  };
  const json = {"Content-Type": "application/json"};
  await attempt("rebound GET /api/v3/labels", "/api/v3/labels");
  await attempt("rebound GET /ui/printers", "/ui/printers");
  await attempt("rebound GET /", "/");
  await attempt("rebound PUT label", "/api/v3/labels/Planted", {method: "PUT", headers: json, body: '{"format":3,"width":10,"height":10,"objs":[]}'});
  await attempt("rebound POST printJob", "/api/v3/printers/line1/printJob", {method: "POST", headers: json, body: '{"labelName":"Carton"}'});
  await attempt("rebound POST /ui/line", "/ui/line", {method: "POST", headers: json, body: '{"running":true}'});
  await attempt("cross GET /api/v3/labels", sim + "/api/v3/labels");
  await attempt("cross GET /ui/printers", sim + "/ui/printers");
  await attempt("cross POST printJob text/plain", sim + "/api/v3/printers/line1/printJob", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"labelName":"Carton"}'});
  await attempt("cross POST trigger", sim + "/api/v3/printers/line1/trigger", {method: "POST", mode: "no-cors"});
  await attempt("cross POST /ui/line form", sim + "/ui/line", {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: '{"running":true}='});
  await attempt("cross POST /ui/faults text/plain", sim + "/ui/faults", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"kind":"503"}'});
  window.results = r;
})();
</script></body></html>`

// rebinder serves the attack page at /attack and forwards every other connection, bytes as
// they are, to the simulator at target: what a browser's requests to the attacker's name do
// once its resolver has been rebound to the simulator's address (the Host header still names
// the attacker's origin).
func rebinder(t *testing.T, target, page string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(time.Minute))
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "GET /attack ") {
					// Read the whole request, so that closing does not reset the answer.
					if _, err := http.ReadRequest(bufio.NewReader(io.MultiReader(strings.NewReader(line), br))); err != nil {
						return
					}
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(page), page)
					return
				}
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				track(s)
				defer s.Close()
				_ = s.SetDeadline(time.Now().Add(time.Minute))
				done := make(chan struct{})
				go func() {
					_, _ = io.Copy(c, s)
					close(done)
				}()
				_, _ = io.Copy(s, io.MultiReader(strings.NewReader(line), br))
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// attacker is the attack page's server: its port, which the page's rebound name is asked at.
type attacker struct{ port string }

// attackSetup starts a simulator that requires no token, with a label a job could select,
// and the attacker's server in front of it; both stop when the test ends.
func attackSetup(t *testing.T) (*printersim.Server, attacker) {
	t.Helper()
	srv, err := printersim.Start(printersim.WithUI())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("PUT", srv.URL+"/api/v3/labels/Carton", strings.NewReader(pageLabel))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT Carton: %v %v", resp, err)
	}
	resp.Body.Close()
	addr := rebinder(t, strings.TrimPrefix(srv.URL, "http://"), fmt.Sprintf(attackPage, srv.URL))
	_, port, _ := net.SplitHostPort(addr)
	return srv, attacker{port}
}

// checkAttack checks what the attack page got and that the simulator changed nothing.
func checkAttack(t *testing.T, srv *printersim.Server, results map[string]string) {
	t.Helper()
	if len(results) != 12 {
		t.Errorf("%d results, want 12: %v", len(results), results)
	}
	for k, v := range results {
		switch {
		case strings.HasPrefix(k, "rebound "):
			if v != "421" {
				t.Errorf("%s: %s, want 421", k, v)
			}
		case strings.HasPrefix(k, "cross GET"):
			if v != "blocked" {
				t.Errorf("%s: %s, want nothing to read", k, v)
			}
		default:
			if v != "opaque" && v != "blocked" {
				t.Errorf("%s: %s, want an opaque answer", k, v)
			}
		}
	}
	sim := srv.Sim
	if running, _ := sim.Line(); running {
		t.Error("the line was started")
	}
	for _, route := range []string{"/api/v3/printers/{name}/printJob", "/api/v3/printers/{name}/trigger"} {
		if n := sim.Requests("POST", route); n != 0 {
			t.Errorf("POST %s reached the printer %d times", route, n)
		}
	}
	if n := sim.Requests("PUT", "/api/v3/labels/{name}"); n != 1 {
		t.Errorf("%d label PUTs, want only the test's own", n)
	}
	// No fault waits and no job was selected: the test's own trigger gets 409.
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(srv.URL+"/api/v3/printers/line1/trigger", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "no job selected") {
		t.Errorf("a trigger after the attack: %d %s, want 409 no job selected", resp.StatusCode, b)
	}
}

// TestCrossOriginPageInChromium: a page on another origin (a second loopback port, its name
// rebound.test mapped to 127.0.0.1 by Chromium's resolver) can neither read nor act on a
// simulator that requires no token: its own origin rebound to the simulator gets 421 for every
// read and write, and its requests to the simulator's address give it nothing to read and
// change nothing (no label, no job, no trigger, no fault, the line still).
func TestCrossOriginPageInChromium(t *testing.T) {
	exe := chromium(t)
	srv, at := attackSetup(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP rebound.test 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	defer func() { cancelTime(); cancelTab(); cancelAlloc() }()

	if err := chromedp.Do(ctx, chromedp.Navigate("http://rebound.test:"+at.port+"/attack")); err != nil {
		t.Fatalf("opening the attack page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.results !== undefined`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the attack page did not finish: %v", err)
	}
	results, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`window.results`))
	if err != nil {
		t.Fatal(err)
	}
	checkAttack(t, srv, results)
}
