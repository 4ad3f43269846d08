package main

import (
	"context"
	"strings"
	"testing"
)

// yearInExpiry holds {YEAR} (four digits) inside AI (17), which takes YYMMDD: it passes every
// check of the label as written and scans as another element string once filled.
const yearInExpiry = `{"format":3,"width":50,"height":30,"objs":[
	{"type":"GS1-128","x":1,"y":1,"barHeight":10,"apps":[["01","09501101530003"],["17","{YEAR}0704"]]}]}`

// gtinFromRow draws EAN-13 data from the table row.
const gtinFromRow = `{"format":3,"width":50,"height":30,"objs":[
	{"type":"EAN-13","x":5,"y":5,"barWidth":0.33,"barHeight":24,"text":"{{Gtin}}"}]}`

// TestLintFillsDynamicText: lint and put --check check the label filled as it will print:
// {YEAR} inside AI (17) fails; a GTIN with a wrong check digit in the row given with --row, or
// in the printer's table row named with --table, --key-column and --key, fails, and the right
// one passes; put --check then sends nothing.
func TestLintFillsDynamicText(t *testing.T) {
	ctx := context.Background()
	expiry := writeFile(t, "expiry.json", []byte(yearInExpiry))
	r := cli(t, ctx, nil, "", "labels", "lint", expiry)
	if r.code != 1 || !strings.HasPrefix(r.stdout, `objs[0].apps[1].value: AI (17): value "20`) || !strings.Contains(r.stdout, `has 8 characters, must have 6`) {
		t.Errorf("{YEAR} in AI (17): exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	gtin := writeFile(t, "gtin.json", []byte(gtinFromRow))
	cli(t, ctx, nil, "", "labels", "lint", gtin).ok(t) // no row: {{Gtin}} cannot be known
	r = cli(t, ctx, nil, "", "labels", "lint", gtin, "--row", "Gtin=9501101530004")
	if r.code != 1 || r.stdout != "objs[0].text: check digit is 4, must be 3\n" {
		t.Errorf("--row with a wrong check digit: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	cli(t, ctx, nil, "", "labels", "lint", gtin, "--row", "Gtin=9501101530003").ok(t)

	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	cli(t, ctx, env, `{"columns":["Sku","Gtin"],"rows":[["A",9501101530004],["B","9501101530003"]]}`, "tables", "put", "ITEMS", "-").ok(t)
	r = cli(t, ctx, env, "", "labels", "lint", gtin, "--table", "ITEMS", "--key-column", "Sku", "--key", "A")
	if r.code != 1 || r.stdout != "objs[0].text: check digit is 4, must be 3\n" {
		t.Errorf("--table row with a wrong check digit: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	cli(t, ctx, env, "", "labels", "lint", gtin, "--table", "ITEMS", "--key-column", "Sku", "--key", "B").ok(t)
	puts := func() int { return srv.Sim.Requests("PUT", "/api/v3/labels/{name}") }
	for _, args := range [][]string{
		{"labels", "put", "EXP", expiry, "--check"},
		{"labels", "put", "GTIN", gtin, "--check", "--table", "ITEMS", "--key-column", "Sku", "--key", "A"},
		{"labels", "put", "GTIN", gtin, "--check", "--row", "Gtin=9501101530004"},
		{"labels", "put", "TYPO", "-", "--check"},
	} {
		stdin := ""
		if args[3] == "-" {
			stdin = strings.Replace(goodLabel, `"EAN-13"`, `"EAN13"`, 1)
		}
		if r := cli(t, ctx, env, stdin, args...); r.code != 1 || r.stdout == "" || puts() != 0 {
			t.Errorf("%v: exit %d, %q, %q, %d PUTs", args, r.code, r.stdout, r.stderr, puts())
		}
	}
	cli(t, ctx, env, "", "labels", "put", "GTIN", gtin, "--check", "--row", "Gtin=9501101530003").ok(t)

	// Mistakes in naming the row are usage errors, before anything is read or sent.
	for _, args := range [][]string{
		{"labels", "lint", gtin, "--row", "Gtin"},
		{"labels", "lint", gtin, "--row", "Gtin=1", "--table", "ITEMS", "--key-column", "Sku", "--key", "A"},
		{"labels", "lint", gtin, "--table", "ITEMS"},
		{"labels", "lint", gtin, "--key-column", "Sku", "--key", "A"},
		{"labels", "lint", gtin, "--table", "ITEMS", "--key-column", "Nope", "--key", "A"},
		{"labels", "lint", gtin, "--table", "ITEMS", "--key-column", "Sku", "--key", "Z"},
		{"labels", "put", "GTIN", gtin, "--row", "Gtin=1"}, // without --check
	} {
		if r := cli(t, ctx, env, "", args...); r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "labelctl: ") {
			t.Errorf("%v: exit %d, %q, %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := cli(t, ctx, nil, "", "labels", "lint", gtin, "--table", "ITEMS", "--key-column", "Sku", "--key", "A"); r.code != 2 || !strings.Contains(r.stderr, "--url") {
		t.Errorf("--table without a printer: exit %d, %q", r.code, r.stderr)
	}
}

// TestPreviewStrictFailsOnProblems: preview --strict fails on a problem lint reports of the
// label as filled and drawn: a GTIN with a wrong check digit in the --row of a --file, and in
// the printer's table row a stored label is simulated with.
func TestPreviewStrictFailsOnProblems(t *testing.T) {
	ctx := context.Background()
	gtin := writeFile(t, "gtin.json", []byte(gtinFromRow))
	r := cli(t, ctx, nil, "", "labels", "preview", "--file", gtin, "--row", "Gtin=9501101530004", "-o", "-", "--strict")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "problem: objs[0].text: check digit is 4, must be 3\n") || !strings.HasSuffix(r.stderr, "labelctl: the preview has 1 problem and 1 warning (--strict)\n") {
		t.Errorf("--file --row: exit %d, %q", r.code, r.stderr)
	}
	cli(t, ctx, nil, "", "labels", "preview", "--file", gtin, "--row", "Gtin=9501101530003", "-o", "-", "--strict").ok(t)

	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	cli(t, ctx, env, gtinFromRow, "labels", "put", "GTIN", "-").ok(t)
	cli(t, ctx, env, `{"columns":["Sku","Gtin"],"rows":[["A","9501101530004"],["B","9501101530003"]]}`, "tables", "put", "ITEMS", "-").ok(t)
	r = cli(t, ctx, env, "", "labels", "preview", "GTIN", "--table", "ITEMS", "--key-column", "Sku", "--key", "A", "-o", "-", "--strict")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "problem: objs[0].text: check digit is 4, must be 3\n") {
		t.Errorf("NAME --table: exit %d, %q", r.code, r.stderr)
	}
	cli(t, ctx, env, "", "labels", "preview", "GTIN", "--table", "ITEMS", "--key-column", "Sku", "--key", "B", "-o", "-", "--strict").ok(t)
}

// TestLintPreviewExitCodes: one rule for lint and preview: 1 when the label has problems, 2 for
// a usage mistake, a file that cannot be read, or one that is not a JSON object (a UTF-8 byte
// order mark before the object is no mistake); preview FILE without --file names --file.
func TestLintPreviewExitCodes(t *testing.T) {
	ctx := context.Background()
	for name, body := range map[string]string{"array.json": "[1]", "broken.json": `{"format":3,`, "empty.json": ""} {
		f := writeFile(t, name, []byte(body))
		if r := cli(t, ctx, nil, "", "labels", "lint", f); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, f) {
			t.Errorf("lint %s: exit %d, %q, %q", name, r.code, r.stdout, r.stderr)
		}
		if r := cli(t, ctx, nil, "", "labels", "preview", "--file", f, "-o", "-"); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, f) {
			t.Errorf("preview %s: exit %d, %q, %q", name, r.code, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{{"labels", "lint", "/no/such.json"}, {"labels", "preview", "--file", "/no/such.json", "-o", "-"}} {
		if r := cli(t, ctx, nil, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	// A JSON object that is no label (objs not a list) is a problem: exit 1 in both.
	noObjs := writeFile(t, "noobjs.json", []byte(`{"format":3,"width":5,"height":5,"objs":{}}`))
	if r := cli(t, ctx, nil, "", "labels", "lint", noObjs); r.code != 1 || !strings.Contains(r.stdout, "objs: must be an array of objects") {
		t.Errorf("lint objs {}: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, ctx, nil, "", "labels", "preview", "--file", noObjs, "-o", "-"); r.code != 1 || !strings.Contains(r.stderr, "objs: must be an array of objects") {
		t.Errorf("preview objs {}: exit %d, %q", r.code, r.stderr)
	}
	bom := writeFile(t, "bom.json", []byte("\xef\xbb\xbf"+goodLabel))
	cli(t, ctx, nil, "", "labels", "lint", bom).ok(t)
	cli(t, ctx, nil, "", "labels", "preview", "--file", bom, "-o", "-").ok(t)
	r := cli(t, ctx, nil, "", "labels", "preview", bom, "-o", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "--file "+bom) {
		t.Errorf("preview FILE: exit %d, %q", r.code, r.stderr)
	}
	if r := cli(t, ctx, nil, "", "labels", "preview", "BOX", "-o", "-"); r.code != 2 || !strings.Contains(r.stderr, "--url") || !strings.Contains(r.stderr, "--file") {
		t.Errorf("preview NAME without a printer: exit %d, %q", r.code, r.stderr)
	}
}
