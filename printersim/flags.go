package printersim

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/secretfile"
)

// The defaults shared by New and by the commands that serve a simulator (printersim and
// labelctl sim), so a session started with either answers at the same address and printer.
const (
	// DefaultPrinter is the printer a simulator has when no printer is named.
	DefaultPrinter = "line1"
	// DefaultAddr is where the commands listen when no address is given.
	DefaultAddr = "127.0.0.1:8631"
	// DefaultCommandDelay is how long an uploaded image stays PROCESSING in the commands: long
	// enough for a person to see the state. New's own default is shorter (50 ms), for tests.
	DefaultCommandDelay = 200 * time.Millisecond
)

// FlagSet is what Flags.Register needs from a flag set. Both *flag.FlagSet of the standard
// library and *pflag.FlagSet (cobra's) have these methods.
type FlagSet interface {
	StringVar(p *string, name string, value string, usage string)
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}

// Flags are the settings of a simulator served by a command, one field per flag. Register
// defines the flags with the shared defaults; Options checks what was typed and turns it into
// options for Listen.
type Flags struct {
	// Addr is the host:port to listen on (flag addr).
	Addr string
	// Printers is the comma-separated list of printer names (flag printers).
	Printers string
	// Token is the bearer token every request must carry, empty for none (flag require-token).
	Token string
	// Delay is how long an uploaded image stays PROCESSING (flag delay).
	Delay time.Duration
	// RequireContentLength is WithRequireContentLength (flag require-content-length).
	RequireContentLength bool
	// TriggerEvery is WithAutoTrigger's interval, 0 for a still line (flag trigger-every).
	TriggerEvery time.Duration
	// UI is WithUI, the page at / (flag ui, on by default in the commands).
	UI bool
	// AllowedHosts is the comma-separated list of host names requests may name besides the
	// loopback ones and the listen address's host (flag allowed-hosts; WithAllowedHosts).
	AllowedHosts string
	// TokenFile is a file holding the token, less one trailing newline, so that the token is
	// not in the process's arguments (flag token-file; not with require-token).
	TokenFile string
	// TrustedProxies is the comma-separated list of addresses or CIDR prefixes of reverse
	// proxies whose X-Forwarded-* headers are believed (flag trusted-proxy; WithTrustedProxies).
	TrustedProxies string
}

// Register defines the flags on fs with the shared defaults and usage texts.
func (f *Flags) Register(fs FlagSet) {
	fs.StringVar(&f.Addr, "addr", DefaultAddr, "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&f.Printers, "printers", DefaultPrinter, "comma-separated printer names; the first answers the single-printer paths")
	fs.StringVar(&f.Token, "require-token", "", "bearer token every request must carry (empty: none)")
	fs.DurationVar(&f.Delay, "delay", DefaultCommandDelay, "how long an uploaded image stays PROCESSING")
	fs.BoolVar(&f.RequireContentLength, "require-content-length", false, "answer 411 to chunked bodies and to POST or PUT without Content-Length, as small embedded servers do")
	fs.DurationVar(&f.TriggerEvery, "trigger-every", 0, "run the line: trigger every printer that has a job selected this often (0: only on request)")
	fs.StringVar(&f.TokenFile, "token-file", "", "file holding the bearer token (kept out of the process list; not with --require-token)")
	fs.StringVar(&f.TrustedProxies, "trusted-proxy", "", "comma-separated addresses or CIDR prefixes of reverse proxies whose X-Forwarded-Proto, -Host and -For are believed")
	fs.StringVar(&f.AllowedHosts, "allowed-hosts", "", "comma-separated host names the simulator answers to besides localhost, loopback addresses and the --addr host (others get 421)")
	fs.BoolVar(&f.UI, "ui", true, "serve the live page of printed labels at / (--ui=false: / and /ui/ answer 404)")
}

// FlagError is a flag value Options refuses; Flag is the flag's name without dashes, so each
// command can print it the way its users type it.
type FlagError struct {
	// Flag is the flag's name, such as "addr".
	Flag string
	// Problem says what is wrong with the value, such as "cannot be negative".
	Problem string
}

// Error returns "--flag problem".
func (e *FlagError) Error() string { return "--" + e.Flag + " " + e.Problem }

// Options checks the flags and returns the options they ask for and the printer names; an
// error is a *FlagError naming the flag.
func (f *Flags) Options() (opts []Option, printers []string, err error) {
	printers = SplitPrinters(f.Printers)
	if len(printers) == 0 {
		return nil, nil, &FlagError{"printers", "names no printer"}
	}
	for _, name := range printers {
		if err := CheckPrinterName(name); err != nil {
			return nil, nil, &FlagError{"printers", err.Error()}
		}
	}
	if err := checkAddr(f.Addr); err != nil {
		return nil, nil, &FlagError{"addr", err.Error()}
	}
	if f.Delay < 0 {
		return nil, nil, &FlagError{"delay", "cannot be negative"}
	}
	if f.TriggerEvery < 0 {
		return nil, nil, &FlagError{"trigger-every", "cannot be negative"}
	}
	opts = []Option{WithPrinters(printers...), WithProcessingDelay(f.Delay), WithAutoTrigger(f.TriggerEvery)}
	hosts, err := f.allowedHosts()
	if err != nil {
		return nil, nil, err
	}
	if len(hosts) > 0 {
		opts = append(opts, WithAllowedHosts(hosts...))
	}
	token := f.Token
	if f.TokenFile != "" {
		if f.Token != "" {
			return nil, nil, &FlagError{"token-file", "cannot be given with --require-token: give the token once"}
		}
		b, err := secretfile.Read(f.TokenFile)
		if err != nil {
			return nil, nil, &FlagError{"token-file", "cannot be read: " + err.Error()}
		}
		token = string(b)
	}
	if token != "" {
		opts = append(opts, WithToken(token))
	}
	if f.TrustedProxies != "" {
		var proxies []netip.Prefix
		for _, p := range strings.Split(f.TrustedProxies, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			prefix, err := netip.ParsePrefix(p)
			if err != nil {
				addr, aerr := netip.ParseAddr(p)
				if aerr != nil {
					return nil, nil, &FlagError{"trusted-proxy", "takes addresses or CIDR prefixes, such as 127.0.0.1 or 10.0.0.0/8, not " + strconv.Quote(p)}
				}
				prefix = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
			}
			proxies = append(proxies, prefix.Masked())
		}
		opts = append(opts, WithTrustedProxies(proxies...))
	}
	if f.RequireContentLength {
		opts = append(opts, WithRequireContentLength())
	}
	if f.UI {
		opts = append(opts, WithUI())
	}
	return opts, printers, nil
}

// checkAddr says why addr is not a host:port to listen on.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be host:port, such as %s, not %q", DefaultAddr, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return errors.New("needs a port number from 0 to 65535 after the colon, not " + strconv.Quote(port))
	}
	return nil
}

// allowedHosts reads --allowed-hosts and adds the --addr host, which is the simulator's own.
func (f *Flags) allowedHosts() ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(f.AllowedHosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if strings.ContainsAny(h, "/:@ ") && !strings.HasPrefix(h, "[") {
			if _, err := netip.ParseAddr(h); err != nil {
				return nil, &FlagError{"allowed-hosts", "takes host names or addresses without a scheme, port or path, such as printers.example, not " + strconv.Quote(h)}
			}
		}
		hosts = append(hosts, h)
	}
	if h, _, err := net.SplitHostPort(f.Addr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return hosts, nil
}
