package nemesis

import (
	"slices"
	"testing"
)

// TestCheck: the checker the nemesis tests trust reports exactly what breaks at most once and
// order in a journal, each finding once, and nothing for a journal that keeps both.
func TestCheck(t *testing.T) {
	a, b := "line1", "line-2" // a printer name may hold the IDs' separator
	pr := func(printer string, n int) Print { return Print{Printer: printer, ID: ID(printer, n)} }
	none := func(string) bool { return false }
	resent := func(ids ...string) func(string) bool {
		return func(id string) bool { return slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name       string
		prints     []Print
		outOfOrder func(string) bool
		want       []string
	}{
		{
			name:   "clean: printers interleaved, each in order, with gaps",
			prints: []Print{pr(a, 1), pr(b, 1), pr(a, 2), pr(a, 5), pr(b, 3), pr(b, 4), pr(a, 6)},
			want:   nil,
		},
		{name: "empty", want: nil},
		{
			name:   "an ID printed twice in a row",
			prints: []Print{pr(a, 1), pr(a, 2), pr(a, 2), pr(a, 3)},
			want:   []string{"line1-00002 printed twice (print 3 of the journal)"},
		},
		{
			name:   "an ID printed three times is one finding",
			prints: []Print{pr(a, 1), pr(a, 1), pr(a, 1)},
			want:   []string{"line1-00001 printed twice (print 2 of the journal)"},
		},
		{
			name:   "an ID printed again after a later one: twice, and out of order",
			prints: []Print{pr(a, 1), pr(a, 2), pr(a, 1)},
			want: []string{
				"line1-00001 printed twice (print 3 of the journal)",
				"line1-00001 printed after line1-00002 (print 3 of the journal)",
			},
		},
		{
			name:   "an ID on another printer than its own",
			prints: []Print{pr(a, 1), {Printer: b, ID: ID(a, 2)}, pr(b, 1)},
			want:   []string{`printer line-2 printed "line1-00002", not one of its IDs`},
		},
		{
			name:   "an ID that is none of the nemesis's",
			prints: []Print{{Printer: a, ID: "x"}, {Printer: a, ID: ""}},
			want: []string{
				`printer line1 printed "x", not one of its IDs`,
				`printer line1 printed "", not one of its IDs`,
			},
		},
		{
			name:   "out of order on one printer; the other's order is its own",
			prints: []Print{pr(a, 1), pr(b, 7), pr(a, 3), pr(a, 2), pr(b, 8), pr(a, 4)},
			want:   []string{"line1-00002 printed after line1-00003 (print 4 of the journal)"},
		},
		{
			name: "a late ID does not lower the bar for the ones after it",
			// 2 after 5 is one finding; 4 after 5 is another, though it is after 2.
			prints: []Print{pr(a, 1), pr(a, 5), pr(a, 2), pr(a, 4), pr(a, 6)},
			want: []string{
				"line1-00002 printed after line1-00005 (print 3 of the journal)",
				"line1-00004 printed after line1-00005 (print 4 of the journal)",
			},
		},
		{
			name:       "a resent ID is exempt from the order, and does not move the bar",
			prints:     []Print{pr(a, 1), pr(a, 3), pr(a, 2), pr(a, 4)},
			outOfOrder: resent(ID(a, 2)),
			want:       nil,
		},
		{
			name:       "a resent ID printed after a later one keeps the later one's bar",
			prints:     []Print{pr(a, 1), pr(a, 9), pr(a, 2), pr(a, 3)},
			outOfOrder: resent(ID(a, 9)),
			want:       nil,
		},
		{
			name:       "a resent ID printed twice is still printed twice",
			prints:     []Print{pr(a, 1), pr(a, 2), pr(a, 3), pr(a, 2)},
			outOfOrder: resent(ID(a, 2)),
			want:       []string{"line1-00002 printed twice (print 4 of the journal)"},
		},
		{
			name:       "the exemption is for the ID named, not its printer",
			prints:     []Print{pr(a, 1), pr(a, 3), pr(a, 2), pr(b, 2), pr(b, 1)},
			outOfOrder: resent(ID(a, 2)),
			want:       []string{"line-2-00001 printed after line-2-00002 (print 5 of the journal)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ooo := tc.outOfOrder
			if ooo == nil {
				ooo = none
			}
			if got := Check(tc.prints, ooo); !slices.Equal(got, tc.want) {
				t.Errorf("Check found\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestParseID: every ID made by ID parses back to its printer and number, whatever the
// printer's name holds; what ID never makes does not parse.
func TestParseID(t *testing.T) {
	for _, printer := range []string{"line1", "line-2", "a-b-c", ""} {
		for _, n := range []int{0, 1, 99999, 123456} {
			p, got, ok := ParseID(ID(printer, n))
			if !ok || p != printer || got != n {
				t.Errorf("ParseID(ID(%q, %d)) = %q, %d, %v", printer, n, p, got, ok)
			}
		}
	}
	for _, id := range []string{"", "line1", "line1-", "line1-x", "line1-00001x"} {
		if p, n, ok := ParseID(id); ok {
			t.Errorf("ParseID(%q) = %q, %d, true; want it refused", id, p, n)
		}
	}
}
