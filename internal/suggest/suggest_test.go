package suggest

import "testing"

// TestClosest holds the suggestion to near misses, whatever their case, and keeps it from far ones.
func TestClosest(t *testing.T) {
	words := []string{"label", "table", "label-column", "copies", "copiesColumn", "timeout"}
	for in, want := range map[string]string{
		"lable": "label", "label-col": "label-column", "copise": "copies", "timeuot": "timeout",
		"tabel": "table", "xyzzy": "", "c": "", "": "",
		"copeis": "copies", "Copies": "copies", "COPIESCOLUMN": "copiesColumn", "copiescolum": "copiesColumn",
	} {
		if got := Closest(in, words); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"lable", "label", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
