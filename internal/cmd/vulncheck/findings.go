package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// message is one object of govulncheck's JSON stream, of which only these fields are read.
type message struct {
	Config *struct {
		GoVersion      string `json:"go_version"`
		ScannerVersion string `json:"scanner_version"`
		DB             string `json:"db"`
	} `json:"config"`
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *struct {
		OSV          string  `json:"osv"`
		FixedVersion string  `json:"fixed_version"`
		Trace        []frame `json:"trace"`
	} `json:"finding"`
}

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
}

func (f frame) symbol() string {
	s := f.Package + "."
	if f.Receiver != "" {
		s += strings.TrimPrefix(f.Receiver, "*") + "."
	}
	return s + f.Function
}

// vuln is one vulnerability the code reaches: in which module, fixed where, and one call of
// the code that reaches it.
type vuln struct {
	id, summary     string
	module, version string
	fixed           string
	symbol, caller  string
}

// report is what govulncheck found, the standard library's apart from the other modules'.
type report struct {
	goVersion, scanner string
	std, modules       []vuln
}

// isStd reports whether a finding's module is the Go distribution's own: its standard library
// or its toolchain, which a newer Go fixes, not a go.mod line.
func isStd(module string) bool { return module == "stdlib" || module == "toolchain" }

// readFindings reads govulncheck -format json: a vulnerability counts as reached when
// govulncheck traced a call of one of its symbols from the code (a finding whose first frame
// names a function); findings of imported packages or required modules alone do not.
func readFindings(r io.Reader) (report, error) {
	var rep report
	summaries := map[string]string{}
	reached := map[string]vuln{}
	dec := json.NewDecoder(r)
	sawConfig := false
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return report{}, fmt.Errorf("reading govulncheck's JSON: %v", err)
		}
		switch {
		case m.Config != nil:
			sawConfig = true
			rep.goVersion, rep.scanner = m.Config.GoVersion, m.Config.ScannerVersion
		case m.OSV != nil:
			summaries[m.OSV.ID] = m.OSV.Summary
		case m.Finding != nil:
			f := m.Finding
			if len(f.Trace) == 0 || f.Trace[0].Function == "" {
				continue
			}
			// One entry may affect several modules (an HTTP/2 fix in net/http and in
			// golang.org/x/net/http2): each module reached is a finding of its own.
			key := f.OSV + " " + f.Trace[0].Module
			if _, ok := reached[key]; ok {
				continue
			}
			v := vuln{id: f.OSV, module: f.Trace[0].Module, version: f.Trace[0].Version, fixed: f.FixedVersion, symbol: f.Trace[0].symbol()}
			if len(f.Trace) > 1 {
				v.caller = f.Trace[len(f.Trace)-1].symbol()
			}
			reached[key] = v
		}
	}
	if !sawConfig {
		return report{}, errors.New("no config message: the input is not govulncheck -format json")
	}
	for _, v := range reached {
		v.summary = summaries[v.id]
		if isStd(v.module) {
			rep.std = append(rep.std, v)
		} else {
			rep.modules = append(rep.modules, v)
		}
	}
	for _, l := range [][]vuln{rep.std, rep.modules} {
		sort.Slice(l, func(i, j int) bool { return l[i].id+" "+l[i].module < l[j].id+" "+l[j].module })
	}
	return rep, nil
}

// ids counts the vulnerabilities found, an entry reached in two modules once.
func (r report) ids() int {
	n := map[string]bool{}
	for _, l := range [][]vuln{r.std, r.modules} {
		for _, v := range l {
			n[v.id] = true
		}
	}
	return len(n)
}

func (r report) write(w io.Writer) {
	fmt.Fprintf(w, "govulncheck %s, %s: %d vulnerabilities reached, %d in the standard library, %d in other modules\n",
		r.scanner, r.goVersion, r.ids(), len(r.std), len(r.modules))
	for _, part := range []struct {
		title string
		l     []vuln
	}{{"standard library (fixed by a newer Go)", r.std}, {"modules (fixed by updating go.mod)", r.modules}} {
		if len(part.l) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s:\n", part.title)
		for _, v := range part.l {
			fixed := "no fix yet"
			if v.fixed != "" {
				fixed = "fixed in " + v.fixed
			}
			fmt.Fprintf(w, "    %s %s@%s (%s): %s\n", v.id, v.module, v.version, fixed, v.summary)
			if v.caller != "" {
				fmt.Fprintf(w, "      %s, reached from %s\n", v.symbol, v.caller)
			} else {
				fmt.Fprintf(w, "      %s\n", v.symbol)
			}
		}
	}
}
