package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// This file holds how apicheck runs apidiff: writing a package's export data, and reading its
// incompatible changes.

// change is one incompatible change apidiff reports: the identifier as apidiff names it, and
// what happened to it.
type change struct{ name, msg string }

// apidiffCmd runs apidiff with args in the module's directory.
func (m *module) apidiffCmd(apidiff string, args ...string) ([]byte, error) {
	cmd := exec.Command(apidiff, args...)
	cmd.Dir = m.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s(install it with go install golang.org/x/exp/cmd/apidiff@VERSION, the version .ci/run pins)",
			apidiff, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// writeExport writes api/PATH.export: the package's export data, as apidiff -w writes it, with
// the absolute directories of the module and of the module cache in its source positions
// blanked (same length, so that the data still reads), since they say where it was written.
func (m *module) writeExport(apidiff, p string) error {
	tmp, err := os.CreateTemp("", "apicheck-*.export")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if _, err := m.apidiffCmd(apidiff, "-w", tmp.Name(), p); err != nil {
		return err
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return err
	}
	modCache, err := m.goCmd("env", "GOMODCACHE")
	if err != nil {
		return err
	}
	for _, d := range []string{m.dir, strings.TrimSpace(string(modCache))} {
		if d = filepath.Clean(d); len(d) > 1 {
			data = bytes.ReplaceAll(data, []byte(d+string(filepath.Separator)), append(bytes.Repeat([]byte("_"), len(d)), filepath.Separator))
		}
	}
	return os.WriteFile(m.file(p, ".export"), data, 0o644)
}

// incompatible returns the incompatible changes apidiff finds between the export data of r and
// the package's code.
func (m *module) incompatible(apidiff string, r record) ([]change, error) {
	out, err := m.apidiffCmd(apidiff, r.file, r.path)
	if err != nil {
		return nil, err
	}
	return parseIncompatible(out), nil
}

// parseIncompatible reads the "- NAME: MESSAGE" lines apidiff prints under "Incompatible
// changes:".
func parseIncompatible(out []byte) []change {
	var changes []change
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Incompatible changes:"):
			in = true
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "- "):
			in = false
		case in && strings.HasPrefix(line, "- "):
			name, msg, _ := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
			changes = append(changes, change{name: name, msg: msg})
		}
	}
	return changes
}
