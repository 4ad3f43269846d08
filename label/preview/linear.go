package preview

import (
	"fmt"
	"math"
	"strings"

	"github.com/labelprinter/go-labelprinter/label"
)

// Code 39 and ITF are drawn by this package, not a library, because their wide-to-narrow
// ratio (barRatio) is a property of the label and the libraries fix it.

// code39Chars are Code 39's characters in the order of code39Patterns: label's, whose
// Validate refuses any other.
const code39Chars = label.Code39Chars

// code39Patterns are the nine elements (bar, space, ...) of each character, 1 = wide.
var code39Patterns = [...]string{
	"000110100", "100100001", "001100001", "101100000", "000110001", "100110000", "001110000",
	"000100101", "100100100", "001100100", "100001001", "001001001", "101001000", "000011001",
	"100011000", "001011000", "000001101", "100001100", "001001100", "000011100", "100000011",
	"001000011", "101000010", "000010011", "100010010", "001010010", "000000111", "100000110",
	"001000110", "000010110", "110000001", "011000001", "111000000", "010010001", "110010000",
	"011010000", "010000101", "110000100", "011000100", "010101000", "010100010", "010001010",
	"000101010",
}

const code39Star = "010010100"

func wideNarrow(ratio float64, mw int) (int, int) {
	return mw, max1(int(math.Round(ratio * float64(mw))))
}

// code39 draws text (upper case letters, digits, - . space $ / + %) between start and stop
// characters, with the mod 43 check character when asked.
func code39(text string, check bool, ratio float64, mw int) (*linear, error) {
	if text == "" {
		return nil, fmt.Errorf("no text")
	}
	sum := 0
	for i, c := range text {
		k := strings.IndexRune(code39Chars, c)
		if k < 0 {
			return nil, fmt.Errorf("character %q at %d is not in Code 39", c, i)
		}
		sum += k
	}
	n, w := wideNarrow(ratio, mw)
	var runs []int
	add := func(p string) {
		for _, e := range p {
			if e == '1' {
				runs = append(runs, w)
			} else {
				runs = append(runs, n)
			}
		}
		runs = append(runs, n) // the gap between characters
	}
	add(code39Star)
	for _, c := range text {
		add(code39Patterns[strings.IndexRune(code39Chars, c)])
	}
	if check {
		add(code39Patterns[sum%43])
	}
	add(code39Star)
	runs = runs[:len(runs)-1]
	return &linear{runs: runs, quiet: [2]int{10 * n, 10 * n}}, nil
}

// itfPatterns are the five elements of each digit, 1 = wide.
var itfPatterns = [10]string{"00110", "10001", "01001", "11000", "00101", "10100", "01100", "00011", "10010", "01010"}

// itf draws an even number of digits, interleaved in pairs (the first digit in the bars, the
// second in the spaces), between the start (4 narrow) and stop (wide, narrow, narrow).
func itf(text string, ratio float64, mw int) (*linear, error) {
	if text == "" || len(text)%2 != 0 || !allDigits(text) {
		return nil, fmt.Errorf("ITF needs an even number of digits, not %q", text)
	}
	n, w := wideNarrow(ratio, mw)
	runs := []int{n, n, n, n}
	for i := 0; i < len(text); i += 2 {
		a, b := itfPatterns[text[i]-'0'], itfPatterns[text[i+1]-'0']
		for k := 0; k < 5; k++ {
			for _, e := range []byte{a[k], b[k]} {
				if e == '1' {
					runs = append(runs, w)
				} else {
					runs = append(runs, n)
				}
			}
		}
	}
	runs = append(runs, w, n, n)
	return &linear{runs: runs, quiet: [2]int{10 * n, 10 * n}}, nil
}
