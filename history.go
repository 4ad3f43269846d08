package labelprinter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Resolution is the bucket size of a print history.
type Resolution string

// The history resolutions of the contract; the printer's default is ResolutionDays.
const (
	ResolutionMinutes Resolution = "MINUTES"
	ResolutionHours   Resolution = "HOURS"
	ResolutionDays    Resolution = "DAYS"
	ResolutionWeeks   Resolution = "WEEKS"
)

// HistoryOptions selects the buckets of Printers.History. Zero fields are not sent, and the
// printer applies its defaults.
type HistoryOptions struct {
	// Resolution is the bucket size; "" lets the printer choose (DAYS).
	Resolution Resolution `url:"resolution,omitempty"`
	// Start is the start of the range, sent as Unix seconds; zero is not sent.
	Start time.Time `url:"start,omitempty,unix"`
	// End is the end of the range, sent as Unix seconds; zero is not sent.
	End time.Time `url:"end,omitempty,unix"`
}

func (o *HistoryOptions) validate(op string) error {
	if o == nil {
		return nil
	}
	switch o.Resolution {
	case "", ResolutionMinutes, ResolutionHours, ResolutionDays, ResolutionWeeks:
	default:
		return invalidArg(op, "unknown resolution %q (want MINUTES, HOURS, DAYS or WEEKS)", o.Resolution)
	}
	if !o.Start.IsZero() && !o.End.IsZero() && o.End.Before(o.Start) {
		return invalidArg(op, "end %s is before start %s", o.End.UTC().Format(time.RFC3339), o.Start.UTC().Format(time.RFC3339))
	}
	return nil
}

// PrintHistory is a printer's print history: Count[i] labels were printed in the bucket that
// starts at Time[i] (Unix seconds). Use Buckets for paired values.
type PrintHistory struct {
	// Time holds the start of each bucket, in Unix seconds.
	Time []int64 `json:"time"`
	// Count holds the labels printed in each bucket.
	Count []int64 `json:"count"`
}

// UnmarshalJSON decodes the parallel arrays without a per-element allocation, accepting every
// JSON form of an integer (3, 3.0, 3e0). An object without "time" or "count", with null there,
// or with arrays of different lengths is an error: no bucket can be read from it.
func (h *PrintHistory) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // encoding/json's convention; the client refuses a null body itself
	}
	var w struct {
		Time  requiredList `json:"time"`
		Count requiredList `json:"count"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch {
	case !w.Time.set:
		return errors.New(`the history lacks "time"`)
	case !w.Count.set:
		return errors.New(`the history lacks "count"`)
	case len(w.Time.l) != len(w.Count.l):
		return fmt.Errorf("the history has %d times but %d counts", len(w.Time.l), len(w.Count.l))
	}
	h.Time, h.Count = w.Time.l, w.Count.l
	return nil
}

// requiredList is an int64List that must be there: set tells a missing or null member from
// an empty array, without the allocation a pointer would cost.
type requiredList struct {
	l   int64List
	set bool
}

func (r *requiredList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = requiredList{} // a later null undoes an earlier array, as it would for a pointer
		return nil
	}
	if err := r.l.UnmarshalJSON(b); err != nil {
		return err
	}
	r.set = true
	return nil
}

// Bucket is one bucket of a print history.
type Bucket struct {
	// Start is the bucket's start, in UTC.
	Start time.Time
	// Count is the number of labels printed in the bucket.
	Count int64
}

// Buckets pairs Time and Count. It fails when they differ in length, which a decoded history
// never does (decoding refuses it) but a PrintHistory built by hand can.
func (h *PrintHistory) Buckets() ([]Bucket, error) {
	if len(h.Time) != len(h.Count) {
		return nil, fmt.Errorf("labelprinter: print history has %d times but %d counts", len(h.Time), len(h.Count))
	}
	out := make([]Bucket, len(h.Time))
	for i, t := range h.Time {
		out[i] = Bucket{Start: time.Unix(t, 0).UTC(), Count: h.Count[i]}
	}
	return out, nil
}

// int64List is a JSON array of integers, decoded by a scanner instead of reflection because
// histories can hold a million buckets.
type int64List []int64

func (l *int64List) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*l = nil
		return nil
	}
	if len(b) < 2 || b[0] != '[' {
		return errors.New("expected an array of numbers")
	}
	// One comma per element bounds the capacity without a second pass.
	n := 0
	for _, c := range b {
		if c == ',' {
			n++
		}
	}
	out := make([]int64, 0, n+1)
	i := 1
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return errors.New("unterminated array")
		}
		if b[i] == ']' && len(out) == 0 {
			break
		}
		start := i
		for i < len(b) && isNumberByte(b[i]) {
			i++
		}
		if start == i {
			return fmt.Errorf("element %d is not a number", len(out))
		}
		v, err := parseInt(b[start:i])
		if err != nil {
			return fmt.Errorf("element %d: %w", len(out), err)
		}
		out = append(out, v)
		i = skipSpace(b, i)
		if i >= len(b) {
			return errors.New("unterminated array")
		}
		if b[i] == ']' {
			break
		}
		if b[i] != ',' {
			return fmt.Errorf("element %d is not a number", len(out))
		}
		i++
	}
	*l = out
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// History returns the print history of printer, or of the single printer when printer is ""
// (GET /api/v3/printers/{name}/printHistory or /api/v3/printHistory).
func (s *PrintersService) History(ctx context.Context, printer string, opts *HistoryOptions) (*PrintHistory, error) {
	o := operation{name: "Printers.History", method: "GET"}
	if err := o.setPrinterPath(printer, "/printHistory"); err != nil {
		return nil, err
	}
	if err := opts.validate(o.name); err != nil {
		return nil, err
	}
	q, err := encodeQuery(o.name, opts)
	if err != nil {
		return nil, err
	}
	o.query = q
	h := new(PrintHistory)
	if err := s.client.doJSON(ctx, &o, "PrintHistory", h); err != nil {
		return nil, err
	}
	return h, nil
}
