package main

// How labelctl words the outbox's errors: one line naming what the person typed (the ID, the
// file, the --state value), instead of the outbox's chains, which repeat the package and the
// ID for Go callers. The outbox keeps its own messages; only what labelctl prints changes.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/suggest"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// outboxStates are the states an entry can be in, as --state takes them.
var outboxStates = []outbox.State{outbox.Pending, outbox.Sending, outbox.Sent, outbox.Rejected, outbox.Unknown, outbox.Expired, outbox.Cancelled}

// parseStates reads --state: comma-separated states, any case. An unknown one is a usage error
// listing the states, with the closest to what was typed.
func parseStates(flag string) ([]outbox.State, error) {
	var want []outbox.State
	for _, s := range strings.Split(flag, ",") {
		typed := strings.TrimSpace(s)
		if typed == "" {
			continue
		}
		st := outbox.State(strings.ToLower(typed))
		known := false
		names := make([]string, len(outboxStates))
		for i, o := range outboxStates {
			names[i] = string(o)
			known = known || o == st
		}
		if !known {
			msg := fmt.Sprintf("--state: %q is not a state; the states are %s", typed, strings.Join(names, ", "))
			if c := suggest.Closest(typed, names); c != "" {
				msg += " (did you mean " + c + "?)"
			}
			return nil, usagef("%s", msg)
		}
		want = append(want, st)
	}
	return want, nil
}

// outboxError words err, from the outbox command op ("enqueue", "get", "cancel", "resend",
// "open") on the entry id of the file db, as one line. An error it does not know loses the
// outbox's package prefixes and nothing else.
func outboxError(op, id, db string, err error) error {
	if err == nil {
		return nil
	}
	var u usageError
	if errors.As(err, &u) {
		return err // already worded for the flags
	}
	var ctl *outbox.ControllerError
	what := "entry " + strconv.Quote(id)
	if op == "enqueue" {
		what = "--id " + strconv.Quote(id)
	}
	switch {
	case errors.Is(err, outbox.ErrPruned):
		fate := "settled and pruned"
		if _, after, ok := strings.Cut(err.Error(), outbox.ErrPruned.Error()+": it was "); ok {
			fate, _, _ = strings.Cut(after, ")")
		}
		if op == "enqueue" {
			return reworded(err, "%s: an entry with this ID was %s; an ID is taken once, so nothing was added", what, fate)
		}
		return reworded(err, "%s was %s; only its ID is kept", what, fate)
	case errors.Is(err, outbox.ErrNotFound):
		return reworded(err, "no %s in %s (see 'labelctl outbox list')", what, db)
	case errors.Is(err, outbox.ErrWrongState):
		detail := strings.TrimPrefix(err.Error(), outbox.ErrWrongState.Error()+": ")
		detail = strings.TrimPrefix(detail, strconv.Quote(id)+" ")
		return reworded(err, "cannot %s %s: it %s", op, what, detail)
	case errors.Is(err, outbox.ErrLocked):
		return reworded(err, "outbox file %s is in use by another process (a running 'labelctl outbox run', say); try again once it has stopped", db)
	case errors.As(err, &ctl):
		return reworded(err, "%s belongs to the controller %s, not to --url %s: its entries name that controller's printers, so nothing was sent; run it with --url %s, or use another --queue-name",
			db, ctl.Recorded, ctl.Given, ctl.Recorded)
	case errors.Is(err, labelprinter.ErrInvalidArgument):
		return err // message words these
	}
	return reworded(err, "%s", strings.ReplaceAll(err.Error(), "outbox: ", ""))
}

// rewordedError is an error said another way: its own message, the cause's identity.
type rewordedError struct {
	msg string
	err error
}

func (r *rewordedError) Error() string { return r.msg }
func (r *rewordedError) Unwrap() error { return r.err }

func reworded(err error, format string, args ...any) error {
	return &rewordedError{msg: fmt.Sprintf(format, args...), err: err}
}
