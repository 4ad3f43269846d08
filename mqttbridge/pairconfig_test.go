package mqttbridge

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestPairConfig: the outbox block in PostgreSQL, its defaults and its errors, each a
// *ConfigError naming the field, none quoting the database password.
func TestPairConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pgpw", "db-secret-pw\n")
	head := "broker: {url: \"mqtt://b:1883\", client_id: pair-1}\nprinters: [{name: p, url: \"http://X:80/\"}]\n"
	c, err := ParseConfig([]byte(head+"outbox: {postgres: {dsn: \"postgres://bridge@db1/plant\", password_file: pgpw}}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Outbox.LeaseTTL != DefaultLeaseTTL || c.Outbox.Postgres.PasswordFile != dir+"/pgpw" || !c.pairMode() {
		t.Errorf("outbox block: %+v %+v", c.Outbox, c.Outbox.Postgres)
	}
	if q := queueName(c.Broker.ClientID, c.Printers[0].URL); q != "pair-1 http://x" {
		t.Errorf("queue %q: want the client id and the normalised URL", q)
	}
	c, err = ParseConfig([]byte(head+"outbox: {postgres: {dsn: \"postgres://bridge@pooler/plant\", listen_dsn: \"postgres://bridge@db1/plant\", password_file: pgpw}}\n"), dir)
	if err != nil || c.Outbox.Postgres.ListenDSN != "postgres://bridge@db1/plant" {
		t.Fatalf("listen_dsn: %v, %+v", err, c.Outbox.Postgres)
	}
	c, err = ParseConfig([]byte(head+"outbox: {postgres: {dsn: \"host=db1 user=bridge\"}, lease_ttl: 3s}\n"), dir)
	if err != nil || c.Outbox.LeaseTTL != 3*time.Second {
		t.Fatalf("keyword/value DSN and lease_ttl: %v, %+v", err, c)
	}

	cases := []struct{ yaml, field, says string }{
		{head + "outbox: {postgres: {dsn: \"postgres://bridge:db-secret-pw@db1/plant\", password_file: pgpw}}", "outbox.postgres", "password_file"},
		{head + "outbox: {postgres: {dsn: \"postgres://bridge@db1/plant?password=db-secret-pw\", password_file: pgpw}}", "outbox.postgres", "password_file"},
		{head + "outbox: {postgres: {dsn: \"host=db1 password=db-secret-pw\", password_file: pgpw}}", "outbox.postgres", "password_file"},
		{head + "state_dir: s\noutbox: {postgres: {dsn: \"postgres://db1/plant\"}}", "state_dir", "outbox.postgres"},
		{head + "state_dir: s\noutbox: {lease_ttl: 5s}", "outbox.lease_ttl", "outbox.postgres"},
		{head, "state_dir", "outbox.postgres"},
		{head + "outbox: {postgres: {dsn: \"\"}}", "outbox.postgres.dsn", "required"},
		{head + "outbox: {postgres: {dsn: \"postgres://u:db-secret-pw@db1:notaport/x\"}}", "outbox.postgres.dsn", "not a PostgreSQL"},
		{head + "outbox: {postgres: {dsn: \"postgres://db1/plant\", password_file: missing}}", "outbox.postgres.password_file", "missing"},
		{head + "outbox: {postgres: {dsn: \"postgres://db1/plant\"}, lease_ttl: 10ms}", "outbox.lease_ttl", "floor"},
		{head + "outbox: {postgres: {dsn: \"postgres://db1/plant\"}, leas_ttl: 1s}", "", "lease_ttl"},
		{head + "outbox: {postgres: {dsn: \"postgres://bridge@pooler/plant\", listen_dsn: \"postgres://bridge:db-secret-pw@db1/plant\", password_file: pgpw}}", "outbox.postgres", "listen_dsn"},
		{head + "outbox: {postgres: {dsn: \"postgres://bridge@pooler/plant\", listen_dsn: \"host=db1 password=db-secret-pw\", password_file: pgpw}}", "outbox.postgres", "listen_dsn"},
		{head + "outbox: {postgres: {dsn: \"postgres://pooler/plant\", listen_dsn: \"postgres://u:db-secret-pw@db1:notaport/x\"}}", "outbox.postgres.listen_dsn", "not a PostgreSQL"},
	}
	for _, tc := range cases {
		_, err := ParseConfig([]byte(tc.yaml), dir)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%q: got %v, want a *ConfigError", tc.yaml, err)
			continue
		}
		if ce.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: got %q (field %q), want field %q saying %q", tc.yaml, err, ce.Field, tc.field, tc.says)
		}
		if strings.Contains(err.Error(), "db-secret-pw") {
			t.Errorf("%q: the error quotes the password: %v", tc.yaml, err)
		}
	}
}
