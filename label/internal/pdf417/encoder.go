// Package pdf417 encodes PDF417 symbols. It is github.com/boombuler/barcode's pdf417 encoder
// (v1.1.0, MIT licence, see LICENSE) with the symbol returned as modules and two fixes that
// readers need (ISO/IEC 15438): a symbol has at least 3 rows (the original drew 2 for short
// data), and the left row indicator of the rows of cluster 0 carries (rows-1)/3 (the original
// wrote (rows-3)/3, so a symbol of a row count not a multiple of 3 told readers two row counts).
package pdf417

import "fmt"

const (
	padding_codeword = 900
	start_word       = 0x1fea8
	stop_word        = 0x3fa29
)

// Level is the error correction level a symbol of n bytes of data is encoded at when the
// label does not set one: 2, 3 over 40 bytes, 4 over 160, 5 over 320.
func Level(n int) byte {
	switch {
	case n > 320:
		return 5
	case n > 160:
		return 4
	case n > 40:
		return 3
	}
	return 2
}

// Fits returns why data cannot be encoded in a PDF417 symbol at an error correction level from
// 0 to 8 (more codewords than 90 rows of 30 columns hold, with the level's error correction),
// or nil: what Encode refuses, without drawing the symbol.
func Fits(data string, securityLevel byte) error {
	_, _, _, err := layout(data, securityLevel)
	return err
}

// layout is the data codewords of data and the columns and rows that hold them.
func layout(data string, securityLevel byte) (dataWords []int, columns, rows int, err error) {
	if securityLevel >= 9 {
		return nil, 0, 0, fmt.Errorf("invalid security level %d", securityLevel)
	}
	// No mode packs more than 3 bytes in a codeword (numeric: 44 digits in 15), so longer
	// data cannot fit maxRows x maxCols codewords: refused before it is encoded.
	if len(data) > 3*maxRows*maxCols {
		return nil, 0, 0, fmt.Errorf("unable to fit data in a PDF417 symbol: %d bytes, more than %d", len(data), 3*maxRows*maxCols)
	}
	sl := securitylevel(securityLevel)
	if dataWords, err = highlevelEncode(data); err != nil {
		return nil, 0, 0, err
	}
	columns, rows = calcDimensions(len(dataWords), sl.ErrorCorrectionWordCount())
	if columns < minCols || columns > maxCols || rows < minRows || rows > maxRows {
		return nil, 0, 0, fmt.Errorf("unable to fit data in a PDF417 symbol: %d data codewords and %d of error correction (level %d), more than %d rows of %d columns hold", len(dataWords), sl.ErrorCorrectionWordCount(), securityLevel, maxRows, maxCols)
	}
	return dataWords, columns, rows, nil
}

// Encode returns the symbol of data at an error correction level from 0 to 8: its rows of
// modules, true is a bar, each row the start pattern, the left row indicator, the data
// columns, the right row indicator and the stop pattern.
func Encode(data string, securityLevel byte) ([][]bool, error) {
	dataWords, columns, rows, err := layout(data, securityLevel)
	if err != nil {
		return nil, err
	}
	sl := securitylevel(securityLevel)
	codeWords := encodeData(dataWords, columns, rows, sl)

	width := (columns+4)*17 + 1
	symbol := make([][]bool, 0, rows)
	for rowNum := 0; rowNum < rows; rowNum++ {
		table := rowNum % 3
		row := make([]bool, 0, width)
		add := func(word, bits int) {
			for i := bits - 1; i >= 0; i-- {
				row = append(row, word>>uint(i)&1 == 1)
			}
		}
		add(start_word, 17)
		add(getCodeword(table, getLeftCodeWord(rowNum, rows, columns, securityLevel)), 17)
		for _, word := range codeWords[rowNum*columns : (rowNum+1)*columns] {
			add(getCodeword(table, word), 17)
		}
		add(getCodeword(table, getRightCodeWord(rowNum, rows, columns, securityLevel)), 17)
		add(stop_word, 18)
		symbol = append(symbol, row)
	}
	return symbol, nil
}

// encodeData is the symbol length descriptor, the data, padding to fill rows x columns, and
// the error correction codewords.
func encodeData(dataWords []int, columns, rows int, sl securitylevel) []int {
	ecCount := sl.ErrorCorrectionWordCount()
	for n := columns*rows - (len(dataWords) + ecCount + 1); n > 0; n-- {
		dataWords = append(dataWords, padding_codeword)
	}
	dataWords = append([]int{len(dataWords) + 1}, dataWords...)
	return append(dataWords, sl.Compute(dataWords)...)
}

func getLeftCodeWord(rowNum int, rows int, columns int, securityLevel byte) int {
	var x int
	switch rowNum % 3 {
	case 0:
		x = (rows - 1) / 3
	case 1:
		x = int(securityLevel)*3 + (rows-1)%3
	case 2:
		x = columns - 1
	}
	return 30*(rowNum/3) + x
}

func getRightCodeWord(rowNum int, rows int, columns int, securityLevel byte) int {
	var x int
	switch rowNum % 3 {
	case 0:
		x = columns - 1
	case 1:
		x = (rows - 1) / 3
	case 2:
		x = int(securityLevel)*3 + (rows-1)%3
	}
	return 30*(rowNum/3) + x
}
