package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// numericFlags says, for every numeric and duration flag of labelctl, whether 0 is a valid
// value and why. A negative or malformed value is a usage error for all of them.
var numericFlags = map[string]struct {
	zeroOK bool
	why    string
}{
	"timeout":             {false, "a request needs some time"},
	"interval":            {false, "0 would poll without pause"},
	"since":               {false, "an empty range"},
	"until":               {true, "0 is now"},
	"size":                {false, "an empty upload"},
	"copies":              {true, "0 is unlimited"},
	"first-row":           {true, "rows count from 0"},
	"row-count":           {true, "0 is all remaining rows"},
	"print-delay":         {true, "no delay"},
	"auto-print-gap":      {true, "no gap"},
	"auto-print-interval": {true, "no interval"},
	"delay":               {true, "images are ready at once"},
	"trigger-every":       {true, "the simulated line triggers only on request"},
	"expire-after":        {false, "an entry that expires at once"},
	"older-than":          {true, "prune every finished entry"},
	"retry":               {false, "0 would retry without pause"},
	"dpi":                 {true, "the label's resolution, else 300"},
	"wait-timeout":        {true, "no limit"},
}

func numericKind(f *pflag.Flag) string {
	switch t := f.Value.Type(); {
	case t == "duration":
		return "duration"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "int"
	case strings.HasPrefix(t, "float"):
		return "float"
	}
	return ""
}

// checkNumericFlags gives every numeric and duration flag of the leaf command cmd (the global
// ones included) 0, a negative and a malformed value; TestUsageErrorsEveryCommand calls it for
// every command. A refused value exits 2 with one line naming the flag and nothing on stdout;
// where 0 is valid the command goes on (against a closed port, with its context already ended,
// so it stops at once) and nothing complains about the flag. seen collects the flags met.
func checkNumericFlags(t *testing.T, cmd *cobra.Command, seen map[string]bool) {
	t.Helper()
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1"}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	path := strings.Fields(cmd.CommandPath())[1:]
	// One placeholder per positional argument of the usage line ("put NAME FILE|-"), so the
	// arguments are right and only the flag is wrong.
	for range strings.Fields(cmd.Use)[1:] {
		path = append(path, "x")
	}
	var flags []*pflag.Flag
	add := func(f *pflag.Flag) {
		if numericKind(f) != "" {
			flags = append(flags, f)
		}
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	for _, f := range flags {
		seen[f.Name] = true
		rule, ok := numericFlags[f.Name]
		if !ok {
			t.Errorf("%s --%s: not in numericFlags; say whether 0 is valid", cmd.CommandPath(), f.Name)
			continue
		}
		name := "--" + f.Name
		neg, bad := "-1", "x"
		if numericKind(f) == "duration" {
			neg, bad = "-1s", "5 minutes"
		}
		values := []string{neg, bad}
		if !rule.zeroOK {
			values = append(values, "0")
		}
		for _, v := range values {
			args := append(slices.Clone(path), name+"="+v)
			r := cli(t, ended, env, "", args...)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "labelctl: "+name+" ") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and a line naming %s", args, r.code, r.stdout, r.stderr, name)
			}
		}
		if rule.zeroOK {
			args := append(slices.Clone(path), name+"=0")
			if cmd.Name() == "sim" {
				args = append(args, "--addr", "127.0.0.1:0")
			}
			r := cli(t, ended, env, "", args...)
			if strings.Contains(r.stderr, name) {
				t.Errorf("%v (0: %s): exit %d, stderr %q complains about %s", args, rule.why, r.code, r.stderr, name)
			}
		}
	}
}

// TestUsageMessagesNameFlags holds the messages of mistakes an operator makes to the flags and
// arguments typed, in every command that reads a print job from flags.
func TestUsageMessagesNameFlags(t *testing.T) {
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_OUTBOX": "/nonexistent/outbox.db"}
	ctx := context.Background()
	for _, job := range [][]string{{"print", "job"}, {"outbox", "enqueue"}} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--label", "L", "--copies", "-5"}, "--copies must be 0 or more"},
			{[]string{"--label", "L", "--key", "k"}, "--key needs --table and --key-column"},
			{[]string{"--label", "L", "--table", "T", "--key", "k"}, "--key needs --table and --key-column"},
			{[]string{"--label", "L", "--first-row", "3"}, "--first-row needs --table"},
			{[]string{"--label-column", "C"}, "--label-column needs --table"},
			{[]string{"--copies", "2"}, "give --label, or --label-column with --table"},
			{[]string{"--label", "L", "--row-count=-1"}, "--row-count must be 0 or more"},
			{[]string{"--label", "L", "--print-delay", "NaN"}, "--print-delay must be a finite number, not NaN"},
			{[]string{"--label", "L", "--copies", "many"}, `--copies wants a whole number, not "many"`},
			{[]string{"--lable", "L"}, "unknown flag: --lable (did you mean --label?)"},
			{[]string{"--label", "L", "--copeis", "2"}, "unknown flag: --copeis (did you mean --copies?)"},
		} {
			args := append(slices.Clone(job), tc.args...)
			r := cli(t, ctx, env, "", args...)
			if r.code != 2 || r.stderr != "labelctl: "+tc.want+"\n" {
				t.Errorf("%v: exit %d, stderr %q; want 2, %q", args, r.code, r.stderr, tc.want)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "0", "counters"}, "--timeout must be more than 0, such as 30s"},
		{[]string{"--timeout=-1s", "counters"}, "--timeout must be more than 0, such as 30s"},
		{[]string{"--timeout", "soon", "counters"}, `--timeout wants a duration such as 30s, not "soon"`},
		{[]string{"--url", "127.0.0.1:8632", "counters"}, "--url 127.0.0.1:8632 has no scheme: try --url http://127.0.0.1:8632"},
		{[]string{"--url", "localhost:8632", "counters"}, "--url localhost:8632 has no scheme: try --url http://localhost:8632"},
		{[]string{"--url", "admin:secret@localhost:8632", "counters"}, "--url needs http:// or https:// at the start"},
		{[]string{"--url", "http:/localhost:8632", "counters"}, "--url needs http:// or https:// at the start"},
		{[]string{"--url", "ftp://localhost", "counters"}, "--url must start with http:// or https://"},
		{[]string{"--url", "http://localhost:99999", "counters"}, `--url has an invalid port "99999"`},
		{[]string{"history", "--since=-24h"}, "--since must be more than 0, such as 24h"},
		{[]string{"history", "--since", "0"}, "--since must be more than 0, such as 24h"},
		{[]string{"history", "--since", "1h", "--until", "2h"}, "--since 1h0m0s --until 2h0m0s is an empty range: --since must reach further back than --until"},
		{[]string{"history", "--since", "1h", "--until", "1h"}, "--since 1h0m0s --until 1h0m0s is an empty range: --since must reach further back than --until"},
		{[]string{"history", "--start", "2026-01-02T00:00:00Z", "--end", "2026-01-01T00:00:00Z"}, "--end must be after --start"},
		{[]string{"history", "--until", "1h", "--start", "2026-01-02T00:00:00Z"}, "give --since/--until or --start/--end, not both"},
		{[]string{"history", "--resolution", "fortnights"}, `unknown --resolution "FORTNIGHTS" (want MINUTES, HOURS, DAYS or WEEKS)`},
		{[]string{"history", "--sinec", "1h"}, "unknown flag: --sinec (did you mean --since?)"},
		{[]string{"watch", "counters", "--interval", "1ms"}, "--interval 1ms is below the 10ms floor; a printer is not a busy loop"},
		{[]string{"--printer", "..", "counters"}, `--printer ".." would change the path`},
		{[]string{"labels", "simulate", "L", "--table", "T"}, "--table, --key-column and --key go together: set all three or none"},
		{[]string{"sim", "--addr", "8633"}, `--addr must be host:port, such as 127.0.0.1:8631, not "8633"`},
		{[]string{"sim", "--addr", "localhost:http"}, `--addr needs a port number from 0 to 65535 after the colon, not "http"`},
		{[]string{"images", "put", "x", "logo.png", "--size", "10"}, "--size is for stdin (-); a file's size is read from the file"},
		{[]string{"--token", "a\nb", "counters"}, "--token (or LABELPRINTER_TOKEN) contains characters not allowed in a header"},
		{[]string{"--cert", "c.pem", "counters"}, "--cert needs --cert-key (or LABELPRINTER_KEY), the file with its private key"},
		{[]string{"--cert-key", "k.pem", "counters"}, "--cert-key needs --cert (or LABELPRINTER_CERT), the file with the client certificate"},
	} {
		r := cli(t, ctx, env, "", tc.args...)
		if r.code != 2 || r.stderr != "labelctl: "+tc.want+"\n" || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if r := cli(t, ctx, env, "", "--url", "admin:secret@localhost:8632", "counters"); strings.Contains(r.stderr, "secret") {
		t.Errorf("the password is repeated: %q", r.stderr)
	}
}

// TestClosestFlag holds the suggestion to near misses and keeps it from far ones.
func TestClosestFlag(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	for _, n := range []string{"label", "table", "label-column", "copies", "timeout", "hidden"} {
		fs.String(n, "", "")
	}
	_ = fs.MarkHidden("hidden")
	for in, want := range map[string]string{
		"lable": "label", "label-col": "label-column", "copise": "copies", "timeuot": "timeout",
		"tabel": "table", "xyzzy": "", "hiden": "", "c": "",
	} {
		if got := closestFlag(fs, in); got != want {
			t.Errorf("closestFlag(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckUsageFirst holds the root's checks in front of a command group's own
// PersistentPreRunE or PersistentPreRun, which cobra would otherwise run instead.
func TestCheckUsageFirst(t *testing.T) {
	var calls []string
	root := &cobra.Command{Use: "root"}
	withE := &cobra.Command{Use: "e", PersistentPreRunE: func(*cobra.Command, []string) error { calls = append(calls, "e"); return nil }}
	plain := &cobra.Command{Use: "p", PersistentPreRun: func(*cobra.Command, []string) { calls = append(calls, "p") }}
	leafE := &cobra.Command{Use: "x", Run: func(*cobra.Command, []string) { calls = append(calls, "run") }}
	leafP := &cobra.Command{Use: "y", Run: func(*cobra.Command, []string) { calls = append(calls, "run") }}
	withE.AddCommand(leafE)
	plain.AddCommand(leafP)
	root.AddCommand(withE, plain)
	refuse := false
	checkUsageFirst(root, func(*cobra.Command, []string) error {
		calls = append(calls, "check")
		if refuse {
			return usagef("refused")
		}
		return nil
	})
	for _, args := range [][]string{{"e", "x"}, {"p", "y"}} {
		calls = nil
		root.SetArgs(args)
		if err := root.Execute(); err != nil || strings.Join(calls, ",") != "check,"+args[0]+",run" {
			t.Errorf("%v: %v, calls %v", args, err, calls)
		}
	}
	refuse = true
	calls = nil
	root.SetArgs([]string{"e", "x"})
	if err := root.Execute(); err == nil || strings.Join(calls, ",") != "check" {
		t.Errorf("a refusal: %v, calls %v", err, calls)
	}
}
