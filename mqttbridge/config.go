package mqttbridge

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labelprinter/go-labelprinter/internal/secretfile"
	promconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v2"
)

// Defaults of the configuration.
const (
	DefaultTopicPrefix   = "labelprinter"
	DefaultSessionExpiry = 24 * time.Hour
	DefaultPollInterval  = time.Second
	minPollInterval      = 10 * time.Millisecond
	// maxSessionExpiry is the largest Session Expiry Interval MQTT 5 can carry (a uint32 of
	// seconds).
	maxSessionExpiry = time.Duration(1<<32-1) * time.Second
)

// Config is the bridge's configuration, as the YAML file of labelprinter-mqtt holds it.
type Config struct {
	// Broker says where the broker is and how to log in.
	Broker BrokerConfig `yaml:"broker"`
	// TopicPrefix is the first levels of every topic (default "labelprinter").
	TopicPrefix string `yaml:"topic_prefix"`
	// StateDir holds the outbox files and their ledgers, one of each per controller URL; it is
	// created if missing.
	StateDir string `yaml:"state_dir"`
	// Outbox puts the outboxes in PostgreSQL instead of state_dir, for a pair of bridges.
	Outbox OutboxConfig `yaml:"outbox"`
	// PollInterval is the wait between two reads of counters and status (default 1s).
	PollInterval time.Duration `yaml:"poll_interval"`
	// Limits caps what one command may hold (LimitsConfig).
	Limits LimitsConfig `yaml:"limits"`
	// Sparkplug, when set, runs a Sparkplug B edge node beside the bridge's own topics (off
	// without it).
	Sparkplug *SparkplugConfig `yaml:"sparkplug"`
	// Printers are the printers put on the broker ("printers" in the file, which
	// ParseConfig reads one by one).
	Printers []PrinterConfig `yaml:"-"`
}

// BrokerConfig says where the broker is and how the bridge logs in.
type BrokerConfig struct {
	// URL is mqtt://, mqtts://, ws:// or wss:// with host and port.
	URL string `yaml:"url"`
	// ClientID names the persistent session: two bridges must not share one.
	ClientID string `yaml:"client_id"`
	// Username is sent when set.
	Username string `yaml:"username"`
	// PasswordFile holds the password, less one trailing newline.
	PasswordFile string `yaml:"password_file"`
	// TLSConfig sets the CA, client certificate and key for mqtts:// and wss://.
	TLSConfig *promconfig.TLSConfig `yaml:"tls_config"`
	// SessionExpiry is how long the broker keeps the session (and the commands sent to it)
	// while the bridge is away (default 24h).
	SessionExpiry time.Duration `yaml:"session_expiry"`
}

// PrinterConfig is one printer on the broker.
type PrinterConfig struct {
	// Name is the printer's topic segment, unique in the file.
	Name string `yaml:"name"`
	// URL is the base URL of its controller. Validate normalises it (NormalizeURL): every
	// spelling of one controller names one outbox file and one client.
	URL string `yaml:"url"`
	// Printer is its name on the controller; "" means the single-printer paths. Two printers
	// on one url are never one name and a slash apart ("a" and "a/b"), as ids belong to a
	// printer and the outbox keys them "printer/id".
	Printer string `yaml:"printer"`
	// HTTPClientConfig sets authentication, TLS and proxy for the controller, as Prometheus
	// does for its scrape targets. Printers on one controller URL must share it.
	// ("http_client_config" in the file, which ParseConfig reads apart so that its errors
	// name the printer.)
	HTTPClientConfig promconfig.HTTPClientConfig `yaml:"-"`
}

// ConfigError is a configuration that cannot run. Field names the offending setting in the
// file's own terms, such as "printers[1].url".
type ConfigError struct {
	// Field is the setting at fault, as the file spells it; empty when the file does not parse.
	Field string
	// Err says what is wrong with it; it never quotes a password.
	Err error
}

// Error returns "config: <field>: <what is wrong>".
func (e *ConfigError) Error() string {
	if e.Field == "" {
		return "config: " + e.Err.Error()
	}
	return "config: " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) *ConfigError {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// LoadConfig reads, parses and checks the YAML file at path. Relative file names inside it
// (password_file, certificate files, state_dir) are taken relative to the file's directory; a
// state_dir of "~/..." is under the user's home directory.
// Every error is a *ConfigError naming the field.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Field: "config.file", Err: err}
	}
	return ParseConfig(b, filepath.Dir(path))
}

// ParseConfig parses and checks a YAML configuration; dir resolves relative file names.
// Unknown fields are errors, so a misspelt setting is not silently ignored.
func ParseConfig(b []byte, dir string) (*Config, error) {
	// The printers' http_client_config blocks are decoded one by one, so an error in one
	// (the library checks them while decoding) names its printer.
	var shadow struct {
		Config   `yaml:",inline"`
		Printers []struct {
			PrinterConfig `yaml:",inline"`
			HTTP          yaml.MapSlice `yaml:"http_client_config"`
		} `yaml:"printers"`
	}
	if err := yaml.UnmarshalStrict(b, &shadow); err != nil {
		if uf := unknownFieldError(err, reflect.TypeOf(shadow), "", true); uf != nil {
			return nil, &ConfigError{Err: uf}
		}
		if tab := tabIndent(b); tab != nil {
			return nil, &ConfigError{Err: tab}
		}
		return nil, &ConfigError{Err: fmt.Errorf("parsing YAML: %w", err)}
	}
	if err := bareDurations(b, reflect.TypeOf(Config{})); err != nil {
		return nil, err
	}
	c := shadow.Config
	c.Printers = nil
	for i, sp := range shadow.Printers {
		p := sp.PrinterConfig
		if sp.HTTP != nil {
			raw, err := yaml.Marshal(sp.HTTP)
			if err == nil {
				err = yaml.UnmarshalStrict(raw, &p.HTTPClientConfig)
			}
			if err != nil {
				if uf := unknownFieldError(err, reflect.TypeOf(p.HTTPClientConfig), "", false); uf != nil {
					err = uf
				}
				return nil, &ConfigError{Field: fmt.Sprintf("printers[%d].http_client_config", i), Err: err}
			}
		}
		c.Printers = append(c.Printers, p)
	}
	var err error
	if c.StateDir, err = expandHome(c.StateDir); err != nil {
		return nil, &ConfigError{Field: "state_dir", Err: err}
	}
	if dir != "" {
		c.setDirectory(dir)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) setDirectory(dir string) {
	join := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.StateDir = join(c.StateDir)
	c.Broker.PasswordFile = join(c.Broker.PasswordFile)
	if c.Outbox.Postgres != nil {
		c.Outbox.Postgres.PasswordFile = join(c.Outbox.Postgres.PasswordFile)
	}
	if c.Broker.TLSConfig != nil {
		c.Broker.TLSConfig.SetDirectory(dir)
	}
	for i := range c.Printers {
		c.Printers[i].HTTPClientConfig.SetDirectory(dir)
	}
}

// Validate fills in the defaults and checks every field, returning a *ConfigError for the
// first one that cannot work. A config for an embedded broker may leave broker.url empty;
// New fills it in.
func (c *Config) Validate() error {
	if c.TopicPrefix == "" {
		c.TopicPrefix = DefaultTopicPrefix
	}
	if err := checkTopicPrefix(c.TopicPrefix); err != nil {
		return &ConfigError{Field: "topic_prefix", Err: err}
	}
	switch {
	case c.PollInterval == 0:
		c.PollInterval = DefaultPollInterval
	case c.PollInterval < minPollInterval:
		return fieldErr("poll_interval", "%v is below the %v floor", c.PollInterval, minPollInterval)
	}
	if err := c.Broker.validate(); err != nil {
		return err
	}
	if err := c.Limits.validate(); err != nil {
		return err
	}
	if c.Sparkplug != nil {
		if err := c.Sparkplug.validate(c.Broker.ClientID); err != nil {
			return err
		}
	}
	if len(c.Printers) == 0 {
		return fieldErr("printers", "at least one printer is needed")
	}
	names := map[string]int{}
	targets := map[string]int{}
	clients := map[string]int{}
	for i := range c.Printers {
		p := &c.Printers[i]
		f := fmt.Sprintf("printers[%d]", i)
		if err := checkSegment(p.Name); err != nil {
			return &ConfigError{Field: f + ".name", Err: err}
		}
		if j, ok := names[p.Name]; ok {
			return fieldErr(f+".name", "%q is also the name of printers[%d]", p.Name, j)
		}
		names[p.Name] = i
		u, err := url.Parse(p.URL)
		hint, noScheme := schemeHint(p.URL, "http", "https")
		switch {
		case p.URL == "":
			return fieldErr(f+".url", "required")
		case noScheme:
			return fieldErr(f+".url", "%s", hint)
		case err != nil:
			return fieldErr(f+".url", "not a URL")
		case u.Scheme != "http" && u.Scheme != "https":
			return fieldErr(f+".url", "scheme must be http or https")
		case u.Host == "":
			return fieldErr(f+".url", "no host")
		case u.User != nil:
			return fieldErr(f+".url", "credentials in the URL are refused; use http_client_config")
		}
		p.URL = NormalizeURL(p.URL)
		if err := checkRemoteName(p.Printer); err != nil {
			return &ConfigError{Field: f + ".printer", Err: err}
		}
		key := p.URL + "\x00" + p.Printer
		if j, ok := targets[key]; ok {
			return fieldErr(f, "printers[%d] already has url %s and printer %q", j, p.URL, p.Printer)
		}
		if err := checkKeyPrefixes(c.Printers[:i], *p); err != nil {
			return &ConfigError{Field: f + ".printer", Err: err}
		}
		targets[key] = i
		if err := p.HTTPClientConfig.Validate(); err != nil {
			return &ConfigError{Field: f + ".http_client_config", Err: err}
		}
		if j, ok := clients[p.URL]; ok && !reflect.DeepEqual(p.HTTPClientConfig, c.Printers[j].HTTPClientConfig) {
			return fieldErr(f+".http_client_config", "differs from printers[%d], which has the same url: one controller has one client", j)
		}
		if _, ok := clients[p.URL]; !ok {
			clients[p.URL] = i
		}
	}
	return c.validateOutbox()
}

func (b *BrokerConfig) validate() error {
	if b.URL != "" {
		u, err := checkBrokerURL("broker.url", b.URL)
		if err != nil {
			return err
		}
		if b.TLSConfig != nil && (u.Scheme == "mqtt" || u.Scheme == "ws") {
			return fieldErr("broker.tls_config", "set, but broker.url is %s:// (no TLS)", u.Scheme)
		}
	}
	if b.ClientID == "" {
		return fieldErr("broker.client_id", "required: it names the persistent session")
	}
	if len(b.ClientID) > 65535 || !utf8.ValidString(b.ClientID) || hasControl(b.ClientID) {
		return fieldErr("broker.client_id", "must be UTF-8 without control characters, at most 65535 bytes")
	}
	if !utf8.ValidString(b.Username) || hasControl(b.Username) {
		return fieldErr("broker.username", "must be UTF-8 without control characters")
	}
	switch {
	case b.SessionExpiry == 0:
		b.SessionExpiry = DefaultSessionExpiry
	case b.SessionExpiry < time.Second:
		return fieldErr("broker.session_expiry", "%v is below 1s: commands sent while the bridge is down would be lost", b.SessionExpiry)
	case b.SessionExpiry > maxSessionExpiry:
		return fieldErr("broker.session_expiry", "%v is above the %v MQTT can carry", b.SessionExpiry, maxSessionExpiry)
	}
	if b.PasswordFile != "" {
		if _, err := readPassword(b.PasswordFile); err != nil {
			return &ConfigError{Field: "broker.password_file", Err: err}
		}
	}
	if b.TLSConfig != nil {
		if _, err := promconfig.NewTLSConfig(b.TLSConfig); err != nil {
			return &ConfigError{Field: "broker.tls_config", Err: err}
		}
	}
	return nil
}

// checkBrokerURL checks a broker's URL, the setting field: mqtt://, mqtts://, ws:// or wss://
// with a host and no credentials.
func checkBrokerURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	hint, noScheme := schemeHint(raw, "mqtt", "mqtts", "ws", "wss")
	switch {
	case noScheme:
		return nil, fieldErr(field, "%s", hint)
	case err != nil:
		return nil, fieldErr(field, "not a URL")
	case u.Scheme != "mqtt" && u.Scheme != "mqtts" && u.Scheme != "ws" && u.Scheme != "wss":
		return nil, fieldErr(field, "scheme must be mqtt, mqtts, ws or wss")
	case u.Host == "":
		return nil, fieldErr(field, "no host")
	case u.User != nil:
		return nil, fieldErr(field, "credentials in the URL are refused; use broker.username and broker.password_file")
	}
	return u, nil
}

// readPassword reads the broker's password file by the module's one rule (secretfile.Read),
// refusing more than MQTT can carry. Its errors name the file
// and never quote its content.
func readPassword(path string) ([]byte, error) {
	b, err := secretfile.Read(path)
	if err == nil && len(b) > 65535 {
		return nil, fmt.Errorf("%s holds more than the 65535 bytes MQTT can carry", path)
	}
	return b, err
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}
