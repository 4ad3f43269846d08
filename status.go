package labelprinter

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
)

// PrinterState is the state a printer reports in its status. The maker documents the ten
// constants below; any other string is kept as it came, so a newer firmware's state is shown
// rather than lost.
type PrinterState string

// The printer states of the maker's pages (getPrinterState).
const (
	// StateInitializing: the printer is starting up.
	StateInitializing PrinterState = "INITIALIZING"
	// StateStopped: the ink systems are stopped.
	StateStopped PrinterState = "STOPPED"
	// StateStandby: the printer is in standby.
	StateStandby PrinterState = "STANDBY"
	// StateStarting: the ink systems are starting; HEATING comes next.
	StateStarting PrinterState = "STARTING"
	// StateHeating: the ink systems are started but not yet at operating temperature; the
	// maker counts this state as able to print.
	StateHeating PrinterState = "HEATING"
	// StateStarted: ready to print.
	StateStarted PrinterState = "STARTED"
	// StateMaintenance: operator mode is on, which prevents printing.
	StateMaintenance PrinterState = "MAINTENANCE"
	// StateStopping: the ink systems are stopping.
	StateStopping PrinterState = "STOPPING"
	// StateError: the printer is in error.
	StateError PrinterState = "ERROR"
	// StateOther: a mixed state, such as one ink system running and another stopped.
	StateOther PrinterState = "OTHER"
)

// Printable reports whether the maker's table says printing is possible in state s: true for
// HEATING and STARTED only, and false for every state the SDK does not know.
func (s PrinterState) Printable() bool { return s == StateHeating || s == StateStarted }

// RAGStatus is the red/amber/green summary a printer and each ink system report. Other values
// are kept as they came.
type RAGStatus string

// The RAG values of the maker's pages.
const (
	RAGRed   RAGStatus = "RED"
	RAGAmber RAGStatus = "AMBER"
	RAGGreen RAGStatus = "GREEN"
)

// InkLevel is the fill level of an ink system. Other values are kept as they came.
type InkLevel string

// The ink levels of the maker's pages.
const (
	InkEmpty InkLevel = "EMPTY"
	InkLow   InkLevel = "LOW"
	InkOK    InkLevel = "OK"
)

// InkStatus is the status of one ink system. Its State has its own list on the maker's pages
// (it adds CALIBRATING, FILLING, EMPTYING and MANUAL to the printer's), so it stays a string.
type InkStatus struct {
	// State is the ink system's state, such as "STARTED" or "FILLING".
	State string `json:"state"`
	// RAGStatus summarises the ink system's health.
	RAGStatus RAGStatus `json:"ragStatus"`
	// Level is the ink's fill level.
	Level InkLevel `json:"level"`
	// Errors holds the ink system's errors; empty when there are none.
	Errors []string `json:"errors"`
	// Warnings holds the ink system's warnings; empty when there are none.
	Warnings []string `json:"warnings"`
}

// PrinterStatus is what GET /api/v3/status answers, in the shape of the maker's Status object.
// That shape comes from the maker's pages, not from the contract, so Raw keeps the whole body
// as the printer sent it: fields the SDK does not type (a "printers" list, say) are read from
// there.
type PrinterStatus struct {
	// State is the printer's state; State.Printable says whether it can print.
	State PrinterState `json:"state"`
	// RAGStatus summarises the printer's health.
	RAGStatus RAGStatus `json:"ragStatus"`
	// Errors holds the printer's errors; empty when there are none.
	Errors []string `json:"errors"`
	// Ink holds one entry per ink system.
	Ink []InkStatus `json:"ink"`
	// Raw is the whole body as the printer sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the typed fields and keeps a copy of b in Raw. A JSON null leaves s
// unchanged, as encoding/json does for other values.
func (s *PrinterStatus) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	// A defined type without the method, so the decode does not recurse.
	type plain PrinterStatus
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	p.Raw = json.RawMessage(bytes.Clone(b))
	*s = PrinterStatus(p)
	return nil
}

// sameStatus reports whether two statuses say the same thing: state, ragStatus, errors and
// ink. Raw is left out, so a reordered or reformatted body is not a change.
func sameStatus(a, b *PrinterStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.State == b.State && a.RAGStatus == b.RAGStatus && slices.Equal(a.Errors, b.Errors) &&
		slices.EqualFunc(a.Ink, b.Ink, func(x, y InkStatus) bool {
			return x.State == y.State && x.RAGStatus == y.RAGStatus && x.Level == y.Level &&
				slices.Equal(x.Errors, y.Errors) && slices.Equal(x.Warnings, y.Warnings)
		})
}

// Status returns the printer status from GET /api/v3/status, which has only the single-printer
// form: it takes no printer name. Its shape comes from the maker's pages, not from the
// contract: values the SDK does not know are kept in the typed fields as they came, and the
// whole body in Raw. An empty or null body is a *DecodeError.
func (s *PrintersService) Status(ctx context.Context) (*PrinterStatus, error) {
	st := new(PrinterStatus)
	if err := s.client.doJSON(ctx, &operation{name: "Printers.Status", method: "GET", path: "/status"}, "PrinterStatus", st); err != nil {
		return nil, err
	}
	return st, nil
}
