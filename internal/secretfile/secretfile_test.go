package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ content, want, err string }{
		{"s3cret", "s3cret", ""},
		{"s3cret\n", "s3cret", ""},
		{"s3cret\r\n", "s3cret", ""},
		{"two\n\n", "two\n", ""}, // only one trailing newline is the editor's
		{" spaced ", " spaced ", ""},
		{"", "", "is empty"},
		{"\n", "", "is empty"},
	} {
		p := filepath.Join(dir, "pw")
		if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p)):
			t.Errorf("Read(%q) = %v, want an error naming the file and saying %q", c.content, err, c.err)
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("Read(%q) = %q, %v; want %q", c.content, got, err, c.want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing: no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestDSNPassword(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://lp@db1/plant":                 false,
		"postgres://lp:pw@db1/plant":              true,
		"postgresql://lp@db1/plant?password=pw":   true,
		"host=db1 dbname=plant user=lp":           false,
		"host=db1 password=pw":                    true,
		"host=db1 passfile=/etc/lp/pgpass":        false,
		"postgres://lp@db1/plant?sslmode=require": false,
	} {
		if got := DSNHasPassword(dsn); got != want {
			t.Errorf("DSNHasPassword(%q) = %v, want %v", dsn, got, want)
		}
	}
	for dsn, want := range map[string]string{
		"postgres://lp@db1/plant?sslmode=disable": "postgres://lp:p%40ss%27w@db1/plant?sslmode=disable",
		"host=db1 dbname=plant user=lp":           `host=db1 dbname=plant user=lp password='p@ss\'w'`,
	} {
		if got := WithPassword(dsn, "p@ss'w"); got != want {
			t.Errorf("WithPassword(%q) = %q, want %q", dsn, got, want)
		}
	}
}
