package printersim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"time"
)

type printer struct {
	name     string
	queue    []*job
	counters Counters
	events   []time.Time
	// printed is the last label printed, its dynamic text filled; one per printer, so memory
	// does not grow with prints.
	printed json.RawMessage
	// triggerN numbers the triggers since the simulator started; ResetCounters leaves it.
	triggerN int64
	// prints are the last KeptPrints triggers, oldest first, when the page is on; gone counts
	// the ones let go.
	prints []*printRecord
	gone   int64
}

// job is a selected print job. A job without a table prints its label; a table job walks rows.
type job struct {
	labelName     string
	labelColumn   string
	labelData     json.RawMessage
	table         string
	keyColumn     string
	rows          []int
	rowPos        int
	copies        int
	copiesColumn  string
	printedColumn string
	printedInRow  int
}

// jobRequest is the print-job object on the wire; pointers tell absent from zero, and wrong
// JSON types fail the decode.
type jobRequest struct {
	LabelName         *string         `json:"labelName"`
	LabelColumn       *string         `json:"labelColumn"`
	LabelData         json.RawMessage `json:"labelData"`
	TableName         *string         `json:"tableName"`
	KeyColumn         *string         `json:"keyColumn"`
	Key               *string         `json:"key"`
	Copies            *float64        `json:"copies"`
	CopiesColumn      *string         `json:"copiesColumn"`
	Queue             *bool           `json:"queue"`
	Freeze            *bool           `json:"freeze"`
	FirstRow          *float64        `json:"firstRow"`
	RowCount          *float64        `json:"rowCount"`
	PrintedColumn     *string         `json:"printedColumn"`
	PrintDelay        *float64        `json:"printDelay"`
	AutoPrintGap      *float64        `json:"autoPrintGap"`
	AutoPrintInterval *float64        `json:"autoPrintInterval"`
	Checkpoint        *bool           `json:"checkpoint"`
	Description       *string         `json:"description"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// MaxCount is the largest copies, firstRow and rowCount a print job may give: the largest
// signed 32-bit integer, what a printer's firmware can be expected to hold.
const MaxCount = math.MaxInt32

// count reads an optional whole-number attribute from 0 to MaxCount.
func count(name string, p *float64) (int, error) {
	if p == nil {
		return 0, nil
	}
	v := *p
	if v < 0 || v != math.Trunc(v) || v > MaxCount {
		return 0, fmt.Errorf("%s must be a whole number from 0 to %d, not %s", name, MaxCount, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return int(v), nil
}

// named reads the optional attributes that name something (a label, a table, a column or a
// key): given, they cannot be empty, since nothing has an empty name.
func named(req *jobRequest) error {
	for _, a := range []struct {
		name string
		v    *string
	}{
		{"labelName", req.LabelName}, {"labelColumn", req.LabelColumn}, {"tableName", req.TableName},
		{"keyColumn", req.KeyColumn}, {"key", req.Key}, {"copiesColumn", req.CopiesColumn},
		{"printedColumn", req.PrintedColumn},
	} {
		if a.v != nil && *a.v == "" {
			return fmt.Errorf("%s is empty: leave it out or give a name", a.name)
		}
	}
	return nil
}

// printerFor returns the printer a request addresses: its {name}, or the first printer on the
// single-printer paths. It answers 404 itself.
func (s *Simulator) printerFor(w http.ResponseWriter, r *http.Request) *printer {
	name := r.PathValue("name")
	if name == "" {
		name = s.cfg.printers[0]
	}
	p, ok := s.printers[name]
	if !ok {
		writeError(w, http.StatusNotFound, "no printer "+strconv.Quote(name))
		return nil
	}
	return p
}

type jobAnswer struct {
	Printer     string `json:"printer"`
	Label       string `json:"label,omitempty"`
	QueueLength int    `json:"queueLength"`
}

func (s *Simulator) printJob(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.printerFor(w, r)
	if p == nil {
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		p.queue = nil
		s.ui.changed(p.name)
		writeJSON(w, http.StatusOK, jobAnswer{Printer: p.name})
		return
	}
	var req jobRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "print job: "+err.Error())
		return
	}
	j, label, code, err := s.newJob(&req)
	if err != nil {
		writeError(w, code, "print job: "+err.Error())
		return
	}
	if req.Queue != nil && *req.Queue {
		p.queue = append(p.queue, j)
	} else {
		p.queue = []*job{j}
	}
	s.ui.changed(p.name)
	writeJSON(w, http.StatusOK, jobAnswer{Printer: p.name, Label: label, QueueLength: len(p.queue)})
}

// newJob validates a print job against the stored labels and tables; it returns the job, the
// label of its first print, and the status to answer on error.
func (s *Simulator) newJob(req *jobRequest) (*job, string, int, error) {
	bad := func(format string, args ...any) (*job, string, int, error) {
		return nil, "", http.StatusBadRequest, fmt.Errorf(format, args...)
	}
	missing := func(format string, args ...any) (*job, string, int, error) {
		return nil, "", http.StatusNotFound, fmt.Errorf(format, args...)
	}
	if err := named(req); err != nil {
		return bad("%v", err)
	}
	j := &job{
		labelName: str(req.LabelName), labelColumn: str(req.LabelColumn), table: str(req.TableName),
		copiesColumn: str(req.CopiesColumn), printedColumn: str(req.PrintedColumn),
	}
	if len(req.LabelData) > 0 && !bytes.Equal(bytes.TrimSpace(req.LabelData), []byte("null")) {
		j.labelData = req.LabelData
	}
	if j.labelName == "" && j.labelColumn == "" && j.labelData == nil {
		return bad("name the label with labelName, labelColumn or labelData")
	}
	copies, err := count("copies", req.Copies)
	if err != nil {
		return bad("%v", err)
	}
	firstRow, err := count("firstRow", req.FirstRow)
	if err != nil {
		return bad("%v", err)
	}
	rowCount, err := count("rowCount", req.RowCount)
	if err != nil {
		return bad("%v", err)
	}
	j.copies = copies
	if j.table == "" {
		for name, set := range map[string]bool{
			"labelColumn": j.labelColumn != "", "keyColumn": req.KeyColumn != nil, "key": req.Key != nil,
			"firstRow": req.FirstRow != nil, "rowCount": req.RowCount != nil,
			"copiesColumn": j.copiesColumn != "", "printedColumn": j.printedColumn != "",
		} {
			if set {
				return bad("%s needs tableName", name)
			}
		}
		if j.labelData == nil {
			if _, ok := s.labels[j.labelName]; !ok {
				return missing("no label %q", j.labelName)
			}
		}
		return j, j.labelName, 0, nil
	}
	if (req.KeyColumn == nil) != (req.Key == nil) {
		return bad("keyColumn and key go together")
	}
	t, ok := s.tables[j.table]
	if !ok {
		return missing("no table %q", j.table)
	}
	for _, c := range []string{j.labelColumn, j.copiesColumn, j.printedColumn, str(req.KeyColumn)} {
		if c != "" && t.column(c) < 0 {
			return bad("table %q has no column %q", j.table, c)
		}
	}
	if req.KeyColumn != nil {
		row := t.find(t.column(*req.KeyColumn), *req.Key)
		if row < 0 {
			return missing("no row with %s=%q in table %q", *req.KeyColumn, *req.Key, j.table)
		}
		j.rows = []int{row}
		j.keyColumn = *req.KeyColumn
	} else {
		if firstRow >= len(t.Rows) {
			return missing("table %q has no row %d", j.table, firstRow)
		}
		end := len(t.Rows)
		if req.RowCount != nil {
			end = firstRow + min(rowCount, end-firstRow)
		}
		for i := firstRow; i < end; i++ {
			j.rows = append(j.rows, i)
		}
		if len(j.rows) == 0 {
			return bad("rowCount selects no row")
		}
	}
	label, err := s.labelFor(j, t)
	if err != nil {
		return missing("%v", err)
	}
	return j, label, 0, nil
}

// labelFor resolves the label a table job prints for its current row.
func (s *Simulator) labelFor(j *job, t *table) (string, error) {
	name := j.labelName
	if j.labelColumn != "" {
		if cell := t.cell(j.rows[j.rowPos], t.column(j.labelColumn)); cell != "" {
			name = cell
		}
	}
	if j.labelData != nil && name == "" {
		return "", nil
	}
	if _, ok := s.labels[name]; !ok {
		return "", fmt.Errorf("no label %q", name)
	}
	return name, nil
}

type triggerAnswer struct {
	Printer     string `json:"printer"`
	Label       string `json:"label,omitempty"`
	Printed     int    `json:"printed"`
	QueueLength int    `json:"queueLength"`
}

func (s *Simulator) trigger(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.printerFor(w, r)
	if p == nil {
		return
	}
	label, msg := s.fire(p)
	if msg != "" {
		writeError(w, http.StatusConflict, msg)
		return
	}
	writeJSON(w, http.StatusOK, triggerAnswer{Printer: p.name, Label: label, Printed: 1, QueueLength: len(p.queue)})
}

// fire is one trigger of p, from the endpoint or from the line: it prints one label of the
// job at the head of the queue and returns that label, or counts a bounce and returns why
// (msg). A table job whose table lost what it needs since it was selected (the table, its row,
// a column it names, or the label its row names) bounces and leaves the queue. Every check
// comes before the first change, so a trigger counts as exactly one print or one bounce.
// s.mu is held.
func (s *Simulator) fire(p *printer) (label, msg string) {
	p.counters.Triggers++
	if len(p.queue) == 0 {
		p.counters.TriggerBounces++
		msg = "no job selected on " + p.name
		s.noteTrigger(p, "", "", msg, nil, nil, s.cfg.clock.Now())
		return "", msg
	}
	j := p.queue[0]
	label = j.labelName
	limit := j.copies
	var row map[string]string
	var key string
	if j.table != "" {
		t := s.tables[j.table]
		var err error
		if err = j.stale(t); err == nil {
			label, err = s.labelFor(j, t)
		}
		if err != nil {
			p.queue = p.queue[1:]
			p.counters.TriggerBounces++
			msg = err.Error() + "; job dropped"
			s.noteTrigger(p, label, "", msg, nil, nil, s.cfg.clock.Now())
			return "", msg
		}
		r := j.rows[j.rowPos]
		row = t.rowMap(r) // as printed, before printedColumn counts this label
		key = row[j.keyColumnOr(t)]
		if j.copiesColumn != "" {
			if n, err := strconv.Atoi(t.cell(r, t.column(j.copiesColumn))); err == nil && n >= 0 {
				limit = n
			}
		}
		if j.printedColumn != "" {
			col := t.column(j.printedColumn)
			n, _ := strconv.Atoi(t.cell(r, col))
			t.Rows[r][col] = json.Number(strconv.Itoa(n + 1))
		}
	}
	content := j.labelData
	if label != "" {
		content = s.labels[label]
	}
	now := s.cfg.clock.Now()
	p.printed = fillLabel(content, now, row)
	s.noteTrigger(p, label, key, "", content, row, now)
	p.counters.PrintedLabels++
	p.events = append(p.events, now)
	j.printedInRow++
	rowDone := limit > 0 && j.printedInRow >= limit || limit == 0 && len(j.rows) > 1
	if rowDone {
		j.printedInRow = 0
		j.rowPos++
		if len(j.rows) <= 1 || j.rowPos >= len(j.rows) {
			p.queue = p.queue[1:]
		}
	}
	return label, ""
}

// stale says what a table job needs from t (its table now) that t no longer has: the table,
// the job's current row, or a column the job names. A table PUT can take any of them away
// after the job was selected.
func (j *job) stale(t *table) error {
	if t == nil {
		return fmt.Errorf("table %q is gone", j.table)
	}
	if row := j.rows[j.rowPos]; row >= len(t.Rows) {
		return fmt.Errorf("table %q has no row %d any more", j.table, row)
	}
	for _, c := range []string{j.labelColumn, j.copiesColumn, j.printedColumn} {
		if c != "" && t.column(c) < 0 {
			return fmt.Errorf("table %q has no column %q any more", j.table, c)
		}
	}
	return nil
}

// PressTrigger is a trigger from the line (a product sensor), not over HTTP: it has the same
// effects as the trigger endpoint, and printed is false on a bounce (nothing selected). The
// error is for an unknown printer.
func (s *Simulator) PressTrigger(printer string) (printed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.printers[printer]
	if !ok {
		return false, fmt.Errorf("printersim: no printer %q", printer)
	}
	_, msg := s.fire(p)
	return msg == "", nil
}

// ResetCounters sets a printer's counters back to zero, as a restart of the printer would;
// the selected jobs and the print events stay. The error is for an unknown printer.
func (s *Simulator) ResetCounters(printer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.printers[printer]
	if !ok {
		return fmt.Errorf("printersim: no printer %q", printer)
	}
	p.counters = Counters{}
	s.ui.changed(p.name)
	return nil
}

// pressSelected is one beat of the running line (WithAutoTrigger): a trigger for each printer
// that has a job selected.
func (s *Simulator) pressSelected() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.printers {
		if len(p.queue) > 0 {
			s.fire(p)
		}
	}
}

func (s *Simulator) abortPrint(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.printerFor(w, r)
	if p == nil {
		return
	}
	n := len(p.queue)
	p.queue = nil
	s.ui.changed(p.name)
	writeJSON(w, http.StatusOK, map[string]any{"printer": p.name, "aborted": n})
}

func (s *Simulator) counters(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.printerFor(w, r); p != nil {
		writeJSON(w, http.StatusOK, p.counters)
	}
}

type historyBody struct {
	Time  []int64 `json:"time"`
	Count []int64 `json:"count"`
}

// bucketStart aligns a Unix time to its bucket in UTC; weeks start on Monday.
func bucketStart(resolution string, u int64) (int64, bool) {
	floor := func(u, size, offset int64) int64 {
		d := u - offset
		q := d / size
		if d%size < 0 {
			q--
		}
		return q*size + offset
	}
	switch resolution {
	case "MINUTES":
		return floor(u, 60, 0), true
	case "HOURS":
		return floor(u, 3600, 0), true
	case "", "DAYS":
		return floor(u, 86400, 0), true
	case "WEEKS":
		// 1970-01-05, the first Monday after the epoch.
		return floor(u, 7*86400, 4*86400), true
	}
	return 0, false
}

func (s *Simulator) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	resolution := q.Get("resolution")
	if _, ok := bucketStart(resolution, 0); !ok {
		writeError(w, http.StatusBadRequest, "resolution must be MINUTES, HOURS, DAYS or WEEKS")
		return
	}
	start, end := int64(math.MinInt64), int64(math.MaxInt64)
	for _, b := range []struct {
		name string
		dst  *int64
	}{{"start", &start}, {"end", &end}} {
		if v := q.Get(b.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				writeError(w, http.StatusBadRequest, b.name+" must be Unix seconds")
				return
			}
			*b.dst = n
		}
	}
	if end < start {
		writeError(w, http.StatusBadRequest, "end is before start")
		return
	}
	s.mu.Lock()
	p := s.printerFor(w, r)
	if p == nil {
		s.mu.Unlock()
		return
	}
	buckets := map[int64]int64{}
	for _, e := range p.events {
		u := e.Unix()
		if u < start || u > end {
			continue
		}
		b, _ := bucketStart(resolution, u)
		buckets[b]++
	}
	s.mu.Unlock()
	out := historyBody{Time: make([]int64, 0, len(buckets)), Count: make([]int64, 0, len(buckets))}
	for b := range buckets {
		out.Time = append(out.Time, b)
	}
	sort.Slice(out.Time, func(i, k int) bool { return out.Time[i] < out.Time[k] })
	for _, b := range out.Time {
		out.Count = append(out.Count, buckets[b])
	}
	writeJSON(w, http.StatusOK, out)
}
