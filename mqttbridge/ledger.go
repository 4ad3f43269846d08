package mqttbridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The ledger is the durable record of the commands the outbox does not hold: each abortPrint
// by its own id, and each cancel and resend by the MQTT delivery that carried it. It is one
// bbolt file per controller, beside the controller's outbox file (StateFile with ".ledger" for
// ".outbox"). An abortPrint is recorded before it is sent, so a redelivery, or a process that
// died while it was out, never sends it again: an abort sent again after later commands would
// wipe what they selected. A cancel or resend carries the id of the entry it acts on, so its
// own delivery is its key: MQTT 5 §4.4 has a resumed session resend an unacknowledged PUBLISH
// with its packet identifier and the DUP flag, and the broker gives that identifier to a new
// message only once our PUBACK has reached it.
const ledgerExt = ".ledger"

var (
	bucketAborts     = []byte("aborts")     // printer NUL id -> abortRecord
	bucketDeliveries = []byte("deliveries") // packet identifier (2 bytes) -> deliveryRecord
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

// deliveryRecord is a cancel or resend as the ledger keeps it, under the packet identifier
// of the PUBLISH that carried it.
type deliveryRecord struct {
	Topic string `json:"topic"`
	Sum   []byte `json:"sum"` // SHA-256 of the payload
	// SeenState and SeenAttempts are the entry's as the command found it, before it acted.
	SeenState    string `json:"seenState"`
	SeenAttempts int    `json:"seenAttempts"`
	// Result is done or failed once the command has acted; "" while it is acting.
	Result string    `json:"result,omitempty"`
	Error  string    `json:"error,omitempty"`
	Time   time.Time `json:"time"`
}

// matches reports whether the record was made for this topic and payload.
func (d *deliveryRecord) matches(topic string, payload []byte) bool {
	sum := sha256.Sum256(payload)
	return d.Topic == topic && bytes.Equal(d.Sum, sum[:])
}

// ledgerStore is where a controller's ledger lives: a file beside its outbox (*ledger), or
// the database of a pair of bridges (*pgLedger).
type ledgerStore interface {
	abort(printer, id string) (*abortRecord, error)
	putAbort(r abortRecord) error
	delivery(pid uint16) (*deliveryRecord, error)
	putDelivery(pid uint16, d deliveryRecord) error
	forgetDelivery(pid uint16) error
	close() error
}

// ledger is one controller's ledger file.
type ledger struct {
	db *bolt.DB
	mu sync.Mutex
	// pids holds the packet identifiers the file has records for, so that forgetting the
	// record of a reused identifier costs a write only when there is one.
	pids map[uint16]bool
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
	l := &ledger{db: db, pids: map[uint16]bool{}}
	err = db.Update(func(tx *bolt.Tx) error {
		aborts, err := tx.CreateBucketIfNotExists(bucketAborts)
		if err != nil {
			return err
		}
		dels, err := tx.CreateBucketIfNotExists(bucketDeliveries)
		if err != nil {
			return err
		}
		if err := dels.ForEach(func(k, _ []byte) error {
			if len(k) == 2 {
				l.pids[binary.BigEndian.Uint16(k)] = true
			}
			return nil
		}); err != nil {
			return err
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

func abortKey(printer, id string) []byte { return []byte(printer + "\x00" + id) }

// abort returns the record of the abortPrint id of printer, or nil when there is none.
func (l *ledger) abort(printer, id string) (*abortRecord, error) {
	var r *abortRecord
	err := l.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAborts).Get(abortKey(printer, id))
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
		return tx.Bucket(bucketAborts).Put(abortKey(r.Printer, r.ID), b)
	})
}

func pidKey(pid uint16) []byte { return binary.BigEndian.AppendUint16(nil, pid) }

// delivery returns the record kept under packet identifier pid, or nil.
func (l *ledger) delivery(pid uint16) (*deliveryRecord, error) {
	l.mu.Lock()
	held := l.pids[pid]
	l.mu.Unlock()
	if !held {
		return nil, nil
	}
	var d *deliveryRecord
	err := l.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketDeliveries).Get(pidKey(pid))
		if v == nil {
			return nil
		}
		d = new(deliveryRecord)
		return json.Unmarshal(v, d)
	})
	return d, err
}

// putDelivery commits d under pid durably.
func (l *ledger) putDelivery(pid uint16, d deliveryRecord) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	err = l.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDeliveries).Put(pidKey(pid), b)
	})
	if err == nil {
		l.mu.Lock()
		l.pids[pid] = true
		l.mu.Unlock()
	}
	return err
}

// forgetDelivery drops the record under pid, if there is one: the broker gave pid to a new
// message, so the PUBACK of the one recorded has reached it and it is not delivered again.
func (l *ledger) forgetDelivery(pid uint16) error {
	l.mu.Lock()
	held := l.pids[pid]
	l.mu.Unlock()
	if !held {
		return nil
	}
	err := l.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDeliveries).Delete(pidKey(pid))
	})
	if err == nil {
		l.mu.Lock()
		delete(l.pids, pid)
		l.mu.Unlock()
	}
	return err
}
