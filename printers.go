package labelprinter

import (
	"context"
	"encoding/json"
	"sort"
)

// PrintersService controls printing: print jobs, abort, trigger, counters and history.
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
	// Copies caps the number of copies; 0 is not sent, which the printer reads as unlimited.
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

// MarshalJSON encodes the typed fields and merges Extra, in sorted key order.
func (j PrintJob) MarshalJSON() ([]byte, error) { return j.marshal() }

// marshal is MarshalJSON on a pointer, which spares PrintJob calls a copy of the job.
func (j *PrintJob) marshal() ([]byte, error) {
	type plain PrintJob
	out, err := json.Marshal((*plain)(j))
	if err != nil || len(j.Extra) == 0 {
		return out, err
	}
	keys := make([]string, 0, len(j.Extra))
	for k := range j.Extra {
		if printJobFields[k] {
			return nil, invalidArg("PrintJob", "Extra key %q collides with a PrintJob field", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out = out[:len(out)-1] // drop '}'
	for i, k := range keys {
		if i > 0 || len(out) > 1 {
			out = append(out, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(j.Extra[k])
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, kb...), ':'), vb...)
	}
	return append(out, '}'), nil
}

// PrintJob selects job on printer, or on the single printer when printer is "" (POST
// /api/v3/printers/{name}/printJob or /api/v3/printJob). It is sent once: it is retried only
// when the connection could not be made, and a failure after the request may have reached
// the printer matches ErrOutcomeUnknown. The response, which the contract does not describe,
// is returned as is.
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
		return nil, invalidArg(o.name, "encoding job: %v", err)
	}
	o.body = body
	return s.client.doRaw(ctx, &o)
}

// DeselectJobs deselects every job on printer (or on the single printer when printer is "") by
// sending printJob with an empty body, as the contract's first mode says.
func (s *PrintersService) DeselectJobs(ctx context.Context, printer string) (json.RawMessage, error) {
	o := operation{name: "Printers.DeselectJobs", method: "POST", hasBody: true, contentType: mediaJSON, class: printOnce}
	if err := o.setPrinterPath(printer, "/printJob"); err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &o)
}

// AbortPrint aborts printing on printer (POST /api/v3/printers/{name}/abortPrint). Aborting
// twice is harmless and an abort lost to a network blip is worse, so it is retried like a GET.
func (s *PrintersService) AbortPrint(ctx context.Context, printer string) (json.RawMessage, error) {
	const op = "Printers.AbortPrint"
	name, err := escapeName(op, "printer", printer)
	if err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &operation{name: op, method: "POST", path: "/printers/", seg: name, tail: "/abortPrint", class: idempotent})
}

// Trigger triggers one print on printer (POST /api/v3/printers/{name}/trigger). Like PrintJob
// it is sent once, and a failure after it may have reached the printer matches
// ErrOutcomeUnknown.
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

// Status returns the printer status from GET /api/v3/status (from the maker's pages; its shape
// is not part of the contract).
func (s *PrintersService) Status(ctx context.Context) (json.RawMessage, error) {
	return s.client.doRaw(ctx, &operation{name: "Printers.Status", method: "GET", path: "/status"})
}
