// Package label is the printer maker's label format 3 as Go types, read and written without
// losing anything, and checked before anything prints.
//
//	lbl, err := label.Parse(data)         // any label a printer holds
//	if err := lbl.Validate(); err != nil { // every problem at once, by property path
//		for _, p := range label.ProblemsOf(err) { fmt.Println(p) } // objs[3].barHeight: is mandatory
//	}
//	err = c.Labels.Put(ctx, "BOX", lbl)    // the SDK takes a *Label as a json.Marshaler
//
// # Types
//
// [Label] holds the label's properties and its objects, one Go type per object type of the
// maker's pages ([Text], [Rect], [PolyLine], [Group] for ObjectGroup, [StaticBitmap],
// [Code128], [GS1128], [Code39], [ITF], [EAN13], [UPCA], [PDF417], [DataMatrix],
// [GS1DataMatrix], [GS1DataMatrixPlain], [GS1QRCode], [GS1QRCodePlain]), and [*Unknown] for any
// other type, kept as written. Lengths are millimetres as float64. Every property is a pointer
// (a slice for lists) so that an absent property stays absent: [Ptr] builds one in a literal,
// [Or] reads one with its documented default. Colours are strings as written (black,
// rgb(20%,70%,40%), dynamic text).
//
// # Nothing is lost
//
// Properties this package does not model, on the label, on an object, on a font or an apps
// entry, are kept in the type's Extra and written back unchanged, and so is a known property of
// the wrong shape (a DataMatrix size given as a number): [Label.Validate] reports it. A number
// keeps its value: one that float64 would change (more than 15 significant digits) is written
// back as it was read as long as its field is not changed. apps entries are read as
// {"id":..,"value":..} or ["id",".."] and written as objects. margin stays margin. The one
// limit: groups nest at most [MaxGroupDepth] levels.
//
// # What the maker's pages leave open, and how this package reads it
//
//   - moduleSize (DataMatrix, GS1 QR Code): the pages give a default of 5 "mm", which would make
//     a 125 mm symbol. This package reads an absent moduleSize as 5 printer dots
//     ([DefaultModuleDots]: 0.42 mm at 300 dpi) and a moduleSize the label sets as millimetres
//     ([ModuleMM]).
//   - Position anchor: x and y (mm) place the point of the object's box named by hAnchor
//     (LEFT, CENTER, RIGHT) and vAnchor (TOP, CENTER, BOTTOM); absent, LEFT and TOP: x, y is
//     the top-left corner. Only CENTER is seen on the pages, so other anchor values are kept
//     and not reported. A barcode's box is the symbol itself; a quiet zone lies outside it.
//   - The Rect page was not found: x, y, width, height and fillColor (its example's) are
//     modelled, nothing is mandatory, anything else is kept in Extra.
//   - The "common barcode properties" page was not found: barWidth is modelled on the linear
//     barcodes; other properties are kept in Extra.
//   - How a -Plain GS1 string ends a variable-length value is not documented: this package
//     reads GS (0x1D) or the end of the string.
//   - The full list of dynamic-text codes is not documented: [Expand] resolves the codes the
//     pages show and leaves any other as written, reporting it.
//
// # GS1
//
// [Label.Validate] checks the apps of GS1-128, GS1-DataMatrix and GS1-QRCode, and the raw
// string of the -Plain objects AI by AI, against GS1's Barcode Syntax Dictionary with package
// [github.com/labelprinter/go-labelprinter/label/gs1]: each AI known, its value's length,
// character set, check digits, dates and other content rules, and the AIs that must or must
// not appear together over all the GS1 symbols of the label, named on the entry of the AI
// that has the rule (objs[0].apps[1]: AI (02) needs AI (37)). [Label.Warnings] says where a
// GS1 symbol breaks the GS1 General Specifications' symbol rules for its application, read
// from its AIs: X-dimension range and minimum bar height as printed, GS1-128's 48 characters.
//
// # Dynamic text
//
// [Expand] fills dynamic text ({YEAR}, {TIME;...;+20weeks}, {COUNTER;Serial;WIDTH=6},
// {SHIFTCODE;Shift}, {VARIABLE;Name}) from an [Env]. Validate checks that the braces of every
// property that may hold dynamic text balance, and checks a value holding dynamic text (a GS1
// value, EAN-13 data) once filled: [Label.Fill] returns a copy filled from an Env, which
// Validate then checks as it will print. [Label.Lint] does both at every shape the label's
// dynamic text can take: dates today, on 31 December, 1 January and 29 February, counters at
// their least and largest values ({YEAR} inside AI (17) is a problem at every one).
package label
