package mqttbridge

import (
	"context"
	"time"
)

// The back-off between attempts to commit a command to an outbox that cannot be written.
const (
	outboxRetryBackoff    = 250 * time.Millisecond
	maxOutboxRetryBackoff = 30 * time.Second
)

// enqueue commits a printJob or trigger to the outbox (enqueueOnce). An outbox that cannot be
// read or written (a full disk, an I/O error) is tried again in place, with back-off, each
// failure logged at error level: the command keeps its place, and those behind it wait, as
// their acknowledgements would anyway (they go in arrival order). Once the disk has room the
// command goes through, once. When ctx ends first the command is left with the broker, which
// delivers it again.
func (b *Bridge) enqueue(ctx context.Context, p *printer, cmd command, rep reply) chan struct{} {
	wait := outboxRetryBackoff
	for attempt := 1; ; attempt++ {
		done, err := b.enqueueOnce(ctx, p, cmd, rep)
		if err == nil {
			if attempt > 1 {
				b.log.Info("the outbox took the command after failures", "id", cmd.id, "printer", p.name, "attempts", attempt)
			}
			return done
		}
		b.log.Error("the outbox cannot be written; the command waits and is tried again",
			"id", cmd.id, "printer", p.name, "attempt", attempt, "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, maxOutboxRetryBackoff)
	}
}
