// Package pgtest gives tests a real PostgreSQL: the server named by LABELPRINTER_POSTGRES_DSN,
// or one of its own, started from the binaries of the postgresql package (initdb into a
// temporary directory, as the postgres user when the tests run as root, on a free loopback
// port with its socket in that directory) and stopped by Stop. Each test gets a schema of its
// own, named in its DSN's search_path. The server trusts every role, but those of
// PasswordRole, which must give their password as a real deployment's do.
//
// Without PostgreSQL a test that asks for one is skipped with a line saying how to run it;
// with LABELPRINTER_REQUIRE_POSTGRES=1 it fails instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const howTo = "install the postgresql package (binaries under /usr/lib/postgresql/N/bin) or set " +
	"LABELPRINTER_POSTGRES_DSN=postgres://user:password@host/db; LABELPRINTER_REQUIRE_POSTGRES=1 makes this a failure"

// Server is a PostgreSQL server for tests.
type Server struct {
	dsn string // the server's own database, as the superuser

	// Set only for a server this package started.
	bin      string
	dir      string
	port     int
	cred     *syscall.Credential
	cmd      *exec.Cmd
	waitDone chan struct{} // closed when cmd has exited
	log      *os.File
	mu       sync.Mutex
	// passwords: pg_hba.conf asks the members of passwordGroup for their password.
	passwords bool
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Shared returns the server the tests of this process share, starting it on first use, or
// skips t (fails it with LABELPRINTER_REQUIRE_POSTGRES=1) when there is none.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		if dsn := os.Getenv("LABELPRINTER_POSTGRES_DSN"); dsn != "" {
			shared = &Server{dsn: dsn}
		} else {
			shared, sharedErr = Start()
		}
	}
	if sharedErr != nil {
		unavailable(t, sharedErr)
	}
	return shared
}

// DSN returns the DSN of a new, empty schema for t on the shared server: its tables are kept
// apart from every other test's by the DSN's search_path.
func DSN(t testing.TB) string {
	t.Helper()
	return Shared(t).NewSchema(t)
}

// Own starts a server of t's own, which t may stop and start again, stopped when t ends; it
// skips t (fails it with LABELPRINTER_REQUIRE_POSTGRES=1) when it cannot, as Shared does.
func Own(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Stop stops the shared server, if this package started it. TestMain calls it once the tests
// are done.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
	}
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("LABELPRINTER_REQUIRE_POSTGRES") == "1" {
		t.Fatalf("LABELPRINTER_REQUIRE_POSTGRES=1, but no PostgreSQL: %v", err)
	}
	t.Skipf("no PostgreSQL (%v): %s", err, howTo)
}

// errNoBinaries says the postgresql package is not installed.
var errNoBinaries = errors.New("no initdb and postgres under /usr/lib/postgresql/*/bin")

// binDir finds the newest installed PostgreSQL's binaries.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errNoBinaries
}

// Start initialises a new cluster in a temporary directory and starts it on a free loopback
// port; Stop stops it and removes the directory.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the cluster belongs to the postgres user.
		u, err := user.Lookup("postgres")
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

// start runs postgres on a free port (the same one again after Restart) and waits until it
// takes connections.
func (s *Server) start() error {
	if s.port == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		s.port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := s.command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"),
		"-p", strconv.Itoa(s.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.dir,
		"-c", "max_connections=300", "-c", "fsync=on", "-c", "synchronous_commit=on")
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A test binary that dies before Stop (a panic, a timeout) takes its server with it.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("starting postgres: %w", err)
	}
	exited := make(chan struct{})
	s.cmd, s.log, s.waitDone = cmd, logf, exited
	s.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("postgres exited: %s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("postgres did not take connections within 30 s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the server at once (SIGQUIT: immediate shutdown) and waits for it.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.waitDone:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.waitDone
	}
	_ = s.log.Close()
	s.cmd = nil
}

// Restart stops the server the hard way, as a crash would, and starts it again on the same
// port; it fails t when it cannot. Only for a server this package started.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bin == "" {
		t.Skip("the server is LABELPRINTER_POSTGRES_DSN's; this test restarts its own")
	}
	s.kill()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// StopServer stops the server until StartServer, as an outage would.
func (s *Server) StopServer(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bin == "" {
		t.Skip("the server is LABELPRINTER_POSTGRES_DSN's; this test stops its own")
	}
	s.kill()
}

// StartServer starts a server StopServer stopped.
func (s *Server) StartServer(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// Stop stops a server Start started and removes its directory.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bin == "" {
		return
	}
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-s.waitDone:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.waitDone
		}
		_ = s.log.Close()
		s.cmd = nil
	}
	_ = os.RemoveAll(s.dir)
	s.bin = ""
}

// NewSchema creates a schema of its own for t and returns a DSN whose search_path names it.
func (s *Server) NewSchema(t testing.TB) string {
	t.Helper()
	name := "t_" + strings.ToLower(rand.Text()[:12])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return WithParam(s.dsn, "search_path", name)
}

// WithParam returns dsn with the parameter key set to value.
func WithParam(dsn, key, value string) string {
	u, err := url.Parse(dsn)
	if err != nil || !strings.Contains(dsn, "://") {
		return dsn + " " + key + "=" + value // a keyword/value DSN
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// AdminDSN returns the DSN of the server's own database, as the user tests connect as.
func (s *Server) AdminDSN() string { return s.dsn }
