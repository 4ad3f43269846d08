package mqttbridge

import (
	"context"
	"time"
)

// DefaultPruneAfter is how long a settled outbox entry stays before the bridge prunes it.
const DefaultPruneAfter = 30 * 24 * time.Hour

// The outbox's entries in a final state (sent, rejected, expired, cancelled) are pruned once
// their last change is outbox.prune_after old, as labelctl outbox prune does: each pruned id
// is kept, so a command repeated with it is answered duplicate (current: pruned) and nothing
// is sent again. Pending, sending and unknown entries are never pruned.

// validatePruneAfter fills in and checks outbox.prune_after.
func (c *Config) validatePruneAfter() error {
	switch {
	case c.Outbox.PruneAfter == 0:
		c.Outbox.PruneAfter = DefaultPruneAfter
	case c.Outbox.PruneAfter < time.Second:
		return fieldErr("outbox.prune_after", "%v is below 1s; write a duration such as 720h (30 days)", c.Outbox.PruneAfter)
	}
	return nil
}

// pruneEvery is how often the bridge prunes: a quarter of prune_after, within 1 s and 1 h, so
// an entry stays at most a quarter longer than prune_after.
func pruneEvery(after time.Duration) time.Duration {
	return min(max(after/4, time.Second), time.Hour)
}

// prune prunes every controller's outbox at start and then every pruneEvery until ctx ends.
// A bridge of a pair prunes only while it holds the lease; a failure is logged and tried at
// the next round.
func (b *Bridge) prune(ctx context.Context) {
	after := b.cfg.Outbox.PruneAfter
	t := time.NewTicker(pruneEvery(after))
	defer t.Stop()
	for {
		b.mu.Lock()
		active := b.taking()
		b.mu.Unlock()
		if active {
			for _, ctl := range b.ctls {
				n, err := ctl.ob.Prune(after)
				switch {
				case err != nil:
					b.log.Warn("cannot prune the outbox; tried again later", "url", ctl.url, "err", err)
				case n > 0:
					b.log.Info("pruned settled outbox entries, keeping their ids", "url", ctl.url, "entries", n, "older_than", after)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
