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
// failure logged at error level: the command keeps its place, and its printer's commands behind
// it wait (other printers' go on; their acknowledgements, in arrival order, wait for it). Once
// the disk has room the command goes through, once. When ctx ends first the command is left
// with the broker, which delivers it again.
func (b *Bridge) enqueue(ctx context.Context, p *printer, cmd command, rep reply) chan struct{} {
	return b.inPlace(ctx, p, cmd, "the outbox failed (a read or a write, as err says); the command waits and is tried again",
		func() (chan struct{}, error) { return b.enqueueOnce(ctx, p, cmd, rep) })
}

// inPlace runs try, which handles cmd, until it returns no error: each error (a state file
// that cannot be read or written) is logged at error level with msg, and try runs again after
// a back-off. nil when ctx ends first: the command stays with the broker.
func (b *Bridge) inPlace(ctx context.Context, p *printer, cmd command, msg string, try func() (chan struct{}, error)) chan struct{} {
	wait := outboxRetryBackoff
	for attempt := 1; ; attempt++ {
		done, err := try()
		if err == nil {
			if attempt > 1 {
				b.log.Info("the command went through after failures", "id", cmd.id, "printer", p.name, "command", cmd.name, "attempts", attempt)
			}
			return done
		}
		b.log.Error(msg, "id", cmd.id, "printer", p.name, "command", cmd.name, "attempt", attempt, "retry_in", wait, "err", err)
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

// runOutbox delivers ctl's outbox until ctx ends. The outbox's Run stops at a failure of its
// file (recording a job as being sent, or its outcome); the entries it had not sent are still
// pending in it, so Run is started again, with back-off, each failure logged at error level,
// and once the disk has room the queue goes on.
func (b *Bridge) runOutbox(ctx context.Context, ctl *controller) {
	wait := outboxRetryBackoff
	for {
		err := ctl.ob.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		b.log.Error("the outbox failed (a read or a write, as err says); delivery to its printers starts again", "url", ctl.url, "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, maxOutboxRetryBackoff)
	}
}
