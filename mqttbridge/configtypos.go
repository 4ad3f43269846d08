package mqttbridge

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/internal/suggest"
	"go.yaml.in/yaml/v2"
)

// This file words the YAML decoder's refusal of an unknown field for a person: the field as
// written, its line, the section it is in and the closest field that section has, instead of
// "field printr not found in type struct { mqttbridge.PrinterConfig ... }".

// yamlUnknownField is how go.yaml.in/yaml/v2 says a strict decode met an unknown field.
var yamlUnknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type (.+)$`)

// yamlSection is a struct type of the configuration: where it sits and the fields it has.
type yamlSection struct {
	path   string // "" for the top level, else such as "broker.tls_config" or "printers[]"
	fields []string
}

// yamlSections maps the Go name of every struct type reachable from root (as the decoder
// prints it) to its section, the first path that reaches it naming it.
func yamlSections(root reflect.Type, path string) map[string]yamlSection {
	m := map[string]yamlSection{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
				path += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, seen := m[t.String()]; seen {
			return
		}
		sec := yamlSection{path: path}
		m[t.String()] = sec // before the fields, so a type that holds itself ends
		var fields func(t reflect.Type)
		fields = func(t reflect.Type) {
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				tag := f.Tag.Get("yaml")
				name, opts, _ := strings.Cut(tag, ",")
				if name == "-" {
					continue
				}
				if strings.Contains(opts, "inline") {
					ft := f.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if ft.Kind() == reflect.Struct {
						fields(ft)
					}
					continue
				}
				if name == "" {
					name = strings.ToLower(f.Name)
				}
				sec.fields = append(sec.fields, name)
				sub := name
				if path != "" {
					sub = path + "." + name
				}
				walk(f.Type, sub)
			}
		}
		fields(t)
		m[t.String()] = sec
	}
	walk(root, path)
	return m
}

// unknownFieldError returns err reworded when the decoder refused an unknown field of a
// section reachable from root (path names root); nil for any other error. withLine is false
// when the YAML decoded is not the file's own text, whose line numbers would mislead.
func unknownFieldError(err error, root reflect.Type, path string, withLine bool) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return nil
	}
	m := yamlUnknownField.FindStringSubmatch(te.Errors[0])
	if m == nil {
		return nil
	}
	sections := yamlSections(root, path)
	sec, ok := sections[m[3]]
	closest := suggest.Closest(m[2], sec.fields)
	if !ok {
		// A type that decodes itself through a local alias (Prometheus's "type plain X")
		// is named by the alias, which does not say which section it is: take the section of
		// that package with the nearest field.
		pkg, _, _ := strings.Cut(m[3], ".")
		best := -1
		for _, key := range sortedKeys(sections) {
			cand := sections[key]
			if !strings.HasPrefix(key, pkg+".") {
				continue
			}
			if c := suggest.Closest(m[2], cand.fields); c != "" {
				if d := suggest.Distance(strings.ToLower(m[2]), strings.ToLower(c)); best < 0 || d < best {
					best, sec, closest, ok = d, cand, c, true
				}
			}
		}
	}
	msg := fmt.Sprintf("unknown field %q", m[2])
	if ok && sec.path != "" {
		msg += " in " + sec.path
	}
	if closest != "" {
		msg += "; did you mean " + strconv.Quote(closest) + "?"
	}
	if withLine {
		msg = "line " + m[1] + ": " + msg
	}
	if more := len(te.Errors) - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more error(s))", more)
	}
	return errors.New(msg)
}

// sortedKeys orders the sections by path, the shortest first, so the nearer one wins a tie.
func sortedKeys(m map[string]yamlSection) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := m[keys[i]].path, m[keys[j]].path
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	return keys
}
