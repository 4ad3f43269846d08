package outbox

import (
	"context"
	"log/slog"
)

// lateOutcome ends the delivery of r, whose answer came after another Run took its lane over
// (a pause longer than the lease, say): that Run made the entry Unknown, which stays, and it
// leaves this Outbox's index. The answer is logged, not as the entry's state, since it is
// what the person deciding about the Unknown entry wants to know.
func (o *Outbox) lateOutcome(it *item, r *record) {
	gone := Cancelled
	o.release(it, &gone)
	o.dirty.Store(true)
	if o.log == nil {
		return
	}
	attrs := []slog.Attr{slog.String("id", r.ID), slog.String("printer", r.Printer), slog.String("answer", string(r.State))}
	if r.Error != "" {
		attrs = append(attrs, slog.String("error", r.Error))
	}
	o.log.LogAttrs(context.Background(), slog.LevelWarn,
		"outbox: the printer's answer came after another run took the lane over; the entry keeps the state that run gave it", attrs...)
}
