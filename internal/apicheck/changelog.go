package main

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
)

// This file holds the rule that lets an incompatible change pass: CHANGELOG.md's Unreleased
// section lists it under "### Breaking".

// readBreaking returns the spans in backticks under "### Breaking" in the Unreleased section of
// the changelog at file: from "## [Unreleased]" (or "## Unreleased") to the next "## ", and in
// it from "### Breaking" to the next heading.
func readBreaking(file string) ([]string, error) {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var spans []string
	unreleased, breaking := false, false
	code := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			h := strings.ToLower(strings.Trim(strings.TrimPrefix(line, "## "), "[] "))
			unreleased, breaking = h == "unreleased", false
			continue
		case strings.HasPrefix(line, "#"):
			breaking = unreleased && strings.EqualFold(strings.TrimSpace(strings.TrimLeft(line, "#")), "Breaking")
			continue
		}
		if breaking {
			for _, m := range code.FindAllStringSubmatch(line, -1) {
				spans = append(spans, m[1])
			}
		}
	}
	return spans, sc.Err()
}

// normalise writes apidiff's name of a changed identifier as the changelog names it: (*T).M and
// (T).M as T.M.
func normalise(name string) string {
	return strings.NewReplacer("(*", "", "(", "", ")", "").Replace(name)
}

// listed reports whether spans name the change to name (apidiff's) in the package at import
// path p, as package name, path inside the module or import path, a dot, and the name; a
// removed package (name "") is named by its path inside the module or its import path.
func (m *module) listed(spans []string, p, name string) bool {
	var prefixes []string
	if name == "" {
		prefixes = []string{p}
		if r := m.rel(p); r != "" {
			prefixes = append(prefixes, r)
		}
		return slices.ContainsFunc(spans, func(s string) bool { return slices.Contains(prefixes, s) })
	}
	prefixes = []string{m.pkgName(p), p}
	if r := m.rel(p); r != "" {
		prefixes = append(prefixes, r)
	}
	n := normalise(name)
	for _, pre := range prefixes {
		if slices.Contains(spans, pre+"."+n) {
			return true
		}
	}
	return false
}

// shortest is how a removed package is best named: its path inside the module, or its import
// path for the module's root.
func (m *module) shortest(p string) string {
	if r := m.rel(p); r != "" {
		return r
	}
	return p
}
