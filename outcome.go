package labelprinter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrCountersReset is returned by WaitPrinted when the printer's counters went down while it
// waited: the printer restarted or its counters were reset, so the labels printed before can no
// longer be told from the labels printed after.
var ErrCountersReset = errors.New("labelprinter: the print counters went down (printer restarted or reset)")

// PrintProgress is how far WaitPrinted got.
type PrintProgress struct {
	// Target is the number of labels waited for.
	Target int64
	// Printed is how much printedLabels grew since the baseline.
	Printed int64
	// Bounces is how much triggerBounces grew since the baseline: triggers that found no job.
	Bounces int64
	// Counters are the last values read (after a reset, the values that showed it).
	Counters PrintCounters
}

// WaitPrinted waits until printer (or the single printer when printer is "") has printed n
// labels since the counters since, a reading taken before the job was selected. It polls as
// WatchCounters does, the first poll at once, and returns with a nil error as soon as Printed
// reaches n.
//
// When ctx ends first it returns the progress so far and an error that matches ctx's error
// with errors.Is; when the counters go down, the progress up to then and ErrCountersReset.
// Poll failures are ridden out with WatchCounters' back-off, incomplete counters (a
// *DecodeError) included, except those that waiting cannot heal, which are returned. n <= 0, a bad printer name or bad options are ErrInvalidArgument,
// before anything is sent.
//
// The counters count labels, not jobs: labels printed by anything else on the same printer in
// the meantime count too.
func (s *PrintersService) WaitPrinted(ctx context.Context, printer string, since PrintCounters, n int64, opts *WatchOptions) (PrintProgress, error) {
	const op = "Printers.WaitPrinted"
	progress := PrintProgress{Target: n, Counters: since}
	pace, err := checkWatch(ctx, op, printer, opts)
	if err != nil {
		return progress, err
	}
	if n <= 0 {
		return progress, invalidArg(op, "n must be positive, got %d", n)
	}
	var result, lastErr error
	s.client.poll(ctx, pace, func() (bool, bool) {
		pc, err := s.Counters(ctx, printer)
		if err != nil {
			if ctx.Err() != nil {
				return true, false
			}
			lastErr = err
			if terminal(err) {
				result = err
				return true, false
			}
			return true, true
		}
		lastErr = nil
		prev := progress.Counters
		progress.Counters = *pc
		// Below the previous reading or below the baseline: either way the printer restarted.
		if wentDown(prev, *pc) || wentDown(since, *pc) {
			result = fmt.Errorf("%w: waiting for %d labels on %s, after %d", ErrCountersReset, n, printerLabel(printer), progress.Printed)
			return false, false
		}
		progress.Printed = pc.PrintedLabels - since.PrintedLabels
		progress.Bounces = pc.TriggerBounces - since.TriggerBounces
		return false, progress.Printed < n
	})
	switch {
	case result != nil:
		return progress, result
	case progress.Printed >= n:
		return progress, nil
	case lastErr != nil:
		return progress, fmt.Errorf("%s: %d of %d labels on %s: %w (last poll: %v)", op, progress.Printed, n, printerLabel(printer), ctx.Err(), lastErr)
	}
	return progress, fmt.Errorf("%s: %d of %d labels on %s: %w", op, progress.Printed, n, printerLabel(printer), ctx.Err())
}

// printerLabel names printer in a message; "" is the single printer.
func printerLabel(printer string) string {
	if printer == "" {
		return "the printer"
	}
	return strconv.Quote(printer)
}

// TriggerOutcome is what ConfirmTrigger read from the counters about one trigger.
type TriggerOutcome int

// The outcomes of ConfirmTrigger.
const (
	// TriggerPrinted: the printer took the trigger and printed a label.
	TriggerPrinted TriggerOutcome = iota + 1
	// TriggerBounced: the printer took the trigger but had no job to print.
	TriggerBounced
	// TriggerNotReceived: the counters did not move and the trigger provably never reached
	// the printer (the connection could not be made, or the answer was 4xx), so sending it
	// again is safe.
	TriggerNotReceived
	// TriggerUnknown: the counters cannot tell what this trigger did. Other triggers happened
	// meanwhile, the counters went down, a reading failed, or they did not move although the
	// trigger may have arrived (its answer was lost or timed out, or was 2xx or 5xx). Do not
	// send it again before checking the line.
	TriggerUnknown
)

// String returns "printed", "bounced", "not received" or "unknown".
func (o TriggerOutcome) String() string {
	switch o {
	case TriggerPrinted:
		return "printed"
	case TriggerBounced:
		return "bounced"
	case TriggerNotReceived:
		return "not received"
	case TriggerUnknown:
		return "unknown"
	}
	return "TriggerOutcome(" + strconv.Itoa(int(o)) + ")"
}

// TriggerResult is ConfirmTrigger's account of one trigger.
type TriggerResult struct {
	// Outcome is what the counters, and the trigger's own answer, say happened.
	Outcome TriggerOutcome
	// Before and After are the counters read around the trigger; After is the last reading.
	Before PrintCounters
	After  PrintCounters
	// Response is the printer's answer to the trigger, when one arrived.
	Response json.RawMessage
	// Err is the trigger's own error, kept for the record: a lost answer, a 409 on a bounce.
	Err error
}

// ConfirmOptions gives ConfirmTriggerWith a printer that counts a trigger late.
type ConfirmOptions struct {
	// Settle is how long the counters may take to show the trigger once its answer arrived or
	// failed: while they do not show it, they are read again every 250 ms (or Settle, when
	// shorter) until Settle has passed; the first reading that settles the outcome ends the
	// wait. Default 250 ms. A printer that keeps working after the client gave up (a timeout,
	// a gateway's 504) needs about its slowest answer here to give TriggerPrinted instead of
	// TriggerUnknown. A longer Settle costs time only when the counters do not move.
	Settle time.Duration
}

// confirmPause is the wait between two readings of the counters while ConfirmTrigger waits
// for them to show the trigger, and the default Settle.
const confirmPause = 250 * time.Millisecond

// ConfirmTrigger triggers printer once and reads its counters before and after, to tell what
// the trigger did even when its answer was lost. It is ConfirmTriggerWith with the default
// options. printer must be named, as for Trigger: "" is an ErrInvalidArgument before anything
// is sent.
func (s *PrintersService) ConfirmTrigger(ctx context.Context, printer string) (TriggerResult, error) {
	return s.ConfirmTriggerWith(ctx, printer, nil)
}

// ConfirmTriggerWith triggers printer once and reads its counters before and after, to tell
// what the trigger did even when its answer was lost:
//   - triggers +1 with printedLabels +1 is TriggerPrinted;
//   - triggers +1 with triggerBounces +1 is TriggerBounced;
//   - counters unchanged after opts.Settle is TriggerNotReceived only when the trigger
//     provably never reached the printer: the connection could not be made, or the printer
//     (or a proxy) answered 4xx. When the trigger may have arrived (no answer in time, a
//     connection dropped after the request was written, an answer 2xx or 5xx), unchanged
//     counters are TriggerUnknown: a slow printer may still print it;
//   - anything else is TriggerUnknown.
//
// The trigger is sent once, under the same rule as Trigger: never resent after it may have
// reached the printer. The returned error is nil whenever the counters settle the outcome,
// even when the trigger's own answer was lost or was a 409 (kept in TriggerResult.Err). When
// the first reading fails nothing is sent and its error is returned; when a later reading
// fails, or ctx ends while waiting, the outcome is TriggerUnknown and that error is returned.
// A nil opts takes the defaults; a negative Settle is ErrInvalidArgument, before anything is
// sent.
//
// The counters are per printer, not per trigger: a trigger can only be settled while nothing
// else (a product sensor, another program) triggers the same printer. Another trigger in
// between makes the outcome TriggerUnknown, never a wrong answer.
//
// printer must be named, as for Trigger: the contract has no single-printer trigger, so "" is
// an ErrInvalidArgument before anything is sent.
func (s *PrintersService) ConfirmTriggerWith(ctx context.Context, printer string, opts *ConfirmOptions) (TriggerResult, error) {
	const op = "Printers.ConfirmTrigger"
	if ctx == nil {
		return TriggerResult{}, invalidArg(op, "nil context")
	}
	if _, err := escapeName(op, "printer", printer); err != nil {
		return TriggerResult{}, err
	}
	settleFor := confirmPause
	if opts != nil {
		switch {
		case opts.Settle < 0:
			return TriggerResult{}, invalidArg(op, "Settle is negative (%v)", opts.Settle)
		case opts.Settle > 0:
			settleFor = opts.Settle
		}
	}
	before, err := s.Counters(ctx, printer)
	if err != nil {
		return TriggerResult{}, err
	}
	res := TriggerResult{Before: *before}
	res.Response, res.Err = s.Trigger(ctx, printer)
	// Read at once, then every confirmPause while the counters do not show the trigger yet
	// (unchanged, or the trigger counted but not its label), until settleFor has passed. The
	// waits are counted, not timed, so a busy machine reads as often as an idle one.
	for waited := time.Duration(0); ; {
		after, err := s.Counters(ctx, printer)
		if err != nil {
			res.Outcome = TriggerUnknown
			return res, err
		}
		res.After = *after
		if !pending(res.Before, res.After) || waited >= settleFor {
			break
		}
		pause := min(confirmPause, settleFor-waited)
		if err := s.client.sleep(ctx, pause); err != nil {
			res.Outcome = TriggerUnknown
			return res, err
		}
		waited += pause
	}
	res.Outcome = settle(res.Before, res.After)
	if res.Outcome == TriggerNotReceived && !notReceived(res.Err) {
		// The counters do not show it, but it may have arrived: a printer still working on it,
		// a gateway that forwarded it and gave up, or a printer that answered and restarted.
		res.Outcome = TriggerUnknown
	}
	return res, nil
}

// notReceived reports whether a trigger's own error proves the printer never got it: the
// connection could not be made, or the answer was 4xx (the printer or a proxy refused it).
// No answer at all, a 2xx and a 5xx prove nothing.
func notReceived(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode >= 400 && apiErr.StatusCode <= 499
	}
	var te *TransportError
	return errors.As(err, &te) && !te.MaybeSent
}

// pending reports whether the counters may still be about to show a trigger: they did not
// move, or only the trigger was counted and its label (or bounce) not yet.
func pending(before, after PrintCounters) bool {
	if after == before {
		return true
	}
	return after.Triggers == before.Triggers+1 && after.PrintedLabels == before.PrintedLabels &&
		after.TriggerBounces == before.TriggerBounces
}

// settle reads one trigger's outcome from the counters around it.
func settle(before, after PrintCounters) TriggerOutcome {
	if wentDown(before, after) {
		return TriggerUnknown
	}
	dt := after.Triggers - before.Triggers
	dp := after.PrintedLabels - before.PrintedLabels
	db := after.TriggerBounces - before.TriggerBounces
	switch {
	case dt == 1 && dp == 1 && db == 0:
		return TriggerPrinted
	case dt == 1 && db == 1 && dp == 0:
		return TriggerBounced
	case dt == 0 && dp == 0 && db == 0:
		return TriggerNotReceived
	}
	return TriggerUnknown
}
