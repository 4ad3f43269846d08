package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// module is the module apicheck works on: its public packages and where their record lives.
type module struct {
	dir, path string
	pkgs      []pkg
}

// pkg is one public package of the module.
type pkg struct {
	path, name string
}

// rel is the package's path inside the module ("label/preview"); "" for the module's root.
func (m *module) rel(p string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p, m.path), "/")
}

// file is the record's file of the package at import path p with extension ext.
func (m *module) file(p, ext string) string {
	return filepath.Join(m.dir, "api", strings.ReplaceAll(p, "/", "-")+ext)
}

// goCmd runs the go command in the module's directory and returns its stdout.
func (m *module) goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = m.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// loadModule lists the public packages of the module in dir: those another module can import,
// so not main packages, not test-only ones, and none under an internal/ directory.
func loadModule(dir string) (*module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	m := &module{dir: abs}
	out, err := m.goCmd("list", "-m", "-f", "{{.Path}}")
	if err != nil {
		return nil, err
	}
	m.path = strings.TrimSpace(string(out))
	out, err = m.goCmd("list", "-f", "{{.ImportPath}}\t{{.Name}}\t{{len .GoFiles}}", "./...")
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 || f[1] == "main" || f[2] == "0" {
			continue
		}
		if r := "/" + m.rel(f[0]) + "/"; strings.Contains(r, "/internal/") {
			continue
		}
		m.pkgs = append(m.pkgs, pkg{path: f[0], name: f[1]})
	}
	if len(m.pkgs) == 0 {
		return nil, errors.New("no public package in " + abs)
	}
	return m, nil
}

// recorded returns the files under api/ with extension ext, each with the import path of the
// package it records: from the first line of export data, from the "pkg PATH," of a .txt.
func (m *module) recorded(ext string) ([]record, error) {
	entries, err := os.ReadDir(filepath.Join(m.dir, "api"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []record
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		file := filepath.Join(m.dir, "api", e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if ext == ".txt" {
			first, _, _ = strings.Cut(strings.TrimPrefix(first, "pkg "), ",")
		}
		recs = append(recs, record{file: file, path: first})
	}
	return recs, nil
}

// record is one file under api/ and the import path of the package it records.
type record struct{ file, path string }

// has reports whether the module has a public package at import path p.
func (m *module) has(p string) bool {
	return slices.ContainsFunc(m.pkgs, func(q pkg) bool { return q.path == p })
}

// write rewrites api/*.txt for every public package, and with release the api/*.export too;
// files of packages gone from the module are removed.
func (m *module) write(apidiff string, release bool) error {
	if err := os.MkdirAll(filepath.Join(m.dir, "api"), 0o755); err != nil {
		return err
	}
	texts, err := m.apiTexts()
	if err != nil {
		return err
	}
	exts := []string{".txt"}
	if release {
		exts = append(exts, ".export")
	}
	for _, ext := range exts {
		old, err := m.recorded(ext)
		if err != nil {
			return err
		}
		for _, o := range old {
			if !m.has(o.path) {
				if err := os.Remove(o.file); err != nil {
					return err
				}
			}
		}
	}
	for _, p := range m.pkgs {
		if err := os.WriteFile(m.file(p.path, ".txt"), []byte(texts[p.path]), 0o644); err != nil {
			return err
		}
		if release {
			if err := m.writeExport(apidiff, p.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// check compares the code with the record and returns what does not match, each a message
// saying what to do.
func (m *module) check(apidiff string) ([]string, error) {
	var problems []string
	texts, err := m.apiTexts()
	if err != nil {
		return nil, err
	}
	stale := false
	for _, p := range m.pkgs {
		file := m.file(p.path, ".txt")
		old, err := os.ReadFile(file)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if string(old) == texts[p.path] {
			continue
		}
		stale = true
		rel, _ := filepath.Rel(m.dir, file)
		if old == nil {
			problems = append(problems, fmt.Sprintf("%s: new package, not recorded in %s", p.path, rel))
			continue
		}
		added, removed := lineDiff(string(old), texts[p.path])
		msg := fmt.Sprintf("%s: the exported API differs from %s:", p.path, rel)
		for _, l := range removed {
			msg += "\n\t- " + l
		}
		for _, l := range added {
			msg += "\n\t+ " + l
		}
		problems = append(problems, msg)
	}
	txts, err := m.recorded(".txt")
	if err != nil {
		return nil, err
	}
	for _, t := range txts {
		if !m.has(t.path) {
			stale = true
			problems = append(problems, fmt.Sprintf("%s: package %s is no longer in the module", t.file, t.path))
		}
	}
	if stale {
		problems = append(problems, "run "+updateCommand+" to update the api files")
	}

	breaking, err := readBreaking(filepath.Join(m.dir, "CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	exports, err := m.recorded(".export")
	if err != nil {
		return nil, err
	}
	var unlisted []string
	for _, e := range exports {
		if !m.has(e.path) {
			if !m.listed(breaking, e.path, "") {
				unlisted = append(unlisted, fmt.Sprintf("%s: the released package was removed; list it as `%s`", e.path, m.shortest(e.path)))
			}
			continue
		}
		changes, err := m.incompatible(apidiff, e)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			if !m.listed(breaking, e.path, c.name) {
				unlisted = append(unlisted, fmt.Sprintf("%s: incompatible change %s: %s; list it as `%s.%s`", e.path, c.name, c.msg, m.pkgName(e.path), normalise(c.name)))
			}
		}
	}
	if len(unlisted) > 0 {
		problems = append(problems, unlisted...)
		problems = append(problems, "an incompatible change since the last release must be listed under \"### Breaking\" in CHANGELOG.md's Unreleased section, package and identifier in backticks")
	}
	return problems, nil
}

// pkgName is the name of the package at import path p.
func (m *module) pkgName(p string) string {
	for _, q := range m.pkgs {
		if q.path == p {
			return q.name
		}
	}
	return p
}

// lineDiff returns the lines of b not in a, and those of a not in b.
func lineDiff(a, b string) (added, removed []string) {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	for _, l := range bs {
		if l != "" && !slices.Contains(as, l) {
			added = append(added, l)
		}
	}
	for _, l := range as {
		if l != "" && !slices.Contains(bs, l) {
			removed = append(removed, l)
		}
	}
	return added, removed
}
