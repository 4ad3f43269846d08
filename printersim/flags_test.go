package printersim

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestFlagsDefaultsAndOptions: registered flags carry the shared defaults, and Options refuses
// each bad value with a *FlagError naming the flag.
func TestFlagsDefaultsAndOptions(t *testing.T) {
	parse := func(args ...string) (*Flags, error) {
		var f Flags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.Register(fs)
		return &f, fs.Parse(args)
	}
	f, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if *f != (Flags{Addr: DefaultAddr, Printers: DefaultPrinter, Delay: DefaultCommandDelay, UI: true}) {
		t.Errorf("defaults %+v", *f)
	}
	opts, names, err := f.Options()
	if err != nil || len(names) != 1 || names[0] != DefaultPrinter {
		t.Fatalf("Options: %v, %v", names, err)
	}
	if sim := New(opts...); sim.cfg.delay != DefaultCommandDelay || sim.cfg.printers[0] != DefaultPrinter || New().cfg.printers[0] != DefaultPrinter || sim.ui == nil {
		t.Errorf("options not applied: %+v", sim.cfg)
	}
	f, _ = parse("-ui=false")
	if opts, _, _ := f.Options(); New(opts...).ui != nil {
		t.Error("-ui=false serves the page")
	}

	f, _ = parse("-require-token", "tok", "-require-content-length", "-trigger-every", "1s", "-printers", "a, b")
	opts, names, err = f.Options()
	if err != nil || len(names) != 2 {
		t.Fatalf("Options: %v, %v", names, err)
	}
	if sim := New(opts...); sim.cfg.token != "tok" || !sim.cfg.strict || sim.cfg.autoEach != time.Second {
		t.Errorf("options not applied: %+v", sim.cfg)
	} else {
		sim.Close()
	}

	for _, tc := range []struct {
		args      []string
		flag, msg string
	}{
		{[]string{"-printers", " ,"}, "printers", "--printers names no printer"},
		{[]string{"-printers", "line1,.."}, "printers", `--printers printer name ".." cannot be addressed: a URL path segment ".." is removed before a request is sent`},
		{[]string{"-printers", "."}, "printers", `--printers printer name "." cannot be addressed: a URL path segment "." is removed before a request is sent`},
		{[]string{"-printers", "a\tb"}, "printers", `--printers printer name "a\tb" contains a control character`},
		{[]string{"-addr", "8633"}, "addr", `--addr must be host:port, such as 127.0.0.1:8631, not "8633"`},
		{[]string{"-addr", "localhost:http"}, "addr", `--addr needs a port number from 0 to 65535 after the colon, not "http"`},
		{[]string{"-addr", "[::1]:65536"}, "addr", `--addr needs a port number from 0 to 65535 after the colon, not "65536"`},
		{[]string{"-delay", "-1ms"}, "delay", "--delay cannot be negative"},
		{[]string{"-trigger-every", "-1s"}, "trigger-every", "--trigger-every cannot be negative"},
		{[]string{"-allowed-hosts", "ok.example,http://printers.example"}, "allowed-hosts", `--allowed-hosts takes host names or addresses without a scheme, port or path, such as printers.example, not "http://printers.example"`},
		{[]string{"-trusted-proxy", "127.0.0.1,proxy.example"}, "trusted-proxy", `--trusted-proxy takes addresses or CIDR prefixes, such as 127.0.0.1 or 10.0.0.0/8, not "proxy.example"`},
		{[]string{"-require-token", "a", "-token-file", "t"}, "token-file", "--token-file cannot be given with --require-token: give the token once"},
		{[]string{"-allowed-hosts", "printers.example:8631"}, "allowed-hosts", `--allowed-hosts takes host names or addresses without a scheme, port or path, such as printers.example, not "printers.example:8631"`},
	} {
		f, err := parse(tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = f.Options()
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != tc.flag || err.Error() != tc.msg {
			t.Errorf("%q: %v, want %s", tc.args, err, tc.msg)
		}
	}
	f, _ = parse("-allowed-hosts", " a.example, ,fe80::1", "-addr", "Sim.Example:0")
	if opts, _, err := f.Options(); err != nil || !slices.Equal(New(opts...).cfg.allowedHosts, []string{"a.example", "fe80::1", "sim.example"}) {
		t.Errorf("--allowed-hosts and --addr's host: %v, %v", New(opts...).cfg.allowedHosts, err)
	}
	f, _ = parse("-trusted-proxy", "127.0.0.1, 10.1.2.3/8,::1")
	if opts, _, err := f.Options(); err != nil || fmt.Sprint(New(opts...).cfg.trustedProxies) != "[127.0.0.1/32 10.0.0.0/8 ::1/128]" {
		t.Errorf("--trusted-proxy: %v, %v", New(opts...).cfg.trustedProxies, err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("from-a-file\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ = parse("-token-file", tokenFile)
	if opts, _, err := f.Options(); err != nil || New(opts...).cfg.token != "from-a-file" {
		t.Errorf("--token-file: %q, %v", New(opts...).cfg.token, err)
	}
	for _, addr := range []string{":0", "127.0.0.1:0", "[::1]:8631", "localhost:65535"} {
		if f, _ := parse("-addr", addr); f != nil {
			if _, _, err := f.Options(); err != nil {
				t.Errorf("%s: %v", addr, err)
			}
		}
	}
}

// TestListenRefusesUnaddressablePrinters: a printer named "." or "..", which no request can
// address (the page could not go live beside it), fails Listen before it listens; any other
// name, however odd, is served.
func TestListenRefusesUnaddressablePrinters(t *testing.T) {
	for _, name := range []string{".", "..", "", "a\x00b", "\xff"} {
		if srv, err := Start(WithPrinters("line1", name)); err == nil {
			srv.Close()
			t.Errorf("Start with a printer named %q: no error", name)
		}
	}
	srv, err := Start(WithPrinters("..x", "a/b", "%2e%2e", "x?y#z"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
}
