package main

// config.go holds the rules of modules: what --config.file may say, the default module built
// from the flags, which modules must list their targets (every one that carries a credential),
// and how a module's HTTP client is built from prometheus/common's HTTPClientConfig.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/httpcreds"
	promconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v2"
)

const (
	// defaultModuleName is the module a probe without a module parameter uses, and the one the
	// flags make when there is no --config.file.
	defaultModuleName = "default"
	// maxModuleNameLen bounds a module name, which error messages and the index page show.
	maxModuleNameLen = 64
)

// fileConfig is the YAML of --config.file.
type fileConfig struct {
	Modules map[string]*moduleConfig `yaml:"modules"`
}

// moduleConfig is one module: the targets it may probe and the HTTP client settings it probes
// them with, read the way Prometheus reads a scrape job's.
type moduleConfig struct {
	// AllowedTargets lists CIDRs, addresses and host names; empty means defaultAllowTargets,
	// which only a module without credentials may use.
	AllowedTargets []string `yaml:"allowed_targets,omitempty"`
	// HTTPClientConfig holds authorization, basic auth, OAuth2 and tls_config.
	HTTPClientConfig promconfig.HTTPClientConfig `yaml:"http_client_config,omitempty"`
}

// UnmarshalYAML starts a module from prometheus/common's defaults (redirects followed, HTTP/2
// on), as a scrape job without http settings would.
func (m *moduleConfig) UnmarshalYAML(unmarshal func(any) error) error {
	type plain moduleConfig
	*m = moduleConfig{HTTPClientConfig: promconfig.DefaultHTTPClientConfig}
	return unmarshal((*plain)(m))
}

// loadConfigFile reads --config.file: a map of modules under "modules". Unknown keys are an
// error (a misspelt "allowed_targets" must not silently fall back to the default list), and
// relative file names are taken from the file's own directory, as Prometheus does.
func loadConfigFile(path string) (map[string]*moduleConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fc fileConfig
	if err := yaml.UnmarshalStrict(b, &fc); err != nil {
		// The YAML library quotes the start of a value it could not read, which may be a
		// credential written in the wrong place; the line number says enough.
		return nil, fmt.Errorf("%s: %s", path, yamlValue.ReplaceAllString(err.Error(), "`...`"))
	}
	if len(fc.Modules) == 0 {
		return nil, fmt.Errorf("%s: lists no modules", path)
	}
	dir := filepath.Dir(path)
	for name, m := range fc.Modules {
		if m == nil { // "name:" with nothing under it: a module with every default
			m = &moduleConfig{HTTPClientConfig: promconfig.DefaultHTTPClientConfig}
			fc.Modules[name] = m
		}
		m.HTTPClientConfig.SetDirectory(dir)
	}
	return fc.Modules, nil
}

// yamlValue matches a value quoted in a YAML error message.
var yamlValue = regexp.MustCompile("`[^`]*`")

// flagModule is the default module the flags describe when there is no --config.file. The
// token file is checked here, at start and at each reload, and read again by the client on
// every request, so a rotated token is used from the next probe on.
func flagModule(tokenFile, caFile string, insecure bool, allow []string) (*moduleConfig, error) {
	m := &moduleConfig{HTTPClientConfig: promconfig.DefaultHTTPClientConfig, AllowedTargets: allow}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--bearer-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return nil, errors.New("--bearer-token-file: the file is empty")
		}
		if strings.ContainsFunc(tok, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			// Say what is wrong without echoing any of the token.
			return nil, errors.New("--bearer-token-file: the token holds a line break or control character")
		}
		m.HTTPClientConfig.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: tokenFile}
	}
	m.HTTPClientConfig.TLSConfig = promconfig.TLSConfig{CAFile: caFile, InsecureSkipVerify: insecure}
	return m, nil
}

// credentials names what a module sends that identifies the exporter to a printer: an
// Authorization header, basic auth, OAuth2, a client certificate, or headers of its own (which
// may carry anything). Empty when it sends nothing of the kind.
func (m *moduleConfig) credentials() []string {
	hc := &m.HTTPClientConfig
	var kinds []string
	if hc.Authorization != nil || hc.BearerToken != "" || hc.BearerTokenFile != "" {
		kinds = append(kinds, "authorization")
	}
	if hc.BasicAuth != nil {
		kinds = append(kinds, "basic_auth")
	}
	if hc.OAuth2 != nil {
		kinds = append(kinds, "oauth2")
	}
	t := &hc.TLSConfig
	if t.Cert != "" || t.CertFile != "" || t.CertRef != "" || t.Key != "" || t.KeyFile != "" || t.KeyRef != "" {
		kinds = append(kinds, "a client certificate")
	}
	if hc.HTTPHeaders != nil && len(hc.HTTPHeaders.Headers) > 0 {
		kinds = append(kinds, "http_headers")
	}
	return kinds
}

// check applies the module rules that need no file: a usable name, settings prometheus/common
// accepts, no proxy, and an explicit allowed_targets for a module that carries a credential,
// so its credentials go only where they are meant to go, never to whatever /probe names.
func (m *moduleConfig) check(name string) error {
	if err := checkModuleName(name); err != nil {
		return err
	}
	hc := &m.HTTPClientConfig
	if err := hc.Validate(); err != nil {
		return fmt.Errorf("module %q: http_client_config: %w", name, err)
	}
	if hc.ProxyURL.URL != nil || hc.ProxyFromEnvironment || hc.NoProxy != "" || len(hc.ProxyConnectHeader) > 0 {
		// Through a proxy the connect-time allow check would see the proxy's address.
		return fmt.Errorf("module %q: proxy settings are not supported: the exporter connects to printers directly", name)
	}
	if kinds := m.credentials(); len(kinds) > 0 && len(m.AllowedTargets) == 0 {
		return fmt.Errorf("module %q carries credentials (%s) and lists no allowed_targets: list the printers they are meant for "+
			"(with --allow-targets when the flags make the module)",
			name, strings.Join(kinds, ", "))
	}
	return nil
}

// checkModuleName accepts letters, digits, '_', '-' and '.', at most maxModuleNameLen of them.
func checkModuleName(name string) error {
	if name == "" || len(name) > maxModuleNameLen {
		return fmt.Errorf("module name %q: want 1 to %d characters", truncate(name, maxModuleNameLen), maxModuleNameLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("module name %q: only letters, digits, '_', '-' and '.'", name)
		}
	}
	return nil
}

// truncate cuts s to at most n bytes, for quoting untrusted input in a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// module is a loaded module: its allow list and the HTTP client every target of it shares.
type module struct {
	name         string
	allow        *allowList
	hc           *http.Client
	credentialed bool
	secrets      *httpcreds.Credentials // what the SDK is told to keep out of errors
}

// buildModule checks m and builds its client: prometheus/common's round tripper (credentials
// files re-read per request, client certificate and CA files re-read when they change), dialing
// through the module's allow list, so a host name that resolves elsewhere at connect time is
// still refused, and with the probe trace on top for &debug=true.
func buildModule(name string, m *moduleConfig, r resolver) (*module, error) {
	if err := m.check(name); err != nil {
		return nil, err
	}
	entries := m.AllowedTargets
	if len(entries) == 0 {
		entries = defaultAllowTargets
	}
	allow, err := parseAllowList(entries, r)
	if err != nil {
		return nil, fmt.Errorf("module %q: allowed_targets: %w", name, err)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	rt, creds, err := httpcreds.NewRoundTripper(m.HTTPClientConfig, "labelprinter_exporter_"+name,
		promconfig.WithDialContextFunc(allow.dialContext(dialer)),
		promconfig.WithIdleConnTimeout(90*time.Second))
	if err != nil {
		return nil, fmt.Errorf("module %q: %w", name, err)
	}
	hc := &http.Client{Transport: tracingTransport{next: rt}}
	if !m.HTTPClientConfig.FollowRedirects {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return &module{
		name:         name,
		allow:        allow,
		hc:           hc,
		credentialed: len(m.credentials()) > 0,
		secrets:      creds,
	}, nil
}

// closeIdle closes the module's idle connections, once a reload replaced it.
func (m *module) closeIdle() { m.hc.CloseIdleConnections() }

// buildModules builds every module, or fails naming the first module that is wrong (in name
// order, so the message is the same on every run).
func buildModules(cfgs map[string]*moduleConfig, r resolver) (map[string]*module, error) {
	names := make([]string, 0, len(cfgs))
	for n := range cfgs {
		names = append(names, n)
	}
	slices.Sort(names)
	mods := make(map[string]*module, len(cfgs))
	for _, n := range names {
		m, err := buildModule(n, cfgs[n], r)
		if err != nil {
			for _, built := range mods {
				built.closeIdle()
			}
			return nil, err
		}
		mods[n] = m
	}
	return mods, nil
}
