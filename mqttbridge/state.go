package mqttbridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/ctlurl"
	"github.com/labelprinter/go-labelprinter/outbox"
	bolt "go.etcd.io/bbolt"
)

// The outbox files in state_dir: one per controller URL, named by StateFile, each with a
// small file beside it that records the URL it belongs to, so that a file no configured
// controller owns any more can still be named by its URL.
const (
	outboxExt = ".outbox"
	urlExt    = ".url"
)

// NormalizeURL returns a controller URL in the one spelling that names its outbox file and
// groups its printers: scheme and host in lower case, the scheme's default port (80, 443)
// left out, no trailing slash and no user information. "HTTP://Host:80/" and "http://host"
// are one controller. The URL's path, query and fragment keep their case; a URL that does not
// parse is returned as it was.
func NormalizeURL(raw string) string { return ctlurl.Normalize(raw) }

// StateFile is the outbox file of the controller at url in dir: the URL's host and port,
// readable, and a hash of the whole URL, so two URLs never share a file. The URL is
// normalised first (NormalizeURL), so every spelling of one controller names one file.
func StateFile(dir, controllerURL string) string {
	return stateFileOf(dir, NormalizeURL(controllerURL))
}

// stateFileOf names the file of a URL as written, which is how versions before NormalizeURL
// named them (less the trailing slash): it finds the file an old spelling left behind.
func stateFileOf(dir, controllerURL string) string {
	controllerURL = strings.TrimRight(controllerURL, "/")
	host := controllerURL
	if u, err := url.Parse(controllerURL); err == nil && u.Host != "" {
		host = u.Host
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, host)
	sum := sha256.Sum256([]byte(controllerURL))
	return filepath.Join(dir, safe+"-"+hex.EncodeToString(sum[:4])+outboxExt)
}

// OrphanPolicy says what New does with an outbox file in state_dir that no configured
// controller owns (its controller left the configuration, or its URL was spelt differently
// by an older version) and that still holds pending or unknown entries. The zero value
// refuses to start with an *OrphanedOutboxError, so that no queued command is silently
// forgotten and no id silently printed again as new.
type OrphanPolicy struct {
	// Ignore starts anyway and leaves such files as they are: their entries are neither sent
	// nor reported, and their ids are not remembered.
	Ignore bool
	// AdoptInto is a configured controller URL (any spelling): the one orphaned file with
	// pending or unknown entries becomes that controller's outbox, whose pending entries are
	// then sent and whose ids are remembered. It is refused when the controller's own file
	// already holds entries, or when more than one file is orphaned.
	AdoptInto string
}

// WithOrphanedOutbox sets what New does with orphaned outbox files (see OrphanPolicy);
// without it New refuses to start while one holds pending or unknown entries.
func WithOrphanedOutbox(p OrphanPolicy) Option {
	return func(o *options) error {
		if p.Ignore && p.AdoptInto != "" {
			return errors.New("mqttbridge.WithOrphanedOutbox: Ignore and AdoptInto both set")
		}
		o.orphans = p
		return nil
	}
}

// Orphan is an outbox file in state_dir that no configured controller owns.
type Orphan struct {
	// File is the outbox file's path.
	File string
	// URL is the controller URL the file was opened for, or "" when no record of it is
	// left (a file written before the URL was recorded, whose URL no configured spelling
	// matches).
	URL string
	// Pending and Unknown count its entries waiting to be sent and waiting for a person.
	Pending, Unknown int
}

// OrphanedOutboxError is New's refusal to start while outbox files that no configured
// controller owns hold pending or unknown entries (see OrphanPolicy).
type OrphanedOutboxError struct {
	// Orphans are the files, each with its URL and counts.
	Orphans []Orphan
	// Reason is set when an adoption was asked for and cannot be done.
	Reason string
}

// Error names each file, its URL and its counts, and says how to go on.
func (e *OrphanedOutboxError) Error() string {
	var b strings.Builder
	if e.Reason != "" {
		b.WriteString("--adopt-orphaned-outbox: " + e.Reason + ": ")
	}
	for i, o := range e.Orphans {
		if i > 0 {
			b.WriteString("; ")
		}
		u := o.URL
		if u == "" {
			u = "an unrecorded URL"
		}
		fmt.Fprintf(&b, "outbox %s (%s) belongs to no configured printer and holds %d pending and %d unknown entries", o.File, u, o.Pending, o.Unknown)
	}
	if e.Reason == "" {
		b.WriteString("; put its url back in the config, or pass --adopt-orphaned-outbox URL (a configured controller that takes it over) or --adopt-orphaned-outbox ignore")
	}
	return b.String()
}

// checkOrphans looks at every outbox file in dir that none of the controllers owns, and
// applies p to those that still hold pending or unknown entries. urls are the configured
// controllers' normalised URLs and raw their spellings as written (which name the files of
// versions that did not normalise). It returns the orphans it found with work left, adopted
// or ignored.
func checkOrphans(dir string, urls, raw []string, p OrphanPolicy) ([]Orphan, error) {
	owned := map[string]bool{}
	for _, u := range urls {
		owned[filepath.Base(StateFile(dir, u))] = true
	}
	oldSpelling := map[string]string{}
	for _, r := range raw {
		oldSpelling[filepath.Base(stateFileOf(dir, r))] = r
	}
	names, err := filepath.Glob(filepath.Join(dir, "*"+outboxExt))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var orphans []Orphan
	for _, f := range names {
		base := filepath.Base(f)
		if owned[base] {
			continue
		}
		o := Orphan{File: f, URL: oldSpelling[base]}
		if b, err := os.ReadFile(f + urlExt); err == nil {
			o.URL = strings.TrimSpace(string(b))
		}
		ob, err := outbox.Open(f, nil)
		if err != nil {
			return nil, fmt.Errorf("state_dir: outbox %s belongs to no configured printer and cannot be read: %w", f, err)
		}
		counts, err := ob.Counts()
		_ = ob.Close()
		if err != nil {
			return nil, fmt.Errorf("state_dir: outbox %s belongs to no configured printer and cannot be read: %w", f, err)
		}
		for _, byState := range counts {
			o.Pending += byState[outbox.Pending]
			o.Unknown += byState[outbox.Unknown]
		}
		if o.Pending+o.Unknown > 0 {
			orphans = append(orphans, o)
		}
	}
	switch {
	case len(orphans) == 0 || p.Ignore:
		return orphans, nil
	case p.AdoptInto == "":
		return nil, &OrphanedOutboxError{Orphans: orphans}
	}
	into := NormalizeURL(p.AdoptInto)
	found := false
	for _, u := range urls {
		found = found || u == into
	}
	switch {
	case !found:
		return nil, &OrphanedOutboxError{Orphans: orphans, Reason: fmt.Sprintf("%s is not the url of a configured printer", p.AdoptInto)}
	case len(orphans) > 1:
		return nil, &OrphanedOutboxError{Orphans: orphans, Reason: "more than one file to adopt; move all but one out of state_dir"}
	}
	target := StateFile(dir, into)
	if n, err := countEntries(target); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, &OrphanedOutboxError{Orphans: orphans, Reason: fmt.Sprintf("%s, the outbox of %s, already holds %d entries", target, into, n)}
	}
	if err := os.Rename(orphans[0].File, target); err != nil {
		return nil, fmt.Errorf("--adopt-orphaned-outbox: %w", err)
	}
	_ = os.Remove(orphans[0].File + urlExt)
	// The abortPrint ids, the tombstones of cancels and the marks of results it held go with
	// it, into the controller's own ledger when it has one (a start with the orphan ignored
	// made it).
	if err := adoptLedger(ledgerFile(orphans[0].File), ledgerFile(target)); err != nil {
		return nil, fmt.Errorf("--adopt-orphaned-outbox: %w", err)
	}
	return orphans, nil
}

// adoptLedger moves the ledger at from to to: renamed when to has none, and otherwise its
// records copied into to (to's own record of a key stays) and from removed, so an abortPrint id
// it held is still answered duplicate, and a job cancelled before it came is still cancelled,
// after the adoption.
func adoptLedger(from, to string) error {
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(to); errors.Is(err, os.ErrNotExist) {
		return os.Rename(from, to)
	}
	src, err := bolt.Open(from, 0o600, &bolt.Options{Timeout: 500 * time.Millisecond, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("ledger %s: %w", from, err)
	}
	defer src.Close()
	dst, err := bolt.Open(to, 0o600, &bolt.Options{Timeout: 500 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("ledger %s: %w", to, err)
	}
	err = dst.Update(func(dtx *bolt.Tx) error {
		return src.View(func(stx *bolt.Tx) error {
			for _, name := range [][]byte{bucketAborts, bucketCancels, bucketReports} {
				sb := stx.Bucket(name)
				if sb == nil {
					continue
				}
				db, err := dtx.CreateBucketIfNotExists(name)
				if err != nil {
					return err
				}
				if err := sb.ForEach(func(k, v []byte) error {
					if db.Get(k) != nil {
						return nil
					}
					return db.Put(bytes.Clone(k), bytes.Clone(v))
				}); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ledger %s into %s: %w", from, to, err)
	}
	_ = src.Close()
	return os.Remove(from)
}

// countEntries counts the entries of the outbox file at path; a missing file holds none.
func countEntries(path string) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	ob, err := outbox.Open(path, nil)
	if err != nil {
		return 0, err
	}
	defer ob.Close()
	counts, err := ob.Counts()
	n := 0
	for _, byState := range counts {
		for _, c := range byState {
			n += c
		}
	}
	return n, err
}

// recordURL writes the controller's URL beside its outbox file, replacing the file only
// when it says something else, so an orphaned outbox can be named by its URL later.
func recordURL(outboxFile, controllerURL string) error {
	name := outboxFile + urlExt
	if b, err := os.ReadFile(name); err == nil && strings.TrimSpace(string(b)) == controllerURL {
		return nil
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(controllerURL+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
