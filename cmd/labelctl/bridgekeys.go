package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// The MQTT bridge keeps each printer's command under "printer/id" in its outbox files, and its
// topics (P/result, P/outbox) show the caller's id alone. A person who copies an id from a
// topic into 'labelctl outbox get', 'cancel' or 'resend' of the bridge's file would be told
// there is no such entry; bridgeKeyHint names the keys that entry has there instead.

// maxKeyHints bounds the keys a hint names.
const maxKeyHints = 5

// bridgeKeyHint returns err, for the entry id that ob does not hold, with the IDs of the
// entries that hold id as a printer's command ("line1/id") named in its message; err itself
// when there are none.
func bridgeKeyHint(ob *outbox.Outbox, id string, err error) error {
	if !errors.Is(err, outbox.ErrNotFound) || errors.Is(err, outbox.ErrPruned) || id == "" {
		return err
	}
	all, lerr := ob.List()
	if lerr != nil {
		return err
	}
	var keys []string
	for _, e := range all {
		if e.ID == e.Printer+"/"+id {
			keys = append(keys, e.ID)
		}
	}
	if len(keys) == 0 {
		return err
	}
	more := ""
	if len(keys) > maxKeyHints {
		more = fmt.Sprintf(" and %d more", len(keys)-maxKeyHints)
		keys = keys[:maxKeyHints]
	}
	return reworded(err, "%s; the MQTT bridge keeps a printer's command under printer/id: %s%s", err.Error(), strings.Join(keys, ", "), more)
}
