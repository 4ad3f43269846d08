package pgconf

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDescribeOnce: a refused connection, which pgx tries with TLS and then without under the
// default sslmode, is said once, on one line; pgx's own text said it twice.
func TestDescribeOnce(t *testing.T) {
	dsn := "postgres://lp@127.0.0.1:1/plant?connect_timeout=5"
	_, err := pgconn.Connect(context.Background(), dsn)
	if err == nil {
		t.Fatal("connected to port 1")
	}
	if n := strings.Count(err.Error(), "connection refused"); n != 2 {
		t.Logf("pgx says the refusal %d times: %q", n, err) // the reason for Describe; not its test
	}
	got := Describe(err, SSLModeAsked(dsn))
	if strings.Count(got, "connection refused") != 1 || strings.Contains(got, "\n") || !strings.HasPrefix(got, "cannot connect as user lp to database plant: 127.0.0.1:1") {
		t.Errorf("Describe = %q", got)
	}
	if !SSLModeAsked("host=db1 sslmode=require") || SSLModeAsked(dsn) {
		t.Error("SSLModeAsked")
	}
}
