// Package dictgen turns the GS1 Barcode Syntax Dictionary (gs1-syntax-dictionary.txt) into the
// Go table of package gs1 (ai_table.go). It is used by gen.go (go generate) and by the test
// that checks the checked-in table is what the checked-in dictionary gives.
package dictgen

import (
	"bytes"
	"fmt"
	"go/format"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Release returns the release the dictionary names in its "# Release: " line. A file between
// releases says UNSET there: it is refused, so that the table is always generated from a
// published release and DictionaryVersion names it as the file does.
func Release(dict []byte) (string, error) {
	for _, line := range strings.Split(string(dict), "\n") {
		if r, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "# Release:"); ok {
			r = strings.TrimSpace(r)
			if r == "" || r == "UNSET" {
				return "", fmt.Errorf("the dictionary's release line says %q: take the file of a published release", r)
			}
			return r, nil
		}
	}
	return "", fmt.Errorf("the dictionary has no \"# Release:\" line: take the file of a published release")
}

// Entry is one AI of the dictionary, a range expanded to one Entry per AI.
type Entry struct {
	AI        string
	Title     string
	Fixed     bool // "*": predefined length, no FNC1 separator after it
	DLAttr    bool // "?": permitted as a GS1 Digital Link data attribute
	Parts     []Part
	Req       [][][]string // each req= attribute: alternatives, each a group of AI patterns
	Ex        []string     // every ex= pattern
	DLPKey    bool
	DLPKeyQua string // dlpkey=...: the qualifier sequences as written
}

// Part is one component of an AI's value.
type Part struct {
	Cset     byte // N, X, Y or Z
	Min, Max int
	Opt      bool
	Linters  []string
}

var (
	compRE  = regexp.MustCompile(`^(\[)?([NXYZ])(\.\.)?([0-9]+)(\])?((?:,[a-z0-9]+)*)$`)
	aiRE    = regexp.MustCompile(`^[0-9]{2,4}$`)
	flagsRE = regexp.MustCompile(`^[*!?"$%&'()+,\-./:;<=>@\[\\\]^_` + "`" + `{|}~]+$`)
	patRE   = regexp.MustCompile(`^[0-9]{1,4}n*$`)
)

// Parse reads the dictionary's entries, in the order of their AIs.
func Parse(dict []byte) ([]Entry, error) {
	var out []Entry
	for n, line := range strings.Split(string(dict), "\n") {
		lineNo := n + 1
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		title := ""
		if i := strings.IndexByte(line, '#'); i >= 0 {
			title = strings.TrimSpace(line[i+1:])
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return nil, fmt.Errorf("line %d: want AIs and a specification: %q", lineNo, line)
		}
		first, last := fields[0], fields[0]
		if a, b, ok := strings.Cut(fields[0], "-"); ok {
			first, last = a, b
		}
		if !aiRE.MatchString(first) || !aiRE.MatchString(last) || len(first) != len(last) || first > last {
			return nil, fmt.Errorf("line %d: bad AI or range %q", lineNo, fields[0])
		}
		e := Entry{Title: title}
		rest := fields[1:]
		if flagsRE.MatchString(rest[0]) {
			e.Fixed = strings.Contains(rest[0], "*")
			e.DLAttr = strings.Contains(rest[0], "?")
			rest = rest[1:]
		}
		for len(rest) > 0 {
			m := compRE.FindStringSubmatch(rest[0])
			if m == nil {
				break
			}
			p := Part{Cset: m[2][0], Opt: m[1] == "["}
			if (m[1] == "[") != (m[5] == "]") {
				return nil, fmt.Errorf("line %d: unbalanced [ ] in %q", lineNo, rest[0])
			}
			size, _ := strconv.Atoi(m[4])
			p.Min, p.Max = size, size
			if m[3] == ".." {
				p.Min = 1
			}
			if m[6] != "" {
				p.Linters = strings.Split(m[6][1:], ",")
			}
			e.Parts = append(e.Parts, p)
			rest = rest[1:]
		}
		if len(e.Parts) == 0 {
			return nil, fmt.Errorf("line %d: no specification", lineNo)
		}
		for _, attr := range rest {
			k, v, _ := strings.Cut(attr, "=")
			switch k {
			case "req":
				var alts [][]string
				for _, alt := range strings.Split(v, ",") {
					group := strings.Split(alt, "+")
					for _, p := range group {
						if !patRE.MatchString(p) || len(p) < 2 {
							return nil, fmt.Errorf("line %d: bad req pattern %q", lineNo, p)
						}
					}
					alts = append(alts, group)
				}
				e.Req = append(e.Req, alts)
			case "ex":
				for _, p := range strings.Split(v, ",") {
					if !patRE.MatchString(p) || len(p) < 2 {
						return nil, fmt.Errorf("line %d: bad ex pattern %q", lineNo, p)
					}
					e.Ex = append(e.Ex, p)
				}
			case "dlpkey":
				e.DLPKey = true
				e.DLPKeyQua = v
			default:
				return nil, fmt.Errorf("line %d: unknown attribute %q", lineNo, attr)
			}
		}
		lo, _ := strconv.Atoi(first)
		hi, _ := strconv.Atoi(last)
		for i := lo; i <= hi; i++ {
			x := e
			x.AI = fmt.Sprintf("%0*d", len(first), i)
			out = append(out, x)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AI < out[j].AI })
	for i := 1; i < len(out); i++ {
		if strings.HasPrefix(out[i].AI, out[i-1].AI) {
			return nil, fmt.Errorf("AI (%s) is a prefix of AI (%s): the table must be prefix-free", out[i-1].AI, out[i].AI)
		}
	}
	return out, nil
}

// Generate returns the Go source of ai_table.go for the dictionary, gofmt-ed.
func Generate(dict []byte) ([]byte, error) {
	entries, err := Parse(dict)
	if err != nil {
		return nil, err
	}
	version, err := Release(dict)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by gen.go from gs1-syntax-dictionary.txt; DO NOT EDIT.\n\n")
	b.WriteString("package gs1\n\n")
	fmt.Fprintf(&b, "// DictionaryVersion names the GS1 Barcode Syntax Dictionary the AI table is generated from:\n// release %s, as its release line says.\n", version)
	fmt.Fprintf(&b, "const DictionaryVersion = %q\n\n", version)
	fmt.Fprintf(&b, "// table is every AI of the dictionary (%d), ranges expanded, in the order of their AIs.\n", len(entries))
	b.WriteString("var table = [...]entry{\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "{ai: %q, title: %q", e.AI, e.Title)
		if e.Fixed {
			b.WriteString(", fixed: true")
		}
		if e.DLAttr {
			b.WriteString(", dlAttr: true")
		}
		b.WriteString(", parts: []part{")
		for i, p := range e.Parts {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{cset: '%c', min: %d, max: %d", p.Cset, p.Min, p.Max)
			if p.Opt {
				b.WriteString(", opt: true")
			}
			if len(p.Linters) > 0 {
				fmt.Fprintf(&b, ", linters: []string{%s}", strs(p.Linters))
			}
			b.WriteString("}")
		}
		b.WriteString("}")
		if len(e.Req) > 0 {
			var alts []string
			for _, r := range e.Req {
				var groups []string
				for _, g := range r {
					groups = append(groups, "{"+strs(g)+"}")
				}
				alts = append(alts, "{"+strings.Join(groups, ", ")+"}")
			}
			fmt.Fprintf(&b, ", req: [][][]string{%s}", strings.Join(alts, ", "))
		}
		if len(e.Ex) > 0 {
			fmt.Fprintf(&b, ", ex: []string{%s}", strs(e.Ex))
		}
		if e.DLPKey {
			b.WriteString(", dlpkey: true")
		}
		if e.DLPKeyQua != "" {
			fmt.Fprintf(&b, ", dlpkeyQualifiers: %q", e.DLPKeyQua)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated source does not format: %w", err)
	}
	return src, nil
}

// strs writes ss as the elements of a Go string slice literal.
func strs(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
