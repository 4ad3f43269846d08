// Package suggest finds the known word a person most likely meant when they typed another: the
// one rule behind labelctl's "did you mean --copies?", the bridge's "did you mean \"copies\"?"
// and the exporter's and the outbox's suggestions, so every tool suggests alike.
package suggest

import (
	"sort"
	"strings"
)

// maxEdits is how far a typo may be from the word it suggests: further, and the suggestion
// is more often wrong than right.
const maxEdits = 2

// Closest returns the word of words nearest to typed by edit distance, ignoring case, if it is
// at most 2 edits away (or typed, 3 bytes or longer, is a prefix of it); otherwise "". Between
// two as near, the one that starts with the same letter wins, since people mistype the middle
// of a word more than its start, then the one first in sorted order. A word equal to typed
// is returned as is, so "Copies" suggests "copies".
func Closest(typed string, words []string) string {
	lower := strings.ToLower(typed)
	sorted := append([]string(nil), words...)
	sort.Strings(sorted)
	best, bestScore := "", 2*(maxEdits+1)
	for _, w := range sorted {
		lw := strings.ToLower(w)
		if lw == "" {
			continue
		}
		d := Distance(lower, lw)
		if len(lower) >= 3 && strings.HasPrefix(lw, lower) {
			d = min(d, 1)
		}
		score := 2 * d
		if lower == "" || lw[0] != lower[0] {
			score++
		}
		if d <= maxEdits && score < bestScore {
			best, bestScore = w, score
		}
	}
	return best
}

// Distance is the optimal string alignment distance between a and b, in bytes: insertions,
// deletions, substitutions and swaps of two neighbours each count 1, so "lable" is 1 from
// "label".
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// DidYouMean returns " (did you mean X?)" for the closest of words to typed, with X quoted by
// quote, or "" when no word is close enough.
func DidYouMean(typed string, words []string, quote func(string) string) string {
	if s := Closest(typed, words); s != "" {
		return " (did you mean " + quote(s) + "?)"
	}
	return ""
}
