// Package dmcap is the one rule for how much data a Data Matrix (ECC 200) can hold, which
// label's Validate and the preview both apply before giving data to the encoder.
package dmcap

// MaxCodewords is what the largest symbol, 144 x 144, holds.
const MaxCodewords = 1558

// MinCodewords is the fewest codewords any encodation gives text: two digits a codeword
// (ASCII), three other characters two (C40, Text, X12; EDIFACT and Base 256 take more). Over
// the largest symbol's capacity gozxing's encoder answers with a short codeword sequence of
// other data, not an error, and its look-ahead takes time quadratic in a run of digits: data
// over MaxCodewords by this count is not given to it.
func MinCodewords(text string) int {
	digits := 0
	for i := 0; i < len(text); i++ {
		if text[i] >= '0' && text[i] <= '9' {
			digits++
		}
	}
	return (3*digits + 4*(len(text)-digits)) / 6
}
