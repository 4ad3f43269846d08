package suggest

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// TestClosest holds the suggestion to near misses, whatever their case, and keeps it from far ones.
func TestClosest(t *testing.T) {
	words := []string{"label", "table", "label-column", "copies", "copiesColumn", "timeout"}
	for in, want := range map[string]string{
		"lable": "label", "label-col": "label-column", "copise": "copies", "timeuot": "timeout",
		"tabel": "table", "xyzzy": "", "c": "", "": "",
		"copeis": "copies", "Copies": "copies", "COPIESCOLUMN": "copiesColumn", "copiescolum": "copiesColumn",
	} {
		if got := Closest(in, words); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"lable", "label", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestParseFlags: an unknown flag is one line with the closest one; --help still prints the
// usage; a malformed value is one line.
func TestParseFlags(t *testing.T) {
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.String("listen", ":1", "address")
		fs.Duration("timeout", time.Second, "timeout")
		return fs
	}
	var help strings.Builder
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lisen", ":2"}, "unknown flag --lisen (did you mean --listen?)"},
		{[]string{"-lisen=:2"}, "unknown flag --lisen (did you mean --listen?)"},
		{[]string{"--frobnicate"}, "unknown flag --frobnicate"},
		{[]string{"--timeout", "soon"}, `invalid value "soon" for flag --timeout: parse error`},
	} {
		err := ParseFlags(newFS(), c.args, &help)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	if help.Len() != 0 {
		t.Errorf("usage printed for a mistake: %q", help.String())
	}
	if err := ParseFlags(newFS(), []string{"--help"}, &help); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "-listen") {
		t.Errorf("--help: %v, %q", err, help.String())
	}
	if err := ParseFlags(newFS(), []string{"--listen", ":3"}, &help); err != nil {
		t.Errorf("good flags: %v", err)
	}
}
