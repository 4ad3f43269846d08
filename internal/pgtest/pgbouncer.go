package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const bouncerHowTo = "install the pgbouncer package (Debian: apt-get install pgbouncer) to run it; " +
	"LABELPRINTER_REQUIRE_PGBOUNCER=1 makes this a failure"

// Bouncer is a PgBouncer in transaction mode in front of a Server, as a plant puts one in
// front of its database: each transaction may run on another server session, so a session's
// LISTEN is not heard by the client that sent it.
type Bouncer struct {
	srv  *Server
	port int
}

// Pooler starts a PgBouncer in transaction mode in front of the shared server, stopped when t
// ends. Without pgbouncer t is skipped with a line saying how to run it; with
// LABELPRINTER_REQUIRE_PGBOUNCER=1 it fails instead.
func Pooler(t testing.TB) *Bouncer {
	t.Helper()
	srv := Shared(t)
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
		if _, serr := os.Stat(bin); serr != nil {
			if os.Getenv("LABELPRINTER_REQUIRE_PGBOUNCER") == "1" {
				t.Fatalf("LABELPRINTER_REQUIRE_PGBOUNCER=1, but no pgbouncer: %v", err)
			}
			t.Skipf("no pgbouncer: %s", bouncerHowTo)
		}
	}
	b, err := startBouncer(t, bin, srv)
	if errors.Is(err, errNoUser) {
		if os.Getenv("LABELPRINTER_REQUIRE_PGBOUNCER") == "1" {
			t.Fatalf("LABELPRINTER_REQUIRE_PGBOUNCER=1, but pgbouncer cannot run: %v", err)
		}
		t.Skipf("pgbouncer cannot run: %v", err)
	}
	if err != nil {
		t.Fatalf("pgtest: starting pgbouncer: %v", err)
	}
	return b
}

// errNoUser says the tests run as root, which PgBouncer refuses, and there is no postgres
// user to run it as.
var errNoUser = errors.New("running as root, which pgbouncer refuses, and no postgres user to run it as")

func startBouncer(t testing.TB, bin string, srv *Server) (*Bouncer, error) {
	pc, err := pgconn.ParseConfig(srv.dsn)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	server := fmt.Sprintf("host=%s port=%d user=%s", pc.Host, pc.Port, pc.User)
	if pc.Password != "" {
		server += " password=" + pc.Password
	}
	// auth_type any: the client's user is not checked; the server is reached as the
	// database line's user. PgBouncer 1.18 knows no search_path startup parameter, so each
	// test has a database of its own (NewDatabase) instead of a schema.
	conf := fmt.Sprintf(`[databases]
* = %s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = 4
max_client_conn = 500
ignore_startup_parameters = extra_float_digits
logfile = %s
`, server, port, filepath.Join(dir, "pgbouncer.log"))
	ini := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, ini)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		// PgBouncer refuses to run as root: it runs as the server's user, or postgres.
		cred := srv.cred
		if cred == nil {
			u, err := user.Lookup("postgres")
			if err != nil {
				return nil, errNoUser
			}
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		}
		cmd.SysProcAttr.Credential = cred
		for _, p := range []string{dir, ini} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = out.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	b := &Bouncer{srv: srv, port: port}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return b, nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			so, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			return nil, fmt.Errorf("pgbouncer exited: %s%s", log, so)
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("pgbouncer did not take connections within 20 s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// NewDatabase creates a database of t's own on the server and returns its DSN through the
// pooler and its DSN straight to the server.
func (b *Bouncer) NewDatabase(t testing.TB) (pooled, direct string) {
	t.Helper()
	name := "t_" + strings.ToLower(rand.Text()[:12])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, b.srv.dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, b.srv.dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	pc, err := pgconn.ParseConfig(b.srv.dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	direct = withDatabase(b.srv.dsn, name)
	pooled = fmt.Sprintf("postgres://%s@127.0.0.1:%s/%s?sslmode=disable", pc.User, strconv.Itoa(b.port), name)
	return pooled, direct
}

// withDatabase is dsn, a URL, naming database name.
func withDatabase(dsn, name string) string {
	i := strings.Index(dsn, "://")
	if i < 0 {
		return dsn + " dbname=" + name
	}
	rest := dsn[i+3:]
	q := ""
	if j := strings.IndexByte(rest, '?'); j >= 0 {
		rest, q = rest[:j], rest[j:]
	}
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[:j]
	}
	return dsn[:i+3] + rest + "/" + name + q
}
