package outbox

import (
	"context"
	"log/slog"

	"github.com/labelprinter/go-labelprinter/internal/fence"
)

// lateOutcome ends the delivery of r, whose answer came after another Run took its lane over
// (a pause or a partition longer than the lease, say): that Run made the entry Unknown, which
// stays, and it leaves this Outbox's index. How far the request got is logged, with the
// printer's answer, not as the entry's state, since it is what the person deciding about the
// Unknown entry wants to know: a request this Run had not written never reached the printer
// from here.
func (o *Outbox) lateOutcome(it *item, r *record, written fence.Written) {
	gone := Cancelled
	o.release(it, &gone)
	o.dirty.Store(true)
	if o.log == nil {
		return
	}
	attrs := []slog.Attr{slog.String("id", r.ID), slog.String("printer", r.Printer), slog.String("written", written.String())}
	if written == fence.NotWritten {
		o.log.LogAttrs(context.Background(), slog.LevelWarn,
			"outbox: another run took the lane over while this run's request was stopped before it was written; the printer did not get it from this run", attrs...)
		return
	}
	attrs = append(attrs, slog.String("answer", string(r.State)))
	if r.Error != "" {
		attrs = append(attrs, slog.String("error", r.Error))
	}
	o.log.LogAttrs(context.Background(), slog.LevelWarn,
		"outbox: the printer's answer came after another run took the lane over; the entry keeps the state that run gave it", attrs...)
}
