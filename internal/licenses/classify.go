// Package licenses recognises licence texts by the phrases that tell them apart, and checks the
// licences of the modules a build links against the written allow-list (allowed.txt): the test
// beside it runs the check on the module's own dependencies, as read from the module cache.
package licenses

import (
	"strings"
)

// A rule recognises one licence: its text holds every phrase of all and none of none. Phrases
// are written normalised (see normalize).
type rule struct {
	id   string
	all  []string
	none []string
}

const (
	bsdGrant  = "redistribution and use in source and binary forms with or without modification are permitted provided that the following conditions are met"
	bsdSource = "redistributions of source code must retain the above copyright notice"
	bsdBinary = "redistributions in binary form must reproduce the above copyright notice"
	bsdName   = "endorse or promote products derived from this software"
	bsdAds    = "all advertising materials mentioning features or use of this software"
)

// rules are tried in order on the whole text; a text holding several licences (a module whose
// files are under two) yields each. The GNU licences are known by their title and date, since
// the EPL and the MPL name the GPL as a secondary licence in their own text.
var rules = []rule{
	{id: "Apache-2.0", all: []string{"apache license version 2 0", "terms and conditions for use reproduction and distribution", "grant of patent license"}},
	{id: "MIT", all: []string{
		"permission is hereby granted free of charge to any person obtaining a copy of this software and associated documentation files",
		"the above copyright notice and this permission notice shall be included in all copies or substantial portions of the software"}},
	{id: "EDL-1.0", all: []string{"eclipse distribution license v 1 0", bsdGrant, bsdSource, bsdBinary, bsdName}},
	{id: "BSD-3-Clause", all: []string{bsdGrant, bsdSource, bsdBinary, bsdName}, none: []string{"eclipse distribution license v 1 0", bsdAds}},
	{id: "BSD-2-Clause", all: []string{bsdGrant, bsdSource, bsdBinary}, none: []string{bsdName, bsdAds}},
	{id: "BSD-4-Clause", all: []string{bsdGrant, bsdAds}},
	{id: "ISC", all: []string{"permission to use copy modify and", "distribute this software for any purpose with or without fee is hereby granted provided that the above copyright notice and this permission notice appear in all copies"}},
	{id: "EPL-2.0", all: []string{"eclipse public license v 2 0", "the accompanying program is provided under the terms of this eclipse public license"}},
	{id: "EPL-1.0", all: []string{"eclipse public license v 1 0", "the accompanying program is provided under the terms of this eclipse public license"}},
	{id: "MPL-2.0", all: []string{"mozilla public license version 2 0"}},
	{id: "MPL-1.1", all: []string{"mozilla public license version 1 1"}},
	{id: "AGPL-3.0", all: []string{"gnu affero general public license version 3 19 november 2007"}},
	{id: "GPL-3.0", all: []string{"gnu general public license version 3 29 june 2007"}},
	{id: "GPL-2.0", all: []string{"gnu general public license version 2 june 1991"}},
	{id: "LGPL-3.0", all: []string{"gnu lesser general public license version 3 29 june 2007"}},
	{id: "LGPL-2.1", all: []string{"gnu lesser general public license version 2 1 february 1999"}},
	{id: "CDDL-1.0", all: []string{"common development and distribution license cddl version 1 0"}},
	{id: "SSPL-1.0", all: []string{"server side public license version 1"}},
	{id: "BUSL-1.1", all: []string{"business source license 1 1"}},
	{id: "Unlicense", all: []string{"this is free and unencumbered software released into the public domain"}},
}

// Classify returns the SPDX identifiers of the licences whose text text holds, in the order of
// the rules, or none when it recognises no licence. Case, punctuation, line breaks and comment
// marks do not matter; a licence named but not given in full (a header saying "licensed under
// the Apache License") is not recognised, since what a module grants is its licence's text.
func Classify(text string) []string {
	norm := normalize(text)
	var ids []string
	for _, r := range rules {
		if matches(norm, r) {
			ids = append(ids, r.id)
		}
	}
	return ids
}

func matches(norm string, r rule) bool {
	for _, p := range r.all {
		if !strings.Contains(norm, p) {
			return false
		}
	}
	for _, p := range r.none {
		if strings.Contains(norm, p) {
			return false
		}
	}
	return true
}

// normalize lowercases text and turns every run of characters other than ASCII letters and
// digits into one space, so that "Version 2.0," and "version 2 0" read alike, and so do
// "and/or" and "and or", a rewrapped paragraph and a text quoted in // or # comments.
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text) + 2)
	b.WriteByte(' ')
	space := true
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
			space = false
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}
