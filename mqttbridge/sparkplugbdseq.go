package mqttbridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// This file holds the rule that the Sparkplug node's bdSeq survives the bridge: each CONNECT
// carries, in its NDEATH Will, the bdSeq of the CONNECT before it plus one (mod 256), across
// restarts, crashes and a pair's failover. The value is written before the CONNECT that carries
// it is sent, so a bridge killed right after it still leaves the value behind; a CONNECT that
// never left (the broker could not be dialled) gives its value to the next one.

// bdSeqStore keeps the bdSeq of the last CONNECT.
type bdSeqStore interface {
	// last returns the bdSeq of the last CONNECT; ok is false when none was ever made.
	last(ctx context.Context) (v uint8, ok bool, err error)
	// put records v as the bdSeq of the CONNECT about to be sent.
	put(ctx context.Context, v uint8) error
}

// bdSeqCounter hands each CONNECT its bdSeq.
type bdSeqCounter struct {
	store bdSeqStore

	mu sync.Mutex
	// unsent is the value given to a CONNECT that was never sent: the next takes it again.
	unsent *uint8
	// current is the bdSeq of the CONNECT given out last.
	current uint8
}

// next returns the bdSeq of the CONNECT about to be sent, recorded before it goes.
func (c *bdSeqCounter) next(ctx context.Context) (uint8, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unsent != nil {
		v := *c.unsent
		c.unsent = nil
		c.current = v
		return v, nil
	}
	last, ok, err := c.store.last(ctx)
	if err != nil {
		return 0, err
	}
	v := uint8(0)
	if ok {
		v = last + 1 // 255 + 1 is 0, as the specification demands
	}
	if err := c.store.put(ctx, v); err != nil {
		return 0, err
	}
	c.current = v
	return v, nil
}

// connectFailed is autopaho's report that a connection attempt failed: when the broker could
// not even be dialled, the CONNECT was never sent and its bdSeq goes to the next one.
func (c *bdSeqCounter) connectFailed(err error) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return
	}
	c.mu.Lock()
	v := c.current
	c.unsent = &v
	c.mu.Unlock()
}

// get returns the bdSeq of the CONNECT given out last.
func (c *bdSeqCounter) get() uint8 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// fileBdSeq keeps the bdSeq in a file in state_dir, named by the node's client id.
type fileBdSeq struct{ path string }

func bdSeqFile(dir, clientID string) string {
	sum := sha256.Sum256([]byte(clientID))
	return filepath.Join(dir, "sparkplug-"+hex.EncodeToString(sum[:4])+".bdseq")
}

func (f fileBdSeq) last(context.Context) (uint8, bool, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 8)
	if err != nil {
		return 0, false, fmt.Errorf("%s does not hold a bdSeq (0-255): %q", f.path, clip(string(b)))
	}
	return uint8(n), true, nil
}

// put writes the file anew and renames it into place, synced, so a crash leaves the old
// value or the new one.
func (f fileBdSeq) put(_ context.Context, v uint8) error {
	tmp := f.path + ".tmp"
	fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(fh, "%d\n", v)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// pgBdSeq keeps a pair's bdSeq in the database beside the lease, in the ledger under the
// node's client id, written only while this bridge holds the lease: the bridge that takes
// over continues from it.
type pgBdSeq struct{ led *pgLedger }

func newPgBdSeq(p *pair, clientID string) pgBdSeq {
	return pgBdSeq{led: &pgLedger{p: p, queue: "sparkplug " + clientID}}
}

type bdSeqRecord struct {
	BdSeq int `json:"bdSeq"`
}

func (s pgBdSeq) last(context.Context) (uint8, bool, error) {
	var r bdSeqRecord
	ok, err := s.led.get("bdseq", "", "", &r)
	if err != nil || !ok {
		return 0, false, err
	}
	return uint8(r.BdSeq), true, nil
}

func (s pgBdSeq) put(_ context.Context, v uint8) error {
	return s.led.put("bdseq", "", "", bdSeqRecord{BdSeq: int(v)})
}
