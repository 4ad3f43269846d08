package pdf417

import "testing"

// TestRowsAndIndicators: short data still gets the 3 rows readers need, every row is as wide
// as its columns say, and the row indicators of cluster 0 carry (rows-1)/3 on the left and
// columns-1 on the right (ISO/IEC 15438 5.8.1).
func TestRowsAndIndicators(t *testing.T) {
	for _, tc := range []struct {
		data  string
		level byte
		rows  int
	}{{"ABC", 0, 3}, {"A1", 5, 17}, {"abcdefghijklmnopqrstuvwxyz", 2, 8}} {
		sym, err := Encode(tc.data, tc.level)
		if err != nil {
			t.Fatal(err)
		}
		if len(sym) != tc.rows {
			t.Errorf("%q: %d rows, want %d", tc.data, len(sym), tc.rows)
		}
		cols := (len(sym[0])-1)/17 - 4
		for i, row := range sym {
			if len(row) != (cols+4)*17+1 {
				t.Errorf("%q row %d: %d modules", tc.data, i, len(row))
			}
		}
		if l := getLeftCodeWord(3, tc.rows, cols, tc.level); l != 30+(tc.rows-1)/3 {
			t.Errorf("%q: left indicator of row 3 is %d", tc.data, l)
		}
		if r := getRightCodeWord(3, tc.rows, cols, tc.level); r != 30+cols-1 {
			t.Errorf("%q: right indicator of row 3 is %d", tc.data, r)
		}
	}
	if _, err := Encode("x", 9); err == nil {
		t.Error("level 9 accepted")
	}
}
