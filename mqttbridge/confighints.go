package mqttbridge

// What a config error tells its reader to write instead, where the YAML library or the URL
// parser would say only what it could not read: a duration written as a bare number, a URL
// without its scheme, a tab in the indentation.

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v2"
)

// tabIndent finds the first line of b indented with a tab, which YAML refuses ("found
// character that cannot start any token"), and says so in the reader's terms.
func tabIndent(b []byte) error {
	for i, line := range bytes.Split(b, []byte("\n")) {
		rest := bytes.TrimLeft(line, " \t")
		if indent := line[:len(line)-len(rest)]; bytes.ContainsRune(indent, '\t') {
			return fmt.Errorf("line %d: a tab; YAML indents with spaces", i+1)
		}
	}
	return nil
}

// bareDurations refuses a duration written as a number without a unit: the YAML library reads
// `poll_interval: 1` as one nanosecond, and the floor's message ("1ns is below the 10ms floor")
// does not say what was meant. It walks the fields of t (a config struct) that b sets.
func bareDurations(b []byte, t reflect.Type) *ConfigError {
	var doc yaml.MapSlice
	if yaml.Unmarshal(b, &doc) != nil {
		return nil // the strict decoding says what is wrong
	}
	return walkDurations(doc, t, "")
}

var durationType = reflect.TypeOf(time.Duration(0))

func walkDurations(v any, t reflect.Type, path string) *ConfigError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		items, _ := v.([]any)
		for i, item := range items {
			if err := walkDurations(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		m, ok := v.(yaml.MapSlice)
		if !ok {
			return nil
		}
		fields := map[string]reflect.StructField{}
		collectFields(t, fields)
		for _, item := range m {
			key, _ := item.Key.(string)
			f, ok := fields[key]
			if !ok {
				continue
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			if f.Type == durationType {
				switch n := item.Value.(type) {
				case int, int64, uint64, float64:
					return fieldErr(p, "%v has no unit: write %vs (or 500ms, 2m, 1h)", n, n)
				}
				continue
			}
			if err := walkDurations(item.Value, f.Type, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// collectFields maps the YAML keys of t's fields, inline ones included, to their fields.
func collectFields(t reflect.Type, out map[string]reflect.StructField) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, out)
			}
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
}

// schemeHint is the message for a URL field without a scheme ("127.0.0.1:1883"), which the
// URL parser refuses or reads as a scheme of its own: the same URL with the scheme to write.
func schemeHint(raw string, schemes ...string) (string, bool) {
	if raw == "" || strings.Contains(raw, "://") {
		return "", false
	}
	alts := make([]string, 0, len(schemes)-1)
	for _, s := range schemes[1:] {
		alts = append(alts, s+"://")
	}
	return fmt.Sprintf("%s has no scheme: write %s://%s (%s for the others)", raw, schemes[0], raw, strings.Join(alts, ", ")), true
}
