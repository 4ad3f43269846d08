// Package printersim is an in-memory label printer that speaks the whole v3 HTTP control
// contract, plus GET /api/v3/status and the single-printer POST /api/v3/printJob from the
// maker's pages. It lets examples run with no printer, lets integrators test their plant code
// against a printer that can be made to fail on purpose, and lets the SDK's tests run end to
// end over real sockets.
//
// It has its own wire types and does not import the SDK, so it checks the SDK instead of
// mirroring it.
//
//	srv, err := printersim.Start(printersim.WithPrinters("line1", "line2")) // default: one printer, "line1"
//	defer srv.Close()
//	c, err := labelprinter.NewClient(srv.URL)
//
// # Rules where the contract is silent
//
//   - Errors are JSON bodies {"message": "..."} with the status a careful server would use:
//     400 bad input, 401 missing or wrong bearer token, 404 unknown label, image, table,
//     printer, row or path, 405 wrong method, 409 trigger that printed nothing, 413 body over
//     the cap, 415 image content type outside the four the contract lists. No request, and no
//     sequence of requests, is answered with a 5xx unless a fault was injected for it.
//   - Limits, each named in the message that enforces it: a body of at most 64 MiB
//     (WithMaxBodyBytes; 413 "body over N bytes"), and copies, firstRow and rowCount from 0 to
//     MaxCount (400 "copies must be a whole number from 0 to 2147483647, not ...").
//   - Requests outside the contract are answered 404 (405 with Allow for a known path) and
//     counted together (UnmatchedRequests), so probing paths costs no memory.
//   - PUT of a label, image or table answers 204 with no body; so does DELETE (404 when unknown).
//   - Labels and tables must be JSON objects. List operations answer a JSON object keyed by
//     name whose values are {} (images with details=1 or true: the image info).
//   - A table is {"columns": ["SKU", ...], "rows": [["S12-342C", ...], ...]}; columns have
//     distinct, non-empty names; cells are strings, numbers, booleans or null, and every row
//     has one cell per column.
//   - Dynamic text: a simulation, and every label a trigger prints, fills the dynamic text of
//     every string of the label by the maker's grammar (package label's Expand: {YEAR},
//     {TIME;...;+20weeks}, ...) at the simulator's clock. "{{Column}}" is a table column: that
//     is this simulator's own convention (how the maker's labels name a column is not
//     documented); it is filled from the row of a simulation with tableName, keyColumn and key
//     (all three or none, none of them empty) or of a table job, and left as written without
//     a row. Codes it cannot fill (counters, variables and shift codes, which the simulator
//     does not keep) stay as written. The simulation answers the label object filled in;
//     LastPrinted returns the last label a printer printed, filled in.
//   - Images: raw PNG, JPEG and TIFF bodies, or the JSON form {"data": base64, "intent": ...}
//     holding PNG, JPEG, TIFF or NetPBM. The body's intent wins over the intent query. Width
//     and height in millimetres assume 300 dpi. An image is PROCESSING for the configured
//     delay, then READY, or ERROR when its data could not be decoded (the PUT itself succeeds,
//     as a printer that processes asynchronously would). GET answers the stored bytes with
//     their content type (the decoded bytes for the JSON form).
//   - printJob: an empty body deselects every job. Otherwise a label must be named (labelName,
//     labelColumn or labelData); labelColumn, keyColumn, key, firstRow, rowCount,
//     copiesColumn and printedColumn need tableName; keyColumn and key go together; counts
//     are whole numbers (see the limits above); labelName, labelColumn, tableName, keyColumn,
//     key, copiesColumn and printedColumn, when given, cannot be empty; the columns named must
//     exist in the table; attributes of the wrong JSON type are a 400, unknown ones are
//     ignored. tableName with keyColumn/key selects one row; tableName without a key selects
//     rows firstRow up to firstRow+rowCount (all remaining rows when rowCount is absent). When
//     both labelColumn and labelName are given, the row's labelColumn cell wins and labelName
//     is the fallback for an empty cell. queue true appends the job; otherwise it replaces
//     the queue. The answer is 200 {"printer", "label", "queueLength"}.
//   - trigger prints one label of the job at the head of the queue: triggers and
//     printedLabels grow by one and a print event is recorded. copies (or the row's
//     copiesColumn cell) is the number of labels per row, 0 meaning unlimited for a one-row
//     job and one per row for a row range; a finished job leaves the queue, and printedColumn
//     cells grow by one per label. With nothing selected a trigger counts in triggers and
//     triggerBounces and answers 409.
//   - A table job checks its table again on every trigger, since a table PUT or DELETE may
//     have taken away what it needs since it was selected: the table, its current row, its
//     labelColumn, copiesColumn or printedColumn, or the label its row names. Then the trigger
//     bounces (counted in triggers and triggerBounces, 409 saying what went, and on the line
//     PressTrigger answers false) and the job leaves the queue; the jobs behind it stay. Every
//     check comes before any change, so each trigger is exactly one print or one bounce:
//     triggers always equal printedLabels plus triggerBounces (FuzzRequestSequences tries
//     to break it).
//   - abortPrint clears the current job and the queue; it is idempotent (200 with the number
//     of jobs removed).
//   - History buckets the print events of the printer by MINUTES, HOURS, DAYS (default) or
//     WEEKS, aligned in UTC (weeks start on Monday), within [start, end] given in Unix
//     seconds, and answers only non-empty buckets in time order.
//   - GET /api/v3/status answers the maker's Status object for the first printer, with a
//     "printers" list of every printer name added; SetStatus changes its state, ragStatus and
//     errors.
//   - The line: PressTrigger is a trigger from a product sensor, with the trigger endpoint's
//     effects; WithAutoTrigger (or StartLine, until StopLine) presses it on a ticker for every
//     printer with a job selected; ResetCounters zeroes a printer's counters as a restart would.
//
// # The page
//
// WithUI serves a live page at / (outside /api/v3, on the same port): each printer's state,
// counters and queue, and its last KeptPrints triggers, newest first, each print with its
// picture at /ui/printers/{name}/prints/{n}.png when WithPictures gives a drawer (package
// printersim/pictures has label/preview's), each bounce with its reason; the list as JSON at
// /ui/printers/{name}/prints; Server-Sent Events at /ui/events with Last-Event-ID replay. n
// numbers a printer's triggers from 1 since the simulator started. Pictures are drawn after
// the trigger has been answered through a bounded queue that skips the picture, never the
// print; a skipped picture is drawn when its URL is asked for. With WithToken, the page takes
// the API's Bearer token or a session from its login form, whose cookie is named with the
// simulator's port (two simulators on one host keep their own), Secure with the __Host- prefix
// when the page is reached over TLS (directly or through WithTrustedProxies).
//
// # Other sites' pages
//
// A request whose Host names neither a loopback name or address, the address it reached, nor a
// host given with WithAllowedHosts is answered 421 (against DNS rebinding); a request that
// changes state and that a browser marks as sent by another origin's page is answered 403,
// whatever its body (origin.go holds both rules).
package printersim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labelprinter/go-labelprinter/label"
)

// Clock gives the simulator its time, so tests can drive image processing and history.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Option configures a Simulator.
type Option func(*config)

type config struct {
	printers []string
	token    string
	delay    time.Duration
	clock    Clock
	maxBody  int64
	strict   bool
	autoEach time.Duration
	ui       bool
	// allowedHosts and trustedProxies: see origin.go.
	allowedHosts   []string
	trustedProxies []netip.Prefix
	draw           func(context.Context, *Picture) ([]byte, error) // the pictures; nil draws none
}

// WithPrinters names the printers (default one printer, DefaultPrinter). The single-printer
// paths address the first one. A name the API cannot address (see CheckPrinterName) makes
// Listen and Start fail.
func WithPrinters(names ...string) Option {
	return func(c *config) {
		if len(names) > 0 {
			c.printers = slices.Clone(names)
		}
	}
}

// WithToken makes every request require "Authorization: Bearer <token>", compared in constant
// time. The page then takes the token or a session from its login form, which answers 429
// with Retry-After after 10 wrong tokens in a minute from one client address (session.go).
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithProcessingDelay sets how long an uploaded image stays PROCESSING (default 50 ms).
func WithProcessingDelay(d time.Duration) Option { return func(c *config) { c.delay = max(d, 0) } }

// WithClock replaces the wall clock used for image processing and print events.
func WithClock(clock Clock) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// WithMaxBodyBytes caps request bodies (default 64 MiB); a larger body is answered 413.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// WithRequireContentLength makes the simulator as strict about request framing as the small
// HTTP stacks embedded in printer controllers: a chunked request body, and a POST or PUT
// without Content-Length, is answered 411 Length Required and the connection is closed. A body
// shorter than its Content-Length is answered 400, as it always is. Use it to check that your
// own code sends what such a printer accepts.
func WithRequireContentLength() Option { return func(c *config) { c.strict = true } }

// WithAutoTrigger runs the line: every interval (a wall-clock ticker, whatever WithClock
// says), each printer that has a job selected gets a PressTrigger; printers with nothing
// selected are left alone. Zero or less leaves the line still. A simulator with a running line
// must be closed (Simulator.Close, or Server.Close, which does it).
func WithAutoTrigger(every time.Duration) Option {
	return func(c *config) { c.autoEach = max(every, 0) }
}

// Simulator is an in-memory printer. It is an http.Handler, safe for concurrent requests, and
// its methods let a test inspect its state and inject faults.
type Simulator struct {
	cfg config
	mux *http.ServeMux

	mu        sync.Mutex
	labels    map[string]json.RawMessage
	tables    map[string]*table
	images    map[string]*storedImage
	printers  map[string]*printer
	nextUID   int
	faults    []*faultRule
	counts    map[string]int // by contract route, so bounded by the routes
	unmatched int            // requests outside the contract, any method and path
	total     int

	// The running line (WithAutoTrigger, StartLine): stopLine is closed to stop it, lineDone
	// by it when stopped; both nil when the line is still. lineMu orders starts and stops.
	lineMu    sync.Mutex
	stopLine  chan struct{}
	lineDone  chan struct{}
	lineEvery time.Duration
	closed    bool

	// The page (WithUI); nil when it is off.
	ui *uiState

	// What GET /api/v3/status answers (SetStatus).
	state, ragStatus string
	statusErrors     []string
}

// New returns a Simulator with the given options.
func New(opts ...Option) *Simulator {
	cfg := config{printers: []string{DefaultPrinter}, delay: 50 * time.Millisecond, clock: systemClock{}, maxBody: 64 << 20}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := &Simulator{
		cfg:      cfg,
		mux:      http.NewServeMux(),
		labels:   map[string]json.RawMessage{},
		tables:   map[string]*table{},
		images:   map[string]*storedImage{},
		printers: map[string]*printer{},
		counts:   map[string]int{},

		state: "STARTED", ragStatus: "GREEN", statusErrors: []string{},
	}
	for _, name := range cfg.printers {
		s.printers[name] = &printer{name: name}
	}
	s.routes()
	if cfg.ui {
		s.ui = newUIState(s)
	}
	s.lineEvery = DefaultLineBeat
	if cfg.autoEach > 0 {
		_ = s.StartLine(cfg.autoEach)
	}
	return s
}

// DefaultLineBeat is the interval StartLine is given by the page when the simulator was not
// started with WithAutoTrigger.
const DefaultLineBeat = time.Second

// runLine presses the trigger of every printer with a job, every interval, until stop closes.
func (s *Simulator) runLine(every time.Duration, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.pressSelected()
		}
	}
}

// StartLine runs the line, as WithAutoTrigger does: every interval, each printer with a job
// selected gets a PressTrigger. A running line is restarted at the new interval. The error is
// for an interval that is not positive, or a closed simulator.
func (s *Simulator) StartLine(every time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("printersim: the line's interval must be positive, not %v", every)
	}
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	if s.closed {
		return errors.New("printersim: the simulator is closed")
	}
	s.stopLineLocked()
	stop, done := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.stopLine, s.lineDone, s.lineEvery = stop, done, every
	s.changedAll()
	s.mu.Unlock()
	go s.runLine(every, stop, done)
	return nil
}

// StopLine stops the running line and waits until it has stopped; a still line stays still.
func (s *Simulator) StopLine() {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	s.stopLineLocked()
}

// Line reports whether the line runs and its interval (the last one it ran at, or the one the
// page starts it at).
func (s *Simulator) Line() (running bool, every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLine != nil, s.lineEvery
}

// stopLineLocked stops the line; s.lineMu is held.
func (s *Simulator) stopLineLocked() {
	s.mu.Lock()
	stop, done := s.stopLine, s.lineDone
	s.stopLine, s.lineDone = nil, nil
	if stop != nil {
		s.changedAll()
	}
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// changedAll tells the page that every printer's state changed. s.mu is held.
func (s *Simulator) changedAll() {
	for _, name := range s.cfg.printers {
		s.ui.changed(name)
	}
}

// Close stops the running line (WithAutoTrigger, StartLine) and the page's drawing, and waits
// until they have stopped. It is safe to call more than once.
func (s *Simulator) Close() {
	s.lineMu.Lock()
	s.closed = true
	s.stopLineLocked()
	s.lineMu.Unlock()
	if s.ui != nil {
		s.ui.render.close()
	}
}

func (s *Simulator) routes() {
	const p = "/api/v3"
	h := map[string]http.HandlerFunc{
		"GET " + p + "/labels":                        s.listLabels,
		"GET " + p + "/labels/{name}":                 s.getLabel,
		"PUT " + p + "/labels/{name}":                 s.putLabel,
		"DELETE " + p + "/labels/{name}":              s.deleteLabel,
		"GET " + p + "/labels/{name}/simulation":      s.simulate,
		"GET " + p + "/images":                        s.listImages,
		"GET " + p + "/images/{name}":                 s.getImage,
		"GET " + p + "/images/{name}/info":            s.imageInfo,
		"PUT " + p + "/images/{name}":                 s.putImage,
		"DELETE " + p + "/images/{name}":              s.deleteImage,
		"GET " + p + "/tables":                        s.listTables,
		"GET " + p + "/tables/{name}":                 s.getTable,
		"PUT " + p + "/tables/{name}":                 s.putTable,
		"DELETE " + p + "/tables/{name}":              s.deleteTable,
		"GET " + p + "/printers/{name}/printCounters": s.counters,
		"GET " + p + "/printCounters":                 s.counters,
		"GET " + p + "/printers/{name}/printHistory":  s.history,
		"GET " + p + "/printHistory":                  s.history,
		"POST " + p + "/printers/{name}/printJob":     s.printJob,
		"POST " + p + "/printJob":                     s.printJob,
		"POST " + p + "/printers/{name}/abortPrint":   s.abortPrint,
		"POST " + p + "/printers/{name}/trigger":      s.trigger,
		"GET " + p + "/status":                        s.status,
	}
	for pattern, fn := range h {
		s.mux.HandleFunc(pattern, fn)
	}
}

// ServeHTTP refuses a request naming a host the simulator does not answer to (421) and one
// that changes state sent by another site's page (403), counts the request, applies any fault
// injected for its route, checks the token and the body cap, and serves it; with WithUI, / and
// /ui/ are the page's.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r) {
		writeError(w, http.StatusMisdirectedRequest, hostRefused)
		return
	}
	if changesState(r) && s.crossOrigin(r) {
		writeError(w, http.StatusForbidden, crossOriginRefused)
		return
	}
	if s.ui != nil && (r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/ui/")) {
		s.serveUI(w, r)
		return
	}
	s.serveAPI(w, r, true)
}

// serveAPI serves a request of the contract; checkToken is false for the page's controls,
// which checked the token or session themselves.
func (s *Simulator) serveAPI(w http.ResponseWriter, r *http.Request, checkToken bool) {
	_, pattern := s.mux.Handler(r)
	key := pattern
	s.mu.Lock()
	if key == "" {
		// Outside the contract: one count for all, so a client probing paths (or methods)
		// cannot grow the map; faults still match the request's own method and path.
		s.unmatched++
		key = r.Method + " " + r.URL.EscapedPath()
	} else {
		s.counts[key]++
	}
	s.total++
	f := s.takeFault(key)
	s.mu.Unlock()

	if s.cfg.strict {
		if msg := framingError(r); msg != "" {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusLengthRequired, msg)
			return
		}
	}
	if checkToken && s.cfg.token != "" && !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.maxBody)
	if f != nil && s.applyFault(w, r, pattern, f) {
		return
	}
	s.serve(w, r, pattern)
}

// framingError says why a strict printer cannot take r's body, or returns "".
func framingError(r *http.Request) string {
	if len(r.TransferEncoding) > 0 {
		return "chunked request bodies are not supported"
	}
	if _, ok := r.Header["Content-Length"]; !ok && (r.Method == http.MethodPost || r.Method == http.MethodPut) {
		return r.Method + " needs a Content-Length"
	}
	return ""
}

func (s *Simulator) serve(w http.ResponseWriter, r *http.Request, pattern string) {
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The mux answers unmatched requests in plain text; capture its status (404 or 405, with
	// Allow) and answer in JSON like every other error.
	rec := &bufferWriter{header: http.Header{}}
	s.mux.ServeHTTP(rec, r)
	if allow := rec.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	code := rec.code()
	if code == http.StatusOK {
		code = http.StatusNotFound
	}
	writeError(w, code, http.StatusText(code)+": "+r.Method+" "+r.URL.EscapedPath())
}

func (s *Simulator) authorized(r *http.Request) bool {
	return tokenEqual(r.Header.Get("Authorization"), "Bearer "+s.cfg.token)
}

// Requests returns how many requests reached the simulator for route with method, faults
// included; route is the contract's path pattern, such as "/api/v3/printers/{name}/printJob".
// Requests outside the contract are not counted by route: see UnmatchedRequests.
func (s *Simulator) Requests(method, route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method+" "+route]
}

// UnmatchedRequests returns how many requests matched no route of the contract (an unknown
// path, or a known path with a method it does not take; answered 404 or 405). They share one
// count, whatever their method and path, so the simulator's memory does not grow with them.
func (s *Simulator) UnmatchedRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unmatched
}

// TotalRequests returns how many requests reached the simulator.
func (s *Simulator) TotalRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Counters returns a printer's counters, and false for an unknown printer.
func (s *Simulator) Counters(printerName string) (Counters, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.printers[printerName]
	if !ok {
		return Counters{}, false
	}
	return p.counters, true
}

// QueueLength returns the number of jobs selected on a printer.
func (s *Simulator) QueueLength(printerName string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.printers[printerName]; ok {
		return len(p.queue)
	}
	return 0
}

// PrintEvents returns the times at which a printer printed a label, oldest first.
func (s *Simulator) PrintEvents(printerName string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.printers[printerName]; ok {
		return slices.Clone(p.events)
	}
	return nil
}

// LastPrinted returns the last label a printer printed, with its dynamic text filled as it
// was printed (at the simulator's clock, from the job's table row), and false when the printer
// is unknown or has printed nothing since it started.
func (s *Simulator) LastPrinted(printerName string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.printers[printerName]
	if !ok || p.printed == nil {
		return nil, false
	}
	return slices.Clone(p.printed), true
}

// Label returns a stored label, and false when there is none.
func (s *Simulator) Label(name string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.labels[name]
	return slices.Clone(l), ok
}

// LabelNames returns the stored label names, sorted.
func (s *Simulator) LabelNames() []string { return s.names(func() []string { return keys(s.labels) }) }

// TableNames returns the stored table names, sorted.
func (s *Simulator) TableNames() []string { return s.names(func() []string { return keys(s.tables) }) }

// ImageNames returns the stored image names, sorted.
func (s *Simulator) ImageNames() []string { return s.names(func() []string { return keys(s.images) }) }

func (s *Simulator) names(f func() []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f()
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Counters are a printer's running totals, as the printCounters endpoint reports them.
type Counters struct {
	// Triggers counts every trigger, bounces included.
	Triggers int64 `json:"triggers"`
	// TriggerBounces counts the triggers that found no job.
	TriggerBounces int64 `json:"triggerBounces"`
	// PrintedLabels counts the labels printed.
	PrintedLabels int64 `json:"printedLabels"`
}

type errorBody struct {
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Message: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"message":"encoding response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// readBody reads a request body under the cap, answering 413 or 400 itself on failure.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", mbe.Limit))
		} else {
			writeError(w, http.StatusBadRequest, "reading body: "+err.Error())
		}
		return nil, false
	}
	return b, true
}

// readJSONObject reads a body that must be a JSON object (labels, tables).
func readJSONObject(w http.ResponseWriter, r *http.Request) (json.RawMessage, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "content type must be application/json")
		return nil, false
	}
	b, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	b = bytes.TrimSpace(b)
	if msg := notJSONObject(b); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return nil, false
	}
	return json.RawMessage(b), true
}

// notJSONObject names what keeps b from being a JSON object, or returns "".
func notJSONObject(b []byte) string {
	if len(b) == 0 {
		return "body must be a JSON object, not empty"
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Sprintf("body must be a JSON object: invalid JSON at byte %d: %v", se.Offset, err)
		}
		return fmt.Sprintf("body must be a JSON object: invalid JSON: %v", err)
	}
	switch b[0] {
	case '{':
		return ""
	case '[':
		return "body must be a JSON object, not an array"
	case '"':
		return "body must be a JSON object, not a string"
	case 't', 'f':
		return "body must be a JSON object, not a boolean"
	case 'n':
		return "body must be a JSON object, not null"
	}
	return "body must be a JSON object, not a number"
}

// --- labels ---

func (s *Simulator) listLabels(w http.ResponseWriter, r *http.Request) { listNames(s, w, s.labels) }

// listNames answers the dictionary of a store's names, each entry {}.
func listNames[V any](s *Simulator, w http.ResponseWriter, m map[string]V) {
	s.mu.Lock()
	out := make(map[string]struct{}, len(m))
	for k := range m {
		out[k] = struct{}{}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// deleteNamed deletes the request's {name} from a store, answering 204, or 404 when unknown.
func deleteNamed[V any](s *Simulator, w http.ResponseWriter, r *http.Request, m map[string]V, noun string) {
	name := r.PathValue("name")
	s.mu.Lock()
	_, ok := m[name]
	delete(m, name)
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "no "+noun+" "+strconv.Quote(name))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Simulator) getLabel(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	l, ok := s.labels[name]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "no label "+strconv.Quote(name))
		return
	}
	writeRaw(w, l)
}

func writeRaw(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

func (s *Simulator) putLabel(w http.ResponseWriter, r *http.Request) {
	body, ok := readJSONObject(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.labels[r.PathValue("name")] = body
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Simulator) deleteLabel(w http.ResponseWriter, r *http.Request) {
	deleteNamed(s, w, r, s.labels, "label")
}

func (s *Simulator) simulate(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	q := r.URL.Query()
	tableName, keyColumn, key := q.Get("tableName"), q.Get("keyColumn"), q.Get("key")
	set := 0
	for _, k := range []string{"tableName", "keyColumn", "key"} {
		if q.Has(k) {
			set++
		}
	}
	if set != 0 && set != 3 {
		writeError(w, http.StatusBadRequest, "tableName, keyColumn and key go together")
		return
	}
	if set == 3 && (tableName == "" || keyColumn == "" || key == "") {
		writeError(w, http.StatusBadRequest, "tableName, keyColumn and key cannot be empty")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	label, ok := s.labels[name]
	if !ok {
		writeError(w, http.StatusNotFound, "no label "+strconv.Quote(name))
		return
	}
	now := s.cfg.clock.Now()
	if set == 0 {
		writeRaw(w, fillLabel(label, now, nil))
		return
	}
	t, ok := s.tables[tableName]
	if !ok {
		writeError(w, http.StatusNotFound, "no table "+strconv.Quote(tableName))
		return
	}
	col := t.column(keyColumn)
	if col < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("table %q has no column %q", tableName, keyColumn))
		return
	}
	row := t.find(col, key)
	if row < 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no row with %s=%q in table %q", keyColumn, key, tableName))
		return
	}
	writeRaw(w, fillLabel(label, now, t.rowMap(row)))
}

// fillLabel fills the dynamic text of every string inside the label by the SDK's one rule,
// label.Expand, at now, with row (column name to cell; nil without a table row) for
// "{{Column}}", the simulator's own table convention. What cannot be filled stays as written,
// as on the printer. A label without any dynamic text is returned byte for byte.
func fillLabel(raw json.RawMessage, now time.Time, row map[string]string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers keep their value and spelling
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	env := &label.Env{Clock: func() time.Time { return now }, Row: row}
	changed := false
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			if !strings.ContainsAny(x, "{}") {
				return x
			}
			filled, _ := label.Expand(x, env) // unfilled codes stay as written
			if filled != x {
				changed = true
			}
			return filled
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return x
	}
	v = walk(v)
	if !changed {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// --- tables ---

type table struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

func (t *table) column(name string) int { return slices.Index(t.Columns, name) }

// rowMap returns a row as column name to cell, for "{{Column}}".
func (t *table) rowMap(row int) map[string]string {
	m := make(map[string]string, len(t.Columns))
	for i, c := range t.Columns {
		m[c] = t.cell(row, i)
	}
	return m
}

func (t *table) cell(row, col int) string {
	switch v := t.Rows[row][col].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func (t *table) find(col int, key string) int {
	for i := range t.Rows {
		if t.cell(i, col) == key {
			return i
		}
	}
	return -1
}

func parseTable(b []byte) (*table, error) {
	var t table
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("table must be {\"columns\": [...], \"rows\": [[...], ...]}: %v", err)
	}
	if len(t.Columns) == 0 {
		return nil, errors.New("table has no columns")
	}
	for i, c := range t.Columns {
		if c == "" {
			return nil, fmt.Errorf("column %d has no name", i)
		}
		if slices.Index(t.Columns[:i], c) >= 0 {
			return nil, fmt.Errorf("column %q appears twice", c)
		}
	}
	for i, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("row %d has %d cells for %d columns", i, len(row), len(t.Columns))
		}
		for j, c := range row {
			switch c.(type) {
			case string, json.Number, bool, nil:
			default:
				return nil, fmt.Errorf("row %d, column %q: cells are strings, numbers or booleans", i, t.Columns[j])
			}
		}
	}
	return &t, nil
}

func (s *Simulator) listTables(w http.ResponseWriter, r *http.Request) { listNames(s, w, s.tables) }

func (s *Simulator) getTable(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	t, ok := s.tables[name]
	var b []byte
	if ok {
		b, _ = json.Marshal(t)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "no table "+strconv.Quote(name))
		return
	}
	writeRaw(w, b)
}

func (s *Simulator) putTable(w http.ResponseWriter, r *http.Request) {
	body, ok := readJSONObject(w, r)
	if !ok {
		return
	}
	t, err := parseTable(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	s.tables[r.PathValue("name")] = t
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Simulator) deleteTable(w http.ResponseWriter, r *http.Request) {
	deleteNamed(s, w, r, s.tables, "table")
}

// --- status ---

type inkStatus struct {
	State     string   `json:"state"`
	RagStatus string   `json:"ragStatus"`
	Level     string   `json:"level"`
	Errors    []string `json:"errors"`
	Warnings  []string `json:"warnings"`
}

type statusBody struct {
	State     string      `json:"state"`
	RagStatus string      `json:"ragStatus"`
	Errors    []string    `json:"errors"`
	Ink       []inkStatus `json:"ink"`
	Printers  []string    `json:"printers"`
}

// SetStatus sets what GET /api/v3/status answers from now on: the printer's state (such as
// "STARTED", "ERROR" or a value no printer sends), its ragStatus and its errors. The ink
// systems and the printers list stay as they are. A new simulator is STARTED and GREEN.
func (s *Simulator) SetStatus(state, ragStatus string, errors ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.ragStatus = state, ragStatus
	s.statusErrors = append([]string{}, errors...)
}

func (s *Simulator) status(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body := statusBody{
		State: s.state, RagStatus: s.ragStatus, Errors: slices.Clone(s.statusErrors),
		Ink:      []inkStatus{{State: "STARTED", RagStatus: "GREEN", Level: "OK", Errors: []string{}, Warnings: []string{}}},
		Printers: slices.Clone(s.cfg.printers),
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// --- serving ---

// Server is a Simulator served on a loopback port, in the spirit of net/http/httptest.
type Server struct {
	// URL is the base URL of the printer, such as "http://127.0.0.1:41234".
	URL string
	// Sim is the simulator behind the server, for inspection and fault injection.
	Sim *Simulator

	srv   *http.Server
	done  chan struct{}
	conns sync.WaitGroup
}

// Start serves a new Simulator on 127.0.0.1 at a free port.
func Start(opts ...Option) (*Server, error) {
	return Listen("127.0.0.1:0", opts...)
}

// Listen serves a new Simulator on addr, such as "127.0.0.1:8631".
func Listen(addr string, opts ...Option) (*Server, error) {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	for _, name := range cfg.printers {
		if err := CheckPrinterName(name); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	sim := New(opts...)
	return Serve(ln, sim), nil
}

// Serve serves sim on ln until Close; each wrap, when given, wraps the simulator's handler
// (for request logging).
func Serve(ln net.Listener, sim *Simulator, wrap ...func(http.Handler) http.Handler) *Server {
	var h http.Handler = sim
	for _, wr := range wrap {
		h = wr(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s := &Server{URL: "http://" + ln.Addr().String(), Sim: sim, srv: srv, done: make(chan struct{})}
	// http.Server.Close does not wait for connection goroutines (one that closes after an
	// error lingers to avoid a reset); counting them lets Close wait until none is left.
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.conns.Done()
		}
	}
	go func() {
		defer close(s.done)
		_ = srv.Serve(ln)
	}()
	return s
}

// CheckPrinterName returns an error naming the problem when no request can address a printer
// called name: an empty name, "." or ".." (a client or proxy removes such a path segment
// before the request is sent, and the SDK refuses them), or one with a control character or
// invalid UTF-8. Any other name works on the API and the page, its characters escaped.
func CheckPrinterName(name string) error {
	switch name {
	case "":
		return errors.New("printer name is empty")
	case ".", "..":
		return fmt.Errorf("printer name %q cannot be addressed: a URL path segment %q is removed before a request is sent", name, name)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("printer name %q is not valid UTF-8", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("printer name %q contains a control character", name)
		}
	}
	return nil
}

// SplitPrinters reads a comma-separated list of printer names, as the commands take it,
// dropping blanks.
func SplitPrinters(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// OrStart returns url when it is set, and otherwise starts a Simulator with opts and returns its
// URL; stop closes whatever was started. It lets a program run against a real printer when given
// one and against a simulated one otherwise.
func OrStart(url string, opts ...Option) (baseURL string, stop func(), err error) {
	if url != "" {
		return url, func() {}, nil
	}
	srv, err := Start(opts...)
	if err != nil {
		return "", nil, err
	}
	return srv.URL, srv.Close, nil
}

// Close stops the server, closes every connection and stops the simulator's running line
// (WithAutoTrigger), leaving no goroutine behind.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
	s.conns.Wait()
	s.Sim.Close()
}
