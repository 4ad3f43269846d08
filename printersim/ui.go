package printersim

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	mrand "math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WithUI serves the simulator's page: at / a live view of every printer (its state, counters,
// job and queue, and each label it printed, drawn, newest first), and under /ui/ what the page
// reads (the prints as JSON, each print's picture as PNG, the events) and its controls. With a
// token (WithToken), / and /ui/ take the API's Bearer token, or a session cookie from the
// page's login form. Without WithUI, / and /ui/ answer 404 like any unknown path.
func WithUI() Option { return func(c *config) { c.ui = true } }

//go:embed ui
var uiFiles embed.FS

const (
	maxSessions = 64
	sessionLife = 12 * time.Hour
)

// uiState is the page's side of a simulator. Its fields but render and sessions are under the
// simulator's mutex.
type uiState struct {
	lastID   uint64  // the last print event's id (the first is one more than a random start)
	ring     []event // the last print events, for Last-Event-ID (see publish)
	ringHead int
	subs     map[*subscriber]struct{}
	// evictAfter is how long an event client holds its place before a new one may take it
	// (the constant evictAfter; tests shorten it).
	evictAfter time.Duration
	render     *renderer
	labels     keptLabels // the labels kept prints hold to be drawn
	mux        *http.ServeMux
	runID      string // names this run in the pictures' ETags

	sessMu   sync.Mutex
	sessions map[string]time.Time // session id to expiry (the cookie's value: see session.go)
	fails    loginFails
}

func newUIState(s *Simulator) *uiState {
	u := &uiState{
		ring:       make([]event, 0, KeptPrints*len(s.cfg.printers)),
		subs:       map[*subscriber]struct{}{},
		evictAfter: evictAfter,
		render:     newRenderer(s.cfg.draw, s.storedImage),
		mux:        http.NewServeMux(),
		sessions:   map[string]time.Time{},
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	u.runID = hex.EncodeToString(b[:])
	// Event ids start from a number this run picks at random (below 2^51, exact in a page's
	// JavaScript), so that an id a page kept from another run of a simulator on the same
	// address is not taken for one of this run's: the page is told to reload instead of being
	// given this run's events as the ones it missed.
	u.lastID = 1<<40 + mrand.Uint64N(1<<50)
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /{$}":                              s.uiPage,
		"GET /ui/static/{file}":                 uiStatic,
		"GET /ui/printers":                      s.uiPrinters,
		"GET /ui/printers/{name}":               s.uiPrinter,
		"GET /ui/printers/{name}/prints":        s.uiPrints,
		"GET /ui/printers/{name}/prints/{file}": s.uiPicture,
		"POST /ui/printers/{name}/trigger":      s.uiTrigger,
		"POST /ui/line":                         s.uiLine,
		"POST /ui/faults":                       s.uiFaults,
		"GET /ui/events":                        s.uiEvents,
		"POST /ui/logout":                       s.uiLogout,
	} {
		u.mux.HandleFunc(pattern, h)
	}
	return u
}

// serveUI answers / and /ui/: the login form when a token is required and the request has
// neither the token nor a session, else the page and what it reads.
func (s *Simulator) serveUI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.URL.Path == "/ui/login" {
		s.uiLogin(w, r)
		return
	}
	if !s.uiAuthorized(r) {
		if r.URL.Path == "/" {
			s.loginForm(w, http.StatusOK, "")
			return
		}
		writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (or log in at /)")
		return
	}
	_, pattern := s.ui.mux.Handler(r)
	if pattern == "" {
		s.serve(w, r, "") // 404 or 405 in JSON, like the API
		return
	}
	s.ui.mux.ServeHTTP(w, r)
}

// sessionOf returns the page session r was let in with, "" when it came with the token or
// none is required.
func (s *Simulator) sessionOf(r *http.Request) string {
	if s.cfg.token == "" || s.authorized(r) {
		return ""
	}
	if c, err := r.Cookie(s.sessionCookieName(r)); err == nil {
		return c.Value
	}
	return ""
}

// uiSessionOpen reports whether a page session is known and not expired.
func (s *Simulator) uiSessionOpen(id string) bool {
	s.ui.sessMu.Lock()
	defer s.ui.sessMu.Unlock()
	exp, ok := s.ui.sessions[id]
	return ok && time.Now().Before(exp)
}

func (s *Simulator) uiAuthorized(r *http.Request) bool {
	if s.cfg.token == "" || s.authorized(r) {
		return true
	}
	c, err := r.Cookie(s.sessionCookieName(r))
	if err != nil {
		return false
	}
	u := s.ui
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	exp, ok := u.sessions[c.Value]
	if ok && time.Now().After(exp) {
		delete(u.sessions, c.Value)
		return false
	}
	return ok
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>printersim: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect x='2' y='2' width='12' height='12' rx='2' fill='%23246'/%3E%3C/svg%3E">
<style>body{font:16px system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}
input,button{font:inherit;padding:.4rem;margin:.3rem 0;width:100%;box-sizing:border-box}.err{color:#a00}</style>
</head><body><h1>printersim</h1>
<p>This simulator requires a token. Enter the one it was started with (<code>--require-token</code> or <code>--token-file</code>).</p>
{{if .}}<p class="err" role="alert">{{.}}</p>{{end}}
<form method="post" action="/ui/login"><label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Log in</button></form></body></html>
`))

func (s *Simulator) loginForm(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// Like the page: no other site may frame the form (to have the token typed into it under
	// its own disguise), and the form posts only to the simulator.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(code)
	_ = loginPage.Execute(w, msg)
}

// uiLogin takes the login form: the right token opens a session whose random id is the cookie.
func (s *Simulator) uiLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, "log in with the form at /")
		return
	}
	if s.cfg.token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.loginForm(w, http.StatusBadRequest, "the form could not be read")
		return
	}
	addr, now := s.clientAddr(r), time.Now()
	if d := s.ui.fails.wait(addr, now); d > 0 {
		w.Header().Set("Retry-After", retryAfter(d))
		s.loginForm(w, http.StatusTooManyRequests, "Too many wrong tokens from this address: try again in "+retryAfter(d)+" s.")
		return
	}
	if !tokenEqual(r.PostForm.Get("token"), s.cfg.token) {
		s.ui.fails.failed(addr, now)
		s.loginForm(w, http.StatusUnauthorized, "That is not the token.")
		return
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	u := s.ui
	u.sessMu.Lock()
	for k, exp := range u.sessions {
		if now.After(exp) {
			delete(u.sessions, k)
		}
	}
	for len(u.sessions) >= maxSessions { // the oldest logins go first
		oldest, at := "", time.Time{}
		for k, exp := range u.sessions {
			if oldest == "" || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		delete(u.sessions, oldest)
	}
	u.sessions[id] = now.Add(sessionLife)
	u.sessMu.Unlock()
	http.SetCookie(w, s.sessionCookie(r, id, int(sessionLife/time.Second)))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Simulator) uiLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(s.sessionCookieName(r)); err == nil {
		s.ui.sessMu.Lock()
		delete(s.ui.sessions, c.Value)
		s.ui.sessMu.Unlock()
		// The session's pages in other tabs stop receiving prints too.
		s.mu.Lock()
		s.ui.endSession(c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// uiStatic serves the page's script, style and icon from the binary.
func uiStatic(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	b, err := uiFiles.ReadFile("ui/" + file)
	if err != nil || file == "index.html" {
		writeError(w, http.StatusNotFound, "no file "+strconv.Quote(file))
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(file)))
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

func (s *Simulator) uiPage(w http.ResponseWriter, r *http.Request) {
	b, err := uiFiles.ReadFile("ui/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	_, _ = w.Write(b)
}

// printerState is GET /ui/printers/{name}: what the page shows above the prints.
type printerState struct {
	Name     string     `json:"name"`
	Counters Counters   `json:"counters"`
	Triggers int64      `json:"triggerNumber"` // the last trigger's n
	Queue    []jobState `json:"queue"`
}

// jobState is a selected job: its label, the table row it is at, and what is left.
type jobState struct {
	Label string `json:"label"`
	Table string `json:"table,omitempty"`
	Row   string `json:"row,omitempty"`
	// CopiesLeft is the copies left of the current row; absent when unlimited.
	CopiesLeft *int `json:"copiesLeft,omitempty"`
	// RowsLeft counts the rows after the current one.
	RowsLeft int `json:"rowsLeft"`
}

// lineState and faultState are the simulator-wide parts of the page.
type lineState struct {
	Running bool   `json:"running"`
	Every   string `json:"every"`
}

type faultState struct {
	Method string `json:"method"`
	Route  string `json:"route"`
	Times  int    `json:"times"`
	Kind   string `json:"kind"`
}

type printersBody struct {
	Printers []string     `json:"printers"`
	Line     lineState    `json:"line"`
	Faults   []faultState `json:"faults"`
	Token    bool         `json:"token"`
}

func (s *Simulator) uiPrinters(w http.ResponseWriter, r *http.Request) {
	running, every := s.Line()
	body := printersBody{Printers: s.cfg.printers, Line: lineState{running, every.String()}, Faults: []faultState{}, Token: s.cfg.token != ""}
	s.mu.Lock()
	for _, f := range s.faults {
		kind := "status " + strconv.Itoa(f.f.Status)
		switch {
		case f.f.Delay > 0:
			kind = "delay " + f.f.Delay.String()
		case f.f.Reset != NoReset:
			kind = "connection reset"
		case f.f.Truncate:
			kind = "truncated answer"
		}
		body.Faults = append(body.Faults, faultState{f.f.Method, f.f.Route, max(f.left, 0), kind})
	}
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, body)
}

func (s *Simulator) uiPrinter(w http.ResponseWriter, r *http.Request) {
	p, ok := s.lockPrinter(w, r)
	if !ok {
		return
	}
	st := printerState{Name: p.name, Counters: p.counters, Triggers: p.triggerN, Queue: []jobState{}}
	for _, j := range p.queue {
		st.Queue = append(st.Queue, s.jobState(j))
	}
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, st)
}

// jobState describes a job for the page; s.mu is held.
func (s *Simulator) jobState(j *job) jobState {
	js := jobState{Label: j.labelName, Table: j.table}
	if js.Label == "" && j.labelData != nil {
		js.Label = "(label data)"
	}
	limit := j.copies
	if t := s.tables[j.table]; t != nil && j.stale(t) == nil {
		r := j.rows[j.rowPos]
		if name, err := s.labelFor(j, t); err == nil && name != "" {
			js.Label = name
		}
		js.Row = t.cell(r, t.column(j.keyColumnOr(t)))
		if j.copiesColumn != "" {
			if n, err := strconv.Atoi(t.cell(r, t.column(j.copiesColumn))); err == nil && n >= 0 {
				limit = n
			}
		}
		js.RowsLeft = len(j.rows) - j.rowPos - 1
	}
	if limit > 0 || len(j.rows) > 1 {
		left := max(limit, 1) - j.printedInRow
		js.CopiesLeft = &left
	}
	return js
}

// uiTrigger is the page's trigger button: the API's trigger request, through the same code
// (faults and counts included).
func (s *Simulator) uiTrigger(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/api/v3/printers/" + r.PathValue("name") + "/trigger"
	r2.URL.RawPath = "/api/v3/printers/" + url.PathEscape(r.PathValue("name")) + "/trigger"
	r2.RequestURI = r2.URL.RequestURI()
	r2.Body = http.NoBody
	r2.ContentLength = 0
	r2.Header.Del("Content-Type")
	s.serveAPI(w, r2, false)
}

// uiLine is the page's start/stop: {"running": true} starts the line at its interval,
// {"running": false} stops it.
func (s *Simulator) uiLine(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Running *bool `json:"running"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil || req.Running == nil {
		writeError(w, http.StatusBadRequest, `the line takes {"running": true} or {"running": false}`)
		return
	}
	if *req.Running {
		_, every := s.Line()
		if err := s.StartLine(every); err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
	} else {
		s.StopLine()
	}
	running, every := s.Line()
	writeJSON(w, http.StatusOK, lineState{running, every.String()})
}

// The page's faults, each an InjectFault on the trigger route.
const triggerRoute = "/api/v3/printers/{name}/trigger"

// uiFaults is the page's fault buttons: {"kind": "503"}, {"kind": "reset"}, {"kind": "delay",
// "delay": "2s"} or {"kind": "clear"}.
func (s *Simulator) uiFaults(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Kind  string `json:"kind"`
		Delay string `json:"delay"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "faults take a JSON object: "+err.Error())
		return
	}
	switch req.Kind {
	case "503":
		s.InjectFault(Fault{Method: http.MethodPost, Route: triggerRoute, Times: 1, Status: http.StatusServiceUnavailable})
	case "reset":
		s.InjectFault(Fault{Method: http.MethodPost, Route: triggerRoute, Times: 1, Reset: ResetAfterRead})
	case "delay":
		d, err := time.ParseDuration(req.Delay)
		if err != nil || d <= 0 || d > time.Minute {
			writeError(w, http.StatusBadRequest, "delay must be a duration from 1ms to 1m, such as 2s, not "+strconv.Quote(req.Delay))
			return
		}
		s.InjectFault(Fault{Method: http.MethodPost, Route: triggerRoute, Delay: d})
	case "clear":
		s.ClearFaults()
	default:
		writeError(w, http.StatusBadRequest, `kind must be "503", "reset", "delay" or "clear", not `+strconv.Quote(req.Kind))
		return
	}
	s.mu.Lock()
	s.changedAll()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// uiPicture answers GET /ui/printers/{name}/prints/{n}.png: the print's label drawn, by the
// renderer or now when the renderer skipped it or let it go.
func (s *Simulator) uiPicture(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	num, ok := strings.CutSuffix(file, ".png")
	n, err := strconv.ParseInt(num, 10, 64)
	// One URL per picture: n written as the list writes it (no sign, no leading zero).
	if !ok || err != nil || n < 1 || strconv.FormatInt(n, 10) != num {
		writeError(w, http.StatusNotFound, "a print's picture is {n}.png, n from 1, not "+strconv.Quote(file))
		return
	}
	p, ok := s.lockPrinter(w, r)
	if !ok {
		return
	}
	var rec *printRecord
	if len(p.prints) > 0 {
		if i := n - p.prints[0].n; i >= 0 && i < int64(len(p.prints)) {
			rec = p.prints[i]
		}
	}
	triggerN := p.triggerN
	s.mu.Unlock()
	switch {
	case n > triggerN:
		writeError(w, http.StatusNotFound, "no trigger "+num+" on "+p.name+" yet")
		return
	case rec == nil:
		writeError(w, http.StatusGone, "trigger "+num+" of "+p.name+" is no longer kept: the last "+strconv.Itoa(KeptPrints)+" are")
		return
	case !rec.printed:
		writeError(w, http.StatusNotFound, "trigger "+num+" of "+p.name+" bounced: nothing was printed")
		return
	}
	// A print's picture never changes, but n starts from 1 again in another run: the ETag
	// names the run, so a browser revalidates and gets 304 without a drawing.
	etag := `"` + s.ui.runID + "-" + strconv.FormatInt(n, 10) + `"`
	if r.Header.Get("If-None-Match") == etag {
		w.Header().Set("ETag", etag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	png, err := s.ui.render.picture(r.Context(), rec)
	switch {
	case errors.Is(err, errNoPictures):
		writeError(w, http.StatusNotImplemented, err.Error())
		return
	case errors.Is(err, errDrawBusy):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case errors.Is(err, errPictureGone):
		writeError(w, http.StatusGone, "trigger "+num+" of "+p.name+" is no longer kept")
		return
	case err != nil && r.Context().Err() != nil:
		return
	case err != nil:
		writeError(w, http.StatusUnprocessableEntity, "the label of trigger "+num+" cannot be drawn: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.Header().Set("Cache-Control", "private, no-cache")
	w.Header().Set("ETag", etag)
	_, _ = w.Write(png)
}

// lockPrinter locks s and returns the printer the request's path names, for a /ui/ handler
// that then unlocks s; with no such printer it answers 404 and leaves s unlocked.
func (s *Simulator) lockPrinter(w http.ResponseWriter, r *http.Request) (*printer, bool) {
	s.mu.Lock()
	p, ok := s.printers[r.PathValue("name")]
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "no printer "+strconv.Quote(r.PathValue("name")))
	}
	return p, ok
}
