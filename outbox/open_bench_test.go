package outbox

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkOpenSettled100k opens a file of 100,000 settled entries (sent, each a job with a
// 300-byte label and the printer's answer), as a bridge that has run for long does at start.
// The file is written straight into bbolt, as the format before the indexes, to be quick to
// build, and opened once, which builds its indexes, before the opens measured.
//
//	go test -run '^$' -bench OpenSettled100k -benchtime 5x ./outbox
func BenchmarkOpenSettled100k(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "settled.outbox")
	ob, err := Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	_ = ob.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	job, _ := json.Marshal(map[string]any{"labelData": map[string]any{"text": strings.Repeat("x", 280)}, "copies": 1})
	now := time.Now().Add(-time.Hour)
	for start := 1; start <= n; start += 10_000 {
		err := db.Update(func(tx *bolt.Tx) error {
			entries, ids := tx.Bucket(bucketEntries), tx.Bucket(bucketIDs)
			for i := start; i < start+10_000 && i <= n; i++ {
				seq, err := entries.NextSequence()
				if err != nil {
					return err
				}
				r := record{Seq: seq, ID: fmt.Sprintf("line1/order-%06d", i), Printer: "line1", Job: job, ExpireAfter: 24 * time.Hour,
					State: Sent, Attempts: 1, Enqueued: now, Updated: now, Response: json.RawMessage(`{"status":"ok","jobId":12345}`)}
				v, err := r.encode()
				if err != nil {
					return err
				}
				if err := entries.Put(seqKey(seq), v); err != nil {
					return err
				}
				if err := ids.Put([]byte(r.ID), seqKey(seq)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketOpen, bucketCounts} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyFormat, []byte(formatV2))
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = db.Close()
	if ob, err = Open(path, nil); err != nil {
		b.Fatal(err)
	}
	_ = ob.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ob, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = ob.Close()
	}
}
