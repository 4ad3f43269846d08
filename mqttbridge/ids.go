package mqttbridge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// Ids belong to a printer: the topic names it, and the same id on two printers is two
// commands. One controller's outbox holds the commands of all its printers, so a command's
// outbox ID is the printer's name on its controller, a slash, and the command's id
// ("line1/order-4711"); results show the caller's id alone.

// maxKeyLen is the outbox's bound on an ID.
const maxKeyLen = 256

// outboxKey is the outbox ID of the command id on p.
func outboxKey(p *printer, id string) string { return p.remote + "/" + id }

// checkKeyPrefixes refuses printer p when one of the printers before it on the same controller
// has a name that, with a slash, begins p's name, or the other way round ("a" and "a/b"): the
// command "b/x" of the one and the command "x" of the other would share the outbox ID
// "a/b/x", and the second would be answered duplicate and never printed.
func checkKeyPrefixes(before []PrinterConfig, p PrinterConfig) error {
	for j, q := range before {
		if q.URL != p.URL {
			continue
		}
		if strings.HasPrefix(p.Printer, q.Printer+"/") || strings.HasPrefix(q.Printer, p.Printer+"/") {
			return fmt.Errorf("%q and %q (printers[%d], same url) are one name and a slash apart: their commands' ids could not be told apart in the outbox; give the bridge one of them only", p.Printer, q.Printer, j)
		}
	}
	return nil
}

// checkKey refuses an id that, with p's name, is longer than the outbox takes.
func checkKey(p *printer, id string) error {
	if len(outboxKey(p, id)) > maxKeyLen {
		return invalidf(`"id" and the printer's name %q are together longer than %d bytes`, clip(p.remote), maxKeyLen-1)
	}
	return nil
}

// callerID is the id the caller gave the command of outbox entry e. An entry written by a
// version that keyed entries by the id alone has that id as its ID.
func callerID(e outbox.Entry) string {
	if id, ok := strings.CutPrefix(e.ID, e.Printer+"/"); ok && id != "" {
		return id
	}
	return e.ID
}

// lookupCommand returns the outbox entry of the command id on p: the one under its key, or
// one written by a version that keyed entries by the id alone, when that entry is p's. The
// ID of a pruned entry of such a version is held for every printer (its printer is not
// recorded), which never prints anything twice.
func lookupCommand(p *printer, id string) (outbox.Entry, error) {
	e, err := p.ctl.ob.Get(outboxKey(p, id))
	if !errors.Is(err, outbox.ErrNotFound) || errors.Is(err, outbox.ErrPruned) {
		return e, err
	}
	old, oerr := p.ctl.ob.Get(id)
	return pickCommand(p, id, e, err, old, oerr)
}

// lookupCommandAtOnce is lookupCommand with both reads made at once (Outbox.GetEach): on a
// database, one statement in one round trip instead of two.
func lookupCommandAtOnce(p *printer, id string) (outbox.Entry, error) {
	es, errs := p.ctl.ob.GetEach(outboxKey(p, id), id)
	if e, err := es[0], errs[0]; !errors.Is(err, outbox.ErrNotFound) || errors.Is(err, outbox.ErrPruned) {
		return e, err
	}
	return pickCommand(p, id, es[0], errs[0], es[1], errs[1])
}

// pickCommand is lookupCommand's answer once the entry under the key was not found (e, err)
// and the entry under the id alone was read (old, oerr).
func pickCommand(p *printer, id string, e outbox.Entry, err error, old outbox.Entry, oerr error) (outbox.Entry, error) {
	switch {
	case oerr == nil && old.Printer == p.remote && old.ID == id:
		return old, nil
	case errors.Is(oerr, outbox.ErrPruned):
		return outbox.Entry{}, oerr
	case oerr != nil && !errors.Is(oerr, outbox.ErrNotFound):
		return outbox.Entry{}, oerr
	}
	return e, err
}

// callerError is err's text with the outbox ID key, as the outbox quotes it, spelt as the
// caller's id.
func callerError(err error, key, id string) string {
	if key == "" || key == id {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), strconv.Quote(key), strconv.Quote(id))
}
