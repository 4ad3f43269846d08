package labelprinter

import (
	"context"
	"errors"
	"iter"
	"time"
)

// The defaults and floor of WatchOptions.
const (
	defaultWatchInterval    = time.Second
	defaultWatchMaxInterval = 30 * time.Second
	minWatchInterval        = 10 * time.Millisecond
)

// WatchOptions sets the pace of WatchCounters, WatchStatus and WaitPrinted. A nil
// *WatchOptions, like zero fields, takes the defaults.
type WatchOptions struct {
	// Interval is the wait between the end of one poll and the start of the next: default 1 s,
	// at least 10 ms. Polls never overlap, so a slow printer is polled less often, not more.
	Interval time.Duration
	// MaxInterval caps the back-off while polls fail: default 30 s. A value below Interval
	// means no back-off at all.
	MaxInterval time.Duration
}

// watchPace is WatchOptions checked and with its defaults filled in.
type watchPace struct {
	interval, maxInterval time.Duration
}

// pace checks o for op and fills in the defaults.
func (o *WatchOptions) pace(op string) (watchPace, error) {
	p := watchPace{interval: defaultWatchInterval, maxInterval: defaultWatchMaxInterval}
	if o == nil {
		return p, nil
	}
	switch {
	case o.Interval < 0:
		return p, invalidArg(op, "Interval is negative (%v)", o.Interval)
	case o.MaxInterval < 0:
		return p, invalidArg(op, "MaxInterval is negative (%v)", o.MaxInterval)
	case o.Interval != 0 && o.Interval < minWatchInterval:
		return p, invalidArg(op, "Interval %v is below the %v floor; a printer is not a busy loop", o.Interval, minWatchInterval)
	}
	if o.Interval != 0 {
		p.interval = o.Interval
	}
	if o.MaxInterval != 0 {
		p.maxInterval = o.MaxInterval
	}
	p.maxInterval = max(p.maxInterval, p.interval)
	return p, nil
}

// backoff is the wait after the n-th failure in a row: Interval doubled n times, capped at
// MaxInterval.
func (p watchPace) backoff(failures int) time.Duration {
	d := p.interval
	for i := 0; i < failures && d < p.maxInterval; i++ {
		d *= 2
	}
	return min(d, p.maxInterval)
}

// terminal reports whether waiting cannot heal err: a bad argument, an unknown printer, or
// credentials the printer refuses. Every other failure (network, 5xx, 429, a garbled answer)
// may pass, so a watch rides it out.
func terminal(err error) bool {
	return errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrNotFound) ||
		errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden)
}

// checkWatch refuses, before anything is sent, what a watch of printer cannot start with. An
// empty printer name means the single-printer paths, as for Counters.
func checkWatch(ctx context.Context, op, printer string, opts *WatchOptions) (watchPace, error) {
	if ctx == nil {
		return watchPace{}, invalidArg(op, "nil context")
	}
	if printer != "" {
		if _, err := escapeName(op, "printer", printer); err != nil {
			return watchPace{}, err
		}
	}
	return opts.pace(op)
}

// poll calls once at once, then again after each wait, until once says to stop or ctx ends.
// once reports whether its poll failed, which doubles the next wait (up to the cap) until a
// poll succeeds. It runs on the caller's goroutine and starts none, so a watch that stops
// leaves nothing behind.
func (c *Client) poll(ctx context.Context, p watchPace, once func() (failed, more bool)) {
	failures := 0
	for {
		failed, more := once()
		if !more || ctx.Err() != nil {
			return
		}
		wait := p.interval
		if failed {
			failures++
			wait = p.backoff(failures)
		} else {
			failures = 0
		}
		if c.sleep(ctx, wait) != nil {
			return
		}
	}
}

// CountersChange is one event of WatchCounters.
type CountersChange struct {
	// Time is when the answer arrived.
	Time time.Time
	// Counters are the values read.
	Counters PrintCounters
	// Delta is the growth since the previous change yielded: zero on the first, and zero on
	// the first answer after failed polls when nothing changed meanwhile. On a Reset it is
	// Counters itself, what the printer counted since it started again (as Prometheus'
	// increase() reads a counter reset), so a sum of the deltas loses no label printed
	// between the restart and the poll.
	Delta PrintCounters
	// Reset is true when a counter went down (a restart or a reset of the printer): Delta is
	// then the new Counters, and they are the baseline of the next Delta.
	Reset bool
}

// WatchCounters polls the counters of printer (or of the single printer when printer is "")
// and yields the first answer at once, then one change each time a counter differs; polls that
// find nothing new yield nothing, except the first answer after failed polls, which is
// yielded even when nothing changed (Delta zero, Reset false), so a consumer learns the
// printer answers again.
//
// A failed poll (after the Client's own retries) yields a zero CountersChange and the error,
// and the watch goes on, waiting twice as long after each failure in a row up to MaxInterval.
// An answer that is not complete counters (a *DecodeError) is such a failure: it never yields
// a Reset. Errors that waiting cannot heal (ErrInvalidArgument, ErrNotFound, ErrUnauthorized,
// ErrForbidden) are yielded once and end the stream, as do a bad printer name or bad options,
// before anything is sent. When ctx ends, the stream ends without yielding ctx's error;
// breaking out of the loop stops polling at once. The watch runs on the ranging goroutine and
// starts no other.
func (s *PrintersService) WatchCounters(ctx context.Context, printer string, opts *WatchOptions) iter.Seq2[CountersChange, error] {
	return func(yield func(CountersChange, error) bool) {
		pace, err := checkWatch(ctx, "Printers.WatchCounters", printer, opts)
		if err != nil {
			yield(CountersChange{}, err)
			return
		}
		var last PrintCounters
		first, failed := true, false
		s.client.poll(ctx, pace, func() (bool, bool) {
			pc, err := s.Counters(ctx, printer)
			if err != nil {
				if ctx.Err() != nil {
					return true, false
				}
				failed = true
				return true, yield(CountersChange{}, err) && !terminal(err)
			}
			ch := CountersChange{Time: time.Now(), Counters: *pc}
			switch {
			case first:
			case *pc == last && !failed:
				return false, true
			case wentDown(last, *pc):
				ch.Reset = true
				ch.Delta = *pc
			default:
				ch.Delta = PrintCounters{
					Triggers:       pc.Triggers - last.Triggers,
					TriggerBounces: pc.TriggerBounces - last.TriggerBounces,
					PrintedLabels:  pc.PrintedLabels - last.PrintedLabels,
				}
			}
			first, failed, last = false, false, *pc
			return false, yield(ch, nil)
		})
	}
}

// wentDown reports whether any counter is lower in now than in before: counters only grow, so
// the printer restarted or was reset in between.
func wentDown(before, now PrintCounters) bool {
	return now.Triggers < before.Triggers || now.TriggerBounces < before.TriggerBounces ||
		now.PrintedLabels < before.PrintedLabels
}

// StatusChange is one event of WatchStatus.
type StatusChange struct {
	// Time is when the answer arrived.
	Time time.Time
	// Status is the status read.
	Status *PrinterStatus
	// Previous is the status of the previous change yielded (after failed polls, the last
	// status read before them); nil on the first.
	Previous *PrinterStatus
}

// WatchStatus polls the printer status (GET /api/v3/status) and yields the first answer at
// once, then one change each time the state, ragStatus, errors or ink differ, and the first
// answer after failed polls even when nothing differs (Previous is then the last status read
// before the failures). It follows the rules of WatchCounters: failures are yielded and ridden
// out with a back-off, errors that waiting cannot heal end the stream, ctx's end ends it
// silently, and breaking out stops it at once.
func (s *PrintersService) WatchStatus(ctx context.Context, opts *WatchOptions) iter.Seq2[StatusChange, error] {
	return func(yield func(StatusChange, error) bool) {
		pace, err := checkWatch(ctx, "Printers.WatchStatus", "", opts)
		if err != nil {
			yield(StatusChange{}, err)
			return
		}
		var last *PrinterStatus
		failed := false
		s.client.poll(ctx, pace, func() (bool, bool) {
			st, err := s.Status(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return true, false
				}
				failed = true
				return true, yield(StatusChange{}, err) && !terminal(err)
			}
			if last != nil && !failed && sameStatus(last, st) {
				return false, true
			}
			ch := StatusChange{Time: time.Now(), Status: st, Previous: last}
			last, failed = st, false
			return false, yield(ch, nil)
		})
	}
}
