// Package systemd_test checks the example units: systemd-analyze verify accepts them, they
// hold the settings the README promises, and their exposure is the figure the README states.
package systemd_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var units = []string{"labelprinter-exporter.service", "labelprinter-mqtt.service"}

// systemdAnalyze returns the systemd-analyze command, or skips (fails when
// LABELPRINTER_REQUIRE_SYSTEMD_ANALYZE=1, as .ci/run sets it) saying how to get it.
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err == nil {
		return p
	}
	if os.Getenv("LABELPRINTER_REQUIRE_SYSTEMD_ANALYZE") == "1" {
		t.Fatal("systemd-analyze not found and LABELPRINTER_REQUIRE_SYSTEMD_ANALYZE=1: install it (Debian: apt-get install systemd)")
	}
	t.Skip("systemd-analyze not found: install it (Debian: apt-get install systemd) to verify the units; LABELPRINTER_REQUIRE_SYSTEMD_ANALYZE=1 makes this a failure")
	return ""
}

// staged copies unit into a temporary directory with its ExecStart binary, which verify needs
// to exist, replaced by an executable file there; it returns the copy's path.
func staged(t *testing.T, unit string) string {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(/usr/local/bin/[a-z-]+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no ExecStart=/usr/local/bin/...", unit)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", filepath.Base(string(m[1])))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, unit)
	if err := os.WriteFile(out, bytes.ReplaceAll(b, m[1], []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUnitsVerify: systemd-analyze verify accepts each unit without a word: an unknown or
// misspelt setting, which systemd would ignore with a warning, fails.
func TestUnitsVerify(t *testing.T) {
	sa := systemdAnalyze(t)
	for _, u := range units {
		out, err := exec.Command(sa, "verify", staged(t, u)).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
		}
	}
}

// settings reads a unit's [Service] section: each key's values in order.
func settings(t *testing.T, unit string) map[string][]string {
	t.Helper()
	f, err := os.Open(unit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kv := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			kv[k] = append(kv[k], v)
		}
	}
	return kv
}

// TestUnitsHardened: the settings the README promises are in both units, and the bridge keeps
// its outboxes in its StateDirectory and reads its configuration from its
// ConfigurationDirectory, the only places the unit lets it write and read its own.
func TestUnitsHardened(t *testing.T) {
	for _, u := range units {
		s := settings(t, u)
		for k, v := range map[string]string{
			"DynamicUser":              "yes",
			"ProtectSystem":            "strict",
			"Restart":                  "on-failure",
			"RestartPreventExitStatus": "2",
			"NoNewPrivileges":          "yes",
			"ProtectHome":              "yes",
			"PrivateTmp":               "yes",
			"PrivateDevices":           "yes",
			"RestrictAddressFamilies":  "AF_INET AF_INET6 AF_UNIX",
			"CapabilityBoundingSet":    "",
			"MemoryDenyWriteExecute":   "yes",
		} {
			if got := s[k]; len(got) != 1 || got[0] != v {
				t.Errorf("%s: %s=%q, want %q", u, k, got, v)
			}
		}
		if got := s["SystemCallFilter"]; len(got) == 0 || got[0] != "@system-service" {
			t.Errorf("%s: SystemCallFilter=%q, want @system-service first", u, got)
		}
	}
	s := settings(t, "labelprinter-mqtt.service")
	if got := s["StateDirectory"]; len(got) != 1 || got[0] != "labelprinter-mqtt" {
		t.Errorf("labelprinter-mqtt.service: StateDirectory=%q, want labelprinter-mqtt", got)
	}
	if !strings.Contains(s["ExecStart"][0], " --config.file /etc/"+s["ConfigurationDirectory"][0]+"/bridge.yml") {
		t.Errorf("labelprinter-mqtt.service: ExecStart=%s reads no bridge.yml in its ConfigurationDirectory %s", s["ExecStart"][0], s["ConfigurationDirectory"][0])
	}
	b, err := os.ReadFile("labelprinter-mqtt.service")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("`state_dir: /var/lib/labelprinter-mqtt`")) {
		t.Errorf("labelprinter-mqtt.service does not tell which state_dir bridge.yml must name")
	}
}

// TestUnitsExposure: systemd-analyze security's overall exposure of each unit, computed from
// the file alone (--offline=true, which needs no running systemd), is the figure the README
// states with the systemd it names, and no higher with another.
func TestUnitsExposure(t *testing.T) {
	sa := systemdAnalyze(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rv := regexp.MustCompile(`--offline=true` + "`" + `, systemd ([0-9]+);`).FindSubmatch(readme)
	if rv == nil {
		t.Fatal("README.md does not say which systemd computed the exposure (`--offline=true`, systemd N;)")
	}
	readmeVersion := string(rv[1])
	vout, err := exec.Command(sa, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	vm := regexp.MustCompile(`^systemd ([0-9]+)`).FindSubmatch(vout)
	if vm == nil {
		t.Fatalf("systemd-analyze --version said %q", vout)
	}
	version := string(vm[1])
	for _, u := range units {
		out, err := exec.Command(sa, "security", "--offline=true", staged(t, u)).CombinedOutput()
		if err != nil {
			t.Fatalf("systemd-analyze security --offline=true %s: %v\n%s", u, err, out)
		}
		m := regexp.MustCompile(`Overall exposure level for ` + regexp.QuoteMeta(u) + `: ([0-9.]+) `).FindSubmatch(out)
		if m == nil {
			t.Fatalf("systemd-analyze security %s said no overall exposure:\n%s", u, out)
		}
		stated := regexp.MustCompile("\\| `" + regexp.QuoteMeta(u) + "` \\| ([0-9.]+) ").FindSubmatch(readme)
		if stated == nil {
			t.Errorf("README.md has no row | `%s` | %s ... for the unit's exposure", u, m[1])
			continue
		}
		got, _ := strconv.ParseFloat(string(m[1]), 64)
		want, _ := strconv.ParseFloat(string(stated[1]), 64)
		// The README's figure is that of the systemd it names; another version may weigh the
		// settings otherwise, but must not find the unit more exposed.
		if (version == readmeVersion && got != want) || got > want {
			t.Errorf("%s: exposure %s with systemd %s, README.md states %s with systemd %s", u, m[1], version, stated[1], readmeVersion)
		}
	}
}
