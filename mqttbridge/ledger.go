package mqttbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The ledger is the durable record of the commands the outbox does not hold: each abortPrint
// by its own id, and each cancel that came before its job. It is one bbolt file per
// controller, beside the controller's outbox file (StateFile with ".ledger" for ".outbox").
// An abortPrint is recorded before it is sent, so a redelivery, or a process that died while
// it was out, never sends it again: an abort sent again after later commands would wipe what
// they selected. A cancel naming 0 attempts of an id the outbox does not hold leaves a
// tombstone under the printer and id, so the job that comes later with that id is answered
// cancelled and never sent. Cancel and resend otherwise need no record: they name the
// attempts they saw, which a repetition finds changed (once.go). It also marks each outbox
// entry whose result the broker took, so that a result lost with the process is published
// again at the next start (reports.go).
const ledgerExt = ".ledger"

var (
	bucketAborts  = []byte("aborts")  // printer NUL id -> abortRecord
	bucketCancels = []byte("cancels") // printer NUL id -> cancelRecord
	bucketReports = []byte("reports") // outbox entry ID -> the mark of its result the broker took
	bucketMeta    = []byte("meta")    // keySince -> when the reports were first kept (RFC 3339)
	keySince      = []byte("reportsSince")
	// bucketDeliveries held the cancels and resends of earlier versions by the packet
	// identifier of their MQTT message; it is dropped at open.
	bucketDeliveries = []byte("deliveries")
)

// abortRecord is an abortPrint as the ledger keeps it.
type abortRecord struct {
	Printer  string          `json:"printer"`
	ID       string          `json:"id"`
	State    string          `json:"state"` // sending, then done or failed; unknown if the process died while sending
	Error    string          `json:"error,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	Time     time.Time       `json:"time"`
}

// cancelRecord is the tombstone of a cancel that came before its job.
type cancelRecord struct {
	Printer string    `json:"printer"`
	ID      string    `json:"id"`
	Time    time.Time `json:"time"`
}

// ledgerStore is where a controller's ledger lives: a file beside its outbox (*ledger), or
// the database of a pair of bridges (*pgLedger).
type ledgerStore interface {
	abort(printer, id string) (*abortRecord, error)
	putAbort(r abortRecord) error
	// reports returns the marks of the results the broker took (outbox entry ID -> mark) and
	// since when marks are kept: entries settled before that are taken as reported.
	reports() (marks map[string]string, since time.Time, err error)
	// putReports commits marks durably.
	putReports(marks map[string]string) error
	// dropReports forgets the marks of ids, entries the outbox no longer holds.
	dropReports(ids []string) error
	// outboxMarks reports whether the controller's outbox keeps the marks (a file and a
	// queue in PostgreSQL do: outbox.Acknowledge), the ledger only those the outbox could not
	// take.
	outboxMarks() bool
	// cancelled returns the tombstone of the cancel of id on printer, or nil.
	cancelled(printer, id string) (*cancelRecord, error)
	// putCancel commits a tombstone durably.
	putCancel(r cancelRecord) error
	close() error
}

// ledger is one controller's ledger file.
type ledger struct {
	db *bolt.DB
}

// ledgerFile is the ledger beside an outbox file.
func ledgerFile(outboxFile string) string {
	return strings.TrimSuffix(outboxFile, outboxExt) + ledgerExt
}

// openLedger opens (or creates) the ledger at path. An abortPrint found sending was cut off by
// the end of the process that sent it: it becomes unknown, and is never sent again.
func openLedger(path string) (*ledger, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 500 * time.Millisecond})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("mqttbridge: the ledger %s is in use by another process", path)
		}
		return nil, fmt.Errorf("mqttbridge: ledger %s: %w", path, err)
	}
	l := &ledger{db: db}
	err = db.Update(func(tx *bolt.Tx) error {
		aborts, err := tx.CreateBucketIfNotExists(bucketAborts)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bucketCancels); err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bucketReports); err != nil {
			return err
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if meta.Get(keySince) == nil {
			if err := meta.Put(keySince, []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
				return err
			}
		}
		if tx.Bucket(bucketDeliveries) != nil {
			if err := tx.DeleteBucket(bucketDeliveries); err != nil {
				return err
			}
		}
		var cutOff [][2][]byte
		err = aborts.ForEach(func(k, v []byte) error {
			var r abortRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("unreadable abortPrint record %q: %w", k, err)
			}
			if r.State != "sending" {
				return nil
			}
			r.State = StateUnknown
			r.Error = "the bridge stopped while the abortPrint was being sent; it may or may not have reached the printer"
			r.Time = time.Now().UTC()
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			cutOff = append(cutOff, [2][]byte{bytes.Clone(k), b})
			return nil
		})
		if err != nil {
			return err
		}
		for _, kv := range cutOff {
			if err := aborts.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("mqttbridge: ledger %s: %w", path, err)
	}
	return l, nil
}

func (l *ledger) close() error { return l.db.Close() }

// ledgerKey is the key of a record of printer and id.
func ledgerKey(printer, id string) []byte { return []byte(printer + "\x00" + id) }

// abort returns the record of the abortPrint id of printer, or nil when there is none.
func (l *ledger) abort(printer, id string) (*abortRecord, error) {
	var r *abortRecord
	err := l.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAborts).Get(ledgerKey(printer, id))
		if v == nil {
			return nil
		}
		r = new(abortRecord)
		return json.Unmarshal(v, r)
	})
	return r, err
}

// putAbort commits r durably.
func (l *ledger) putAbort(r abortRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return l.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAborts).Put(ledgerKey(r.Printer, r.ID), b)
	})
}

// cancelled returns the tombstone of the cancel of id on printer, or nil when there is none.
func (l *ledger) cancelled(printer, id string) (*cancelRecord, error) {
	var r *cancelRecord
	err := l.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketCancels).Get(ledgerKey(printer, id))
		if v == nil {
			return nil
		}
		r = new(cancelRecord)
		return json.Unmarshal(v, r)
	})
	return r, err
}

// putCancel commits r durably.
func (l *ledger) putCancel(r cancelRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return l.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCancels).Put(ledgerKey(r.Printer, r.ID), b)
	})
}

func (l *ledger) reports() (map[string]string, time.Time, error) {
	marks := map[string]string{}
	var since time.Time
	err := l.db.View(func(tx *bolt.Tx) error {
		var err error
		if since, err = time.Parse(time.RFC3339Nano, string(tx.Bucket(bucketMeta).Get(keySince))); err != nil {
			return fmt.Errorf("unreadable %s: %w", keySince, err)
		}
		return tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
			marks[string(k)] = string(v)
			return nil
		})
	})
	return marks, since, err
}

func (l *ledger) putReports(marks map[string]string) error {
	return l.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReports)
		for id, m := range marks {
			if err := b.Put([]byte(id), []byte(m)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (l *ledger) outboxMarks() bool { return true }

func (l *ledger) dropReports(ids []string) error {
	return l.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReports)
		for _, id := range ids {
			if err := b.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
}
