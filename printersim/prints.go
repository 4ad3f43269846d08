package printersim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// KeptPrints is how many triggers (prints and bounces) the page keeps per printer; older ones
// are counted as gone.
const KeptPrints = 200

// DefaultDPI is the resolution a label is drawn at when it sets neither hdpi nor vdpi.
const DefaultDPI = 300

// printRecord is one trigger of a printer as the page shows it. Its fields do not change once
// it is recorded, except its picture, which has its own lock, and content and row, which are
// let go under that lock (see keptLabels).
type printRecord struct {
	printer string
	id      uint64 // the event id on /ui/events
	n       int64  // the printer's trigger number, from 1 since the simulator started
	time    time.Time
	label   string
	key     string
	printed bool
	reason  string
	// content is the label as stored when it printed (nil for a bounce), its bytes shared with
	// the store; row (the job's table row) and time fill its dynamic text as it was printed.
	content    json.RawMessage
	row        map[string]string
	tooLarge   int // the size of a label over maxDrawnLabel, which is not kept
	hdpi, vdpi float64
	// width and height are the picture's size in pixels (0 when unknown): see labelSize.
	width, height int
	pic           picture
	counted       int // bytes of its picture counted in the printer's budget; the renderer's lock
}

// printEntry is a record on the wire, in the list and in the events.
type printEntry struct {
	Printer string  `json:"printer"`
	N       int64   `json:"n"`
	Time    string  `json:"time"`
	Label   string  `json:"label"`
	Key     string  `json:"key"`
	State   string  `json:"state"`
	Reason  string  `json:"reason"`
	HDPI    float64 `json:"hdpi,omitempty"`
	VDPI    float64 `json:"vdpi,omitempty"`
	// Width and Height are the picture's size in pixels, given so that the page reserves its
	// place before it loads; absent when the label has no size the page draws.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Deferred is true when the renderer's queue was full: the picture is drawn when its URL
	// is asked for.
	Deferred bool `json:"deferred,omitempty"`
}

func (r *printRecord) entry() printEntry {
	e := printEntry{Printer: r.printer, N: r.n, Time: r.time.Format(time.RFC3339Nano), Label: r.label, Key: r.key, State: "bounced", Reason: r.reason}
	if r.printed {
		e.State, e.HDPI, e.VDPI, e.Width, e.Height = "printed", r.hdpi, r.vdpi, r.width, r.height
		e.Deferred = r.pic.wasDropped()
	}
	return e
}

// keyColumnOr is the column whose cell names a table job's row on the page: the job's
// keyColumn, else the table's first column.
func (j *job) keyColumnOr(t *table) string {
	if j.keyColumn != "" {
		return j.keyColumn
	}
	return t.Columns[0]
}

// noteTrigger records a trigger of p at now for the page, when the page is on: a print
// (content, the label as stored, and row, the job's table row) or a bounce (reason). s.mu is
// held.
func (s *Simulator) noteTrigger(p *printer, label, key, reason string, content json.RawMessage, row map[string]string, now time.Time) {
	p.triggerN++
	if s.ui == nil {
		return
	}
	s.ui.lastID++
	r := &printRecord{
		printer: p.name, id: s.ui.lastID, n: p.triggerN, time: now,
		label: label, key: key, printed: reason == "", reason: reason,
	}
	if r.printed {
		// A label kept to be drawn gets its resolution and size from keptLabels (read once
		// per label); one too large to be drawn is read here.
		if len(content) > maxDrawnLabel {
			r.tooLarge = len(content)
			r.hdpi, r.vdpi = labelDPI(content)
		} else {
			r.content, r.row = content, row
			r.hdpi, r.vdpi = DefaultDPI, DefaultDPI
		}
	}
	if len(p.prints) == KeptPrints {
		p.prints[0].pic.forget()
		s.ui.labels.letGo(p.prints[0])
		copy(p.prints, p.prints[1:])
		p.prints = p.prints[:KeptPrints-1]
		p.gone++
	}
	p.prints = append(p.prints, r)
	s.ui.labels.add(r)
	if r.printed && r.tooLarge == 0 {
		s.ui.render.enqueue(r)
	}
	s.ui.publish(r)
}

// labelDPI returns the resolution a label is drawn at: its hdpi and vdpi, each DefaultDPI when
// absent or not a positive number.
func labelDPI(content json.RawMessage) (h, v float64) {
	h, v = DefaultDPI, DefaultDPI
	if !bytes.Contains(content, []byte("dpi")) { // most labels: no decoding on the trigger's path
		return h, v
	}
	var d struct {
		HDPI, VDPI any
	}
	if json.Unmarshal(content, &d) != nil {
		return h, v
	}
	if f, ok := d.HDPI.(float64); ok && f > 0 {
		h = f
	}
	if f, ok := d.VDPI.(float64); ok && f > 0 {
		v = f
	}
	return h, v
}

// printList is the body of GET /ui/printers/{name}/prints.
type printList struct {
	Kept int   `json:"kept"`
	Gone int64 `json:"gone"`
	DPI  int   `json:"dpi"`
	// Dropped counts the kept prints whose pictures the renderer's full queue skipped (those
	// marked Deferred); each is drawn when its URL is asked for.
	Dropped int64 `json:"dropped"`
	// LastEvent is the id of the last event on /ui/events when the list was taken: a client
	// opens the events with ?after=LastEvent to miss nothing in between.
	LastEvent uint64       `json:"lastEvent"`
	Prints    []printEntry `json:"prints"`
}

func (s *Simulator) uiPrints(w http.ResponseWriter, r *http.Request) {
	p, ok := s.lockPrinter(w, r)
	if !ok {
		return
	}
	recs := make([]*printRecord, len(p.prints))
	copy(recs, p.prints)
	list := printList{Kept: KeptPrints, Gone: p.gone, DPI: DefaultDPI, LastEvent: s.ui.lastID}
	s.mu.Unlock()
	list.Prints = make([]printEntry, 0, len(recs))
	for i := len(recs) - 1; i >= 0; i-- {
		e := recs[i].entry()
		if e.Deferred {
			list.Dropped++
		}
		list.Prints = append(list.Prints, e)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, list)
}
