package main

import (
	"context"
	"encoding/json"
	"strings"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// fillRow is the table row that lint, put --check and preview --file fill a label's
// {{Column}} codes from: --row COLUMN=VALUE offline, or --table, --key-column and --key, the
// row read from the printer given with --url.
type fillRow struct {
	rows                  []string
	table, keyColumn, key string
	withTable             bool // --table is offered (lint, put --check)
}

func (f *fillRow) register(fs *pflag.FlagSet, withTable bool) {
	f.withTable = withTable
	fs.StringArrayVar(&f.rows, "row", nil, "COLUMN=VALUE: a cell of the table row {{COLUMN}} is filled from; repeatable")
	if withTable {
		fs.StringVar(&f.table, "table", "", "table on the printer (--url) the row is read from, with --key-column and --key")
		fs.StringVar(&f.keyColumn, "key-column", "", "column of --table searched for --key")
		fs.StringVar(&f.key, "key", "", "value searched in --key-column")
	}
}

// set reports whether a row is named at all.
func (f *fillRow) set() bool {
	return len(f.rows) > 0 || f.table != "" || f.keyColumn != "" || f.key != ""
}

// env returns the Env a label is filled from: no row when none is named, the --row cells, or
// the row of --table whose --key-column holds --key. Every mistake is a usage error naming
// the flag, found before anything is read from the printer.
func (a *app) fillEnv(cmd *cobra.Command, f *fillRow) (*label.Env, error) {
	env := &label.Env{}
	if len(f.rows) > 0 {
		if f.table != "" || f.keyColumn != "" || f.key != "" {
			return nil, usagef("--row gives the row offline; --table, --key-column and --key read it from the printer: give one or the other")
		}
		env.Row = map[string]string{}
		for _, r := range f.rows {
			col, val, ok := strings.Cut(r, "=")
			if !ok || col == "" {
				return nil, usagef("--row %q: want COLUMN=VALUE", r)
			}
			env.Row[col] = val
		}
		return env, nil
	}
	if !f.set() {
		return env, nil
	}
	if f.table == "" || f.keyColumn == "" || f.key == "" {
		return nil, usagef("--table, --key-column and --key name a row together (or give --row COLUMN=VALUE offline)")
	}
	if a.url == "" {
		return nil, usagef("--table %s is read from the printer: give --url, or the row offline with --row COLUMN=VALUE", f.table)
	}
	err := a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
		raw, err := c.Tables.Get(ctx, f.table)
		if err != nil {
			return err
		}
		row, err := tableRow(raw, f)
		env.Row = row
		return err
	})
	if err != nil {
		return nil, err
	}
	return env, nil
}

// tableRow finds the first row of the table raw ({"columns":[...],"rows":[[...],...]}) whose
// keyColumn cell is key, each cell as the printer fills {{Column}} with it: a string as it
// is, null as nothing, a number or a boolean as written in JSON.
func tableRow(raw json.RawMessage, f *fillRow) (map[string]string, error) {
	var t struct {
		Columns []string            `json:"columns"`
		Rows    [][]json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, usagef("table %q is not {\"columns\":[...],\"rows\":[[...],...]}: %v", f.table, err)
	}
	col := -1
	for i, c := range t.Columns {
		if c == f.keyColumn {
			col = i
		}
	}
	if col < 0 {
		return nil, usagef("--key-column %s: table %q has no such column (it has %s)", f.keyColumn, f.table, strings.Join(t.Columns, ", "))
	}
	cell := func(v json.RawMessage) string {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		if string(v) == "null" {
			return ""
		}
		return string(v)
	}
	for _, r := range t.Rows {
		if col < len(r) && cell(r[col]) == f.key {
			row := make(map[string]string, len(t.Columns))
			for i, c := range t.Columns {
				if i < len(r) {
					row[c] = cell(r[i])
				}
			}
			return row, nil
		}
	}
	return nil, usagef("--key %s: no row of table %q has it in column %s", f.key, f.table, f.keyColumn)
}
