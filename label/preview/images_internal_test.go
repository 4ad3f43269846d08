package preview

import (
	"context"
	"strings"
	"testing"
)

// TestCachedImagesBounded: the resolver keeps at most its budget of encoded images, letting
// the oldest go first, and keeps none larger than the budget, downloading those again.
func TestCachedImagesBounded(t *testing.T) {
	sizes := map[string]int{"A": 40, "B": 40, "C": 40, "HUGE": 101}
	downloads := map[string]int{}
	r := cachedImages(100, func(_ context.Context, name string) ([]byte, error) {
		downloads[name]++
		return []byte(strings.Repeat("x", sizes[name])), nil
	})
	for _, name := range []string{"A", "B", "A", "C", "B", "A", "HUGE", "HUGE"} {
		data, err := r(context.Background(), name)
		if err != nil || len(data) != sizes[name] {
			t.Fatalf("%s: %d bytes, %v", name, len(data), err)
		}
	}
	// A and B kept; C lets A go (120 > 100); B still kept; A again lets B go; HUGE never kept.
	want := map[string]int{"A": 2, "B": 1, "C": 1, "HUGE": 2}
	for name, n := range want {
		if downloads[name] != n {
			t.Errorf("%s downloaded %d times, want %d (all: %v)", name, downloads[name], n, downloads)
		}
	}
}
