// Package spbjudge runs the Sparkplug B conformance judge, sparkplug-tck-go (a Go
// reimplementation of the Eclipse Sparkplug TCK, kept in source beside the repository), for
// tests: it builds the judge, starts it as the broker an edge node under test connects to, and
// reads its verdicts once the test stops it.
//
// The judge is found as LABELPRINTER_SPARKPLUG_TCK_BIN (a built binary, as .ci/run leaves it),
// else built from LABELPRINTER_SPARKPLUG_TCK (its source; default ../shared/tools/sparkplug-tck-go
// beside the repository's root). Without either a test skips saying so, and fails instead when
// LABELPRINTER_REQUIRE_SPARKPLUG_TCK=1.
package spbjudge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

// DefaultSource is where the judge's source is looked for, relative to the repository's root,
// when LABELPRINTER_SPARKPLUG_TCK is not set.
const DefaultSource = "../shared/tools/sparkplug-tck-go"

// Result is one verdict of the judge: an assertion of the specification ([tck-id-...]), for a
// subject (an edge node, a session), pass, fail or n/a.
type Result struct {
	AssertionID string `json:"assertion_id"`
	Subject     string `json:"subject,omitempty"`
	Status      string `json:"status"`
	Detail      string `json:"detail,omitempty"`
}

func (r Result) String() string {
	s := r.Status + " " + r.AssertionID
	if r.Subject != "" {
		s += " [" + r.Subject + "]"
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}

// Judge is a running judge.
type Judge struct {
	// URL is the judge's broker, mqtt://127.0.0.1:PORT.
	URL string
	// Addr is its host:port.
	Addr   string
	cmd    *exec.Cmd
	stdout testkit.SyncBuffer
	stderr testkit.SyncBuffer
	// done is closed once the judge has exited.
	done chan struct{}
}

// Options are the judge's stimuli.
type Options struct {
	// Rebirth, "group/edge_node", has the judge send that edge node a Rebirth NCMD
	// RebirthAfter after it starts.
	Rebirth      string
	RebirthAfter time.Duration
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
	buildSkip string
)

// Binary returns the judge's binary, built once per version of its source and kept in the user
// cache for the next test process; it skips t (or fails it, with
// LABELPRINTER_REQUIRE_SPARKPLUG_TCK=1) when the judge cannot be found.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { built, buildSkip, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("building the conformance judge: %v", buildErr)
	}
	if buildSkip != "" {
		if os.Getenv("LABELPRINTER_REQUIRE_SPARKPLUG_TCK") == "1" {
			t.Fatal(buildSkip + ", and LABELPRINTER_REQUIRE_SPARKPLUG_TCK=1")
		}
		t.Skip(buildSkip + ": set LABELPRINTER_SPARKPLUG_TCK to the judge's source (sparkplug-tck-go) " +
			"or LABELPRINTER_SPARKPLUG_TCK_BIN to its binary to run the conformance tests")
	}
	return built
}

func build() (bin, skip string, err error) {
	if bin := os.Getenv("LABELPRINTER_SPARKPLUG_TCK_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", "LABELPRINTER_SPARKPLUG_TCK_BIN: " + err.Error(), nil
		}
		return bin, "", nil
	}
	src := os.Getenv("LABELPRINTER_SPARKPLUG_TCK")
	if src == "" {
		root, err := repoRoot()
		if err != nil {
			return "", "", err
		}
		src = filepath.Join(root, DefaultSource)
	}
	if _, err := os.Stat(filepath.Join(src, "cmd", "sparkplug-tck")); err != nil {
		return "", "the conformance judge's source is not at " + src, nil
	}
	key, err := sourceKey(src)
	if err != nil {
		return "", "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	// One binary per version of the source, kept for the next test process; built under a
	// name of this process's and renamed, so that parallel test binaries never run a
	// half-written one.
	bin = filepath.Join(cache, "go-labelprinter", "sparkplug-tck-"+key, "sparkplug-tck")
	if _, err := os.Stat(bin); err == nil {
		return bin, "", nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", "", err
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "./cmd/sparkplug-tck")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build in %s: %v\n%s", src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", "", err
	}
	return bin, "", nil
}

// sourceKey is a digest of the judge's source: its Go files, module files, catalog and proto.
func sourceKey(src string) (string, error) {
	var files []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".go", ".mod", ".sum", ".json", ".proto":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/labelprinter/go-labelprinter\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the repository's go.mod is not above the test's directory")
		}
		dir = parent
	}
}

// Start starts the judge's broker with the edge-node profile on a free loopback port and
// stops it when the test ends, if Stop has not.
func Start(t testing.TB, profile string, opt Options) *Judge {
	t.Helper()
	bin := Binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	args := []string{"-harness", "-profile", profile, "-listen", addr, "-duration", "1h", "-json"}
	if opt.Rebirth != "" {
		args = append(args, "-rebirth", opt.Rebirth, "-rebirth-after", opt.RebirthAfter.String())
	}
	j := &Judge{URL: "mqtt://" + addr, Addr: addr, done: make(chan struct{})}
	j.cmd = exec.Command(bin, args...)
	j.cmd.Stdout = &j.stdout
	j.cmd.Stderr = &j.stderr
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = j.cmd.Wait(); close(j.done) }()
	t.Cleanup(func() {
		select {
		case <-j.done:
		default:
			_ = j.cmd.Process.Kill()
			<-j.done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return j
		}
		select {
		case <-j.done:
			t.Fatalf("the judge exited before listening: %s", j.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the judge does not listen on %s after 30 s: %s", addr, j.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle is how long Stop lets the judge's broker take the packets already sent to it: a
// test waits (Observer.WaitFor) for the last message an edge node publishes, but the
// DISCONNECT that follows it is read by the broker on its own, a few microseconds later.
const settle = time.Second

// Stop has the judge evaluate what its broker recorded (SIGTERM) and returns its verdicts.
func (j *Judge) Stop(t testing.TB) []Result {
	t.Helper()
	time.Sleep(settle)
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-j.done:
	case <-ctx.Done():
		_ = j.cmd.Process.Kill()
		<-j.done
		t.Fatalf("the judge did not evaluate within 60 s of SIGTERM: %s", j.stderr.String())
	}
	var res []Result
	if err := json.Unmarshal([]byte(j.stdout.String()), &res); err != nil {
		t.Fatalf("the judge's verdicts: %v\nstdout: %s\nstderr: %s", err, j.stdout.String(), j.stderr.String())
	}
	return res
}

// Log is what the judge wrote on stderr.
func (j *Judge) Log() string { return j.stderr.String() }

// Excuse is a failed verdict a test accepts: its assertion, the text its detail holds (so
// that the same assertion failing for another reason is not excused), and why.
type Excuse struct {
	AssertionID, Detail, Why string
}

// Excused are the verdicts every edge node test accepts.
var Excused = []Excuse{{
	AssertionID: "tck-id-payloads-alias-birth-requirement",
	Detail:      "metric 'Node Control/Rebirth' lacks alias while edge uses aliases",
	Why: "the specification says Node Control/Rebirth carries no alias (a host writes it by name " +
		"before it knows any alias); the judge asks every birth metric for one once an edge node uses aliases",
}}

// AcrossSessions returns the excuses of a recording that holds several sessions of one edge
// node, besides Excused: bdSeqs are the bdSeq of each session's CONNECT in order, and crashed
// says whether one of them ended without a DISCONNECT. The judge checks each session's NBIRTH
// against its own CONNECT under tck-id-payloads-nbirth-bdseq-repeat, which stays unexcused; a
// test of several sessions asks that assertion to pass for each.
func AcrossSessions(bdSeqs []uint64, crashed bool) []Excuse {
	ex := append([]Excuse(nil), Excused...)
	if len(bdSeqs) > 1 {
		last := bdSeqs[len(bdSeqs)-1]
		for _, b := range bdSeqs[:len(bdSeqs)-1] {
			if b == last {
				continue
			}
			ex = append(ex, Excuse{AssertionID: "tck-id-topics-nbirth-bdseq-matching",
				Detail: fmt.Sprintf("NBIRTH bdSeq=%d, CONNECT Will bdSeq=%d (must match)", b, last),
				Why: "the judge compares every session's NBIRTH with the last CONNECT's Will, not with " +
					"the CONNECT of its own session"})
		}
	}
	if crashed {
		ex = append(ex, Excuse{AssertionID: "tck-id-operational-behavior-edge-node-intentional-disconnect-packet",
			Detail: "broker fired Will after a clean MQTT DISCONNECT",
			Why: "the judge joins the sessions of one client id: the Will the broker rightly sent for a " +
				"session that was killed counts against another that ended with a DISCONNECT"})
	}
	return ex
}

// Failed returns the failed verdicts, but for those an excuse covers, and those apart.
func Failed(res []Result, excuses []Excuse) (failed, excused []Result) {
	for _, r := range res {
		if r.Status != "fail" {
			continue
		}
		ok := false
		for _, e := range excuses {
			if e.AssertionID == r.AssertionID && strings.Contains(r.Detail, e.Detail) {
				ok = true
			}
		}
		if ok {
			excused = append(excused, r)
		} else {
			failed = append(failed, r)
		}
	}
	return failed, excused
}

// Count returns how many verdicts have each status.
func Count(res []Result) map[string]int {
	n := map[string]int{}
	for _, r := range res {
		n[r.Status]++
	}
	return n
}

// Of returns the verdicts of one assertion.
func Of(res []Result, id string) []Result {
	var out []Result
	for _, r := range res {
		if r.AssertionID == id {
			out = append(out, r)
		}
	}
	return out
}

// Summary is one line: the counts by status, sorted.
func Summary(res []Result) string {
	n := Count(res)
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}
