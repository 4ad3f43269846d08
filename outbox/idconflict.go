package outbox

import (
	"errors"
	"fmt"
)

// ErrIDConflict is returned by Enqueue for an ID the outbox holds for another printer or
// another kind: an ID is the caller's key for one intent, so its reuse with other parameters
// is refused, and nothing is added. The same ID for the same printer and kind returns the
// entry held, as a repeated Enqueue does.
var ErrIDConflict = errors.New("outbox: the ID is held by an entry for another printer or kind")

// checkHeld is Enqueue's rule for an ID already held by r: nil when in is the same intent's
// printer and kind, an error matching ErrIDConflict naming both otherwise.
func checkHeld(r *record, in Intent) error {
	if r.Printer == in.Printer && r.kind() == in.Kind {
		return nil
	}
	return fmt.Errorf("outbox: enqueue %q: %w: it is a %s for %s (%s), this is a %s for %s; nothing added",
		in.ID, ErrIDConflict, r.kind(), printerLabel(r.Printer), r.State, in.Kind, printerLabel(in.Printer))
}

// printerLabel names a printer in an error: its name, quoted, or the single-printer paths.
func printerLabel(name string) string {
	if name == "" {
		return "the single-printer paths"
	}
	return fmt.Sprintf("printer %q", name)
}
