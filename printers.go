package labelprinter

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// PrintersService controls printing: print jobs, abort, trigger, counters and history.
//
// A printer name of "" addresses a single-printer system where the contract has such a form
// (counters, history, printJob; status takes no name at all); the printer that answers is the
// system's own. Trigger, AbortPrint and ConfirmTrigger need a printer name, since the contract
// has no single-printer trigger or abortPrint: "" is refused before anything is sent.
type PrintersService service

// PrintJob is the body of a printJob request. Fields are the maker's attribute names in Go
// case; zero values are not sent. It has three uses: select a label (LabelName or LabelData),
// select from a table (TableName with LabelName or LabelColumn, refined by the other fields),
// and add to the queue instead of replacing it (Queue). Deselecting is DeselectJobs.
type PrintJob struct {
	// LabelName selects a stored label.
	LabelName string `json:"labelName,omitempty"`
	// LabelColumn names the table column that holds the label name (database selection).
	LabelColumn string `json:"labelColumn,omitempty"`
	// LabelData is a complete label object sent inline.
	LabelData json.RawMessage `json:"labelData,omitempty"`
	// TableName is the table for database selection.
	TableName string `json:"tableName,omitempty"`
	// KeyColumn is the column searched for Key.
	KeyColumn string `json:"keyColumn,omitempty"`
	// Key is the value searched in KeyColumn.
	Key string `json:"key,omitempty"`
	// Copies caps the number of copies; 0 is not sent, which the printer reads as unlimited:
	// a job without Copies prints on every trigger until it is deselected (the printer's
	// default, and on a line the usual mode).
	Copies int `json:"copies,omitempty"`
	// CopiesColumn names the table column that holds the number of copies.
	CopiesColumn string `json:"copiesColumn,omitempty"`
	// Queue, when set, adds the job to the queue (true) or replaces the queue (false).
	Queue *bool `json:"queue,omitempty"`
	// Freeze, when set, freezes the label's content at selection; the printer defaults it to Queue.
	Freeze *bool `json:"freeze,omitempty"`
	// FirstRow is the first table row used (default 0).
	FirstRow int `json:"firstRow,omitempty"`
	// RowCount is the number of table rows used; 0 is not sent (all remaining rows).
	RowCount int `json:"rowCount,omitempty"`
	// PrintedColumn names the table column the printer increments per printed label.
	PrintedColumn string `json:"printedColumn,omitempty"`
	// PrintDelay overrides the print delay, in millimetres.
	PrintDelay float64 `json:"printDelay,omitempty"`
	// AutoPrintGap is the auto-print gap, in the unit the maker documents (nanometres).
	AutoPrintGap float64 `json:"autoPrintGap,omitempty"`
	// AutoPrintInterval is the auto-print interval, in the unit the maker documents (nanometres).
	AutoPrintInterval float64 `json:"autoPrintInterval,omitempty"`
	// Checkpoint, when set, is sent as the maker's checkpoint flag.
	Checkpoint *bool `json:"checkpoint,omitempty"`
	// Description is shown on the printer's Overview tab.
	Description string `json:"description,omitempty"`
	// Extra holds attributes the SDK does not know yet; they are merged into the JSON object.
	// A key that collides with a field above is an error.
	Extra map[string]any `json:"-"`
}

// Ptr returns a pointer to v, for the optional fields of PrintJob such as Queue.
func Ptr[T any](v T) *T { return &v }

// printJobFields is the set of JSON names PrintJob types, for the Extra collision check.
var printJobFields = map[string]bool{
	"labelName": true, "labelColumn": true, "labelData": true, "tableName": true, "keyColumn": true,
	"key": true, "copies": true, "copiesColumn": true, "queue": true, "freeze": true, "firstRow": true,
	"rowCount": true, "printedColumn": true, "printDelay": true, "autoPrintGap": true,
	"autoPrintInterval": true, "checkpoint": true, "description": true,
}

// empty reports whether the job would encode to {}: the body that deselects every job.
func (j *PrintJob) empty() bool {
	return j.LabelName == "" && j.LabelColumn == "" && len(j.LabelData) == 0 && j.TableName == "" &&
		j.KeyColumn == "" && j.Key == "" && j.Copies == 0 && j.CopiesColumn == "" && j.Queue == nil &&
		j.Freeze == nil && j.FirstRow == 0 && j.RowCount == 0 && j.PrintedColumn == "" &&
		j.PrintDelay == 0 && j.AutoPrintGap == 0 && j.AutoPrintInterval == 0 && j.Checkpoint == nil &&
		j.Description == "" && len(j.Extra) == 0
}

// Validate reports what the printer would refuse, without sending anything: a job must name
// its label, table refinements need a table, and counts cannot be negative. Anything the
// contract allows passes.
func (j *PrintJob) Validate() error {
	const op = "PrintJob"
	if j == nil || j.empty() {
		return invalidArg(op, "the job is empty, and an empty printJob body deselects every job on the line; call Printers.DeselectJobs to do that")
	}
	if j.LabelName == "" && j.LabelColumn == "" && len(j.LabelData) == 0 {
		return invalidArg(op, "the job names no label: set LabelName, LabelColumn or LabelData")
	}
	if j.TableName == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"LabelColumn", j.LabelColumn != ""}, {"KeyColumn", j.KeyColumn != ""}, {"Key", j.Key != ""},
			{"FirstRow", j.FirstRow != 0}, {"RowCount", j.RowCount != 0},
			{"CopiesColumn", j.CopiesColumn != ""}, {"PrintedColumn", j.PrintedColumn != ""},
		} {
			if f.set {
				return invalidArg(op, "%s needs TableName", f.name)
			}
		}
	}
	if j.Copies < 0 {
		return invalidArg(op, "Copies is negative (%d)", j.Copies)
	}
	if j.FirstRow < 0 {
		return invalidArg(op, "FirstRow is negative (%d)", j.FirstRow)
	}
	if j.RowCount < 0 {
		return invalidArg(op, "RowCount is negative (%d)", j.RowCount)
	}
	if len(j.LabelData) > 0 && !json.Valid(j.LabelData) {
		return invalidArg(op, "LabelData is not valid JSON")
	}
	if err := j.checkNumbers(); err != nil {
		return err
	}
	for k := range j.Extra {
		if printJobFields[k] {
			return invalidArg(op, "Extra key %q collides with a PrintJob field", k)
		}
		if k == "" {
			return invalidArg(op, "Extra has an empty key")
		}
	}
	return nil
}

// checkNumbers refuses the floats JSON cannot carry. Validate and marshal share it, since
// MarshalJSON may be called on a job that was never validated.
func (j *PrintJob) checkNumbers() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"PrintDelay", j.PrintDelay}, {"AutoPrintGap", j.AutoPrintGap}, {"AutoPrintInterval", j.AutoPrintInterval}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return invalidArg("PrintJob", "%s is %v, which JSON cannot carry", f.name, f.v)
		}
	}
	return nil
}

// MarshalJSON encodes the typed fields that are set, in declaration order, then Extra in sorted
// key order. It fails on a NaN or infinite number, an invalid LabelData or an Extra key that
// collides with a typed field.
func (j PrintJob) MarshalJSON() ([]byte, error) { return j.marshal() }

// marshal is MarshalJSON on a pointer, which spares PrintJob calls a copy of the job. It writes
// the fields itself instead of through encoding/json's reflection, which cost more than the rest
// of a print call's own work; TestPrintJobEncoding and FuzzPrintJob hold it to encoding/json.
func (j *PrintJob) marshal() ([]byte, error) {
	if err := j.checkNumbers(); err != nil {
		return nil, err
	}
	strs := len(j.LabelName) + len(j.LabelColumn) + len(j.TableName) + len(j.KeyColumn) + len(j.Key) +
		len(j.CopiesColumn) + len(j.PrintedColumn) + len(j.Description)
	w := objectWriter{b: make([]byte, 1, 96+strs+len(j.LabelData))}
	w.b[0] = '{'
	w.str("labelName", j.LabelName)
	w.str("labelColumn", j.LabelColumn)
	if len(j.LabelData) > 0 {
		w.key("labelData")
		buf := bytes.NewBuffer(w.b)
		// Compact validates too, and keeps a pretty-printed label from bloating the body.
		if err := json.Compact(buf, j.LabelData); err != nil {
			return nil, invalidArg("PrintJob", "LabelData is not valid JSON: %v", err)
		}
		w.b = buf.Bytes()
	}
	w.str("tableName", j.TableName)
	w.str("keyColumn", j.KeyColumn)
	w.str("key", j.Key)
	w.integer("copies", j.Copies)
	w.str("copiesColumn", j.CopiesColumn)
	w.boolean("queue", j.Queue)
	w.boolean("freeze", j.Freeze)
	w.integer("firstRow", j.FirstRow)
	w.integer("rowCount", j.RowCount)
	w.str("printedColumn", j.PrintedColumn)
	w.number("printDelay", j.PrintDelay)
	w.number("autoPrintGap", j.AutoPrintGap)
	w.number("autoPrintInterval", j.AutoPrintInterval)
	w.boolean("checkpoint", j.Checkpoint)
	w.str("description", j.Description)
	if len(j.Extra) > 0 {
		keys := make([]string, 0, len(j.Extra))
		for k := range j.Extra {
			if printJobFields[k] {
				return nil, invalidArg("PrintJob", "Extra key %q collides with a PrintJob field", k)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vb, err := encodeJSON(j.Extra[k])
			if err != nil {
				return nil, invalidArg("PrintJob", "Extra key %q: %v", k, err)
			}
			w.sep()
			w.b = appendJSONString(w.b, k)
			w.b = append(append(w.b, ':'), vb...)
		}
	}
	return append(w.b, '}'), nil
}

// objectWriter appends the members of a JSON object whose values are set, the way
// encoding/json's omitempty would.
type objectWriter struct {
	b []byte // starts with '{'
}

func (w *objectWriter) sep() {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
}

// key writes a member name; names are the PrintJob's own ASCII literals, which need no escaping.
func (w *objectWriter) key(name string) {
	w.sep()
	w.b = append(append(append(w.b, '"'), name...), '"', ':')
}

func (w *objectWriter) str(name, v string) {
	if v != "" {
		w.key(name)
		w.b = appendJSONString(w.b, v)
	}
}

func (w *objectWriter) integer(name string, v int) {
	if v != 0 {
		w.key(name)
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	}
}

func (w *objectWriter) boolean(name string, v *bool) {
	if v != nil {
		w.key(name)
		w.b = strconv.AppendBool(w.b, *v)
	}
}

// number writes a finite v as encoding/json does: the shortest representation, in exponent
// form only for very small or very large magnitudes (checkNumbers has refused NaN and infinity).
func (w *objectWriter) number(name string, v float64) {
	if v == 0 {
		return
	}
	w.key(name)
	format := byte('f')
	if abs := math.Abs(v); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, v, format, -1, 64)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and control characters
// escaped, and each byte of invalid UTF-8 replaced by U+FFFD as encoding/json does. Like
// encodeJSON it leaves <, > and & alone: a printer reads this, not a browser.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}

// PrintJob selects job on printer, or on the single printer when printer is "" (POST
// /api/v3/printers/{name}/printJob or /api/v3/printJob). It is sent once: it is retried only
// when the connection could not be made, and a failure after the request may have reached
// the printer matches ErrOutcomeUnknown: no answer, or an answer 500, 502 or 504 (a gateway
// gives up on a slow printer after forwarding the job). The response, which the contract does
// not describe, is returned as is.
func (s *PrintersService) PrintJob(ctx context.Context, printer string, job *PrintJob) (json.RawMessage, error) {
	o := operation{name: "Printers.PrintJob", method: "POST", contentType: mediaJSON, class: printOnce}
	if err := o.setPrinterPath(printer, "/printJob"); err != nil {
		return nil, err
	}
	if err := job.Validate(); err != nil {
		return nil, err
	}
	body, err := job.marshal()
	if err != nil {
		return nil, err // already an ErrInvalidArgument naming the field
	}
	o.body = body
	return s.client.doRaw(ctx, &o)
}

// DeselectJobs deselects every job on printer (or on the single printer when printer is "") by
// sending printJob with an empty body, as the contract's first mode says. It is sent once, and
// its failures match ErrOutcomeUnknown as PrintJob's do.
func (s *PrintersService) DeselectJobs(ctx context.Context, printer string) (json.RawMessage, error) {
	// No body at all, so no Content-Type either: the request goes out with "Content-Length: 0",
	// which even the smallest embedded HTTP server reads (a zero-length chunked body is not).
	o := operation{name: "Printers.DeselectJobs", method: "POST", class: printOnce}
	if err := o.setPrinterPath(printer, "/printJob"); err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &o)
}

// AbortPrint aborts printing on printer (POST /api/v3/printers/{name}/abortPrint). Aborting
// twice is harmless and an abort lost to a network blip is worse, so it is retried like a GET.
// printer must be named: the contract has no single-printer abortPrint, so "" is an
// ErrInvalidArgument before anything is sent.
func (s *PrintersService) AbortPrint(ctx context.Context, printer string) (json.RawMessage, error) {
	const op = "Printers.AbortPrint"
	name, err := escapeName(op, "printer", printer)
	if err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &operation{name: op, method: "POST", path: "/printers/", seg: name, tail: "/abortPrint", class: idempotent})
}

// Trigger triggers one print on printer (POST /api/v3/printers/{name}/trigger). Like PrintJob
// it is sent once, and a failure after it may have reached the printer (no answer, or an
// answer 500, 502 or 504) matches ErrOutcomeUnknown. ConfirmTrigger tells from the counters
// what it did. printer must be named: the contract has no single-printer trigger, so "" is an
// ErrInvalidArgument before anything is sent.
func (s *PrintersService) Trigger(ctx context.Context, printer string) (json.RawMessage, error) {
	const op = "Printers.Trigger"
	name, err := escapeName(op, "printer", printer)
	if err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &operation{name: op, method: "POST", path: "/printers/", seg: name, tail: "/trigger", class: printOnce})
}

// Counters returns the print counters of printer, or of the single printer when printer is ""
// (GET /api/v3/printers/{name}/printCounters or /api/v3/printCounters).
func (s *PrintersService) Counters(ctx context.Context, printer string) (*PrintCounters, error) {
	o := operation{name: "Printers.Counters", method: "GET"}
	if err := o.setPrinterPath(printer, "/printCounters"); err != nil {
		return nil, err
	}
	pc := new(PrintCounters)
	if err := s.client.doJSON(ctx, &o, "PrintCounters", pc); err != nil {
		return nil, err
	}
	return pc, nil
}
