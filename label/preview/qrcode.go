package preview

import "strings"

// qrAlphanumeric are the 45 characters of a QR Code's alphanumeric mode.
const qrAlphanumeric = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"

// qrGS1Data is what the QR Code encoder is given for GS1 data (GS ends a variable-length
// value), the encoder writing one mode for the whole data: alphanumeric when every character
// is one of that mode's or GS, byte otherwise. In alphanumeric mode under FNC1 in first
// position, ISO/IEC 18004 (7.4.8.2) reads "%" as the separator and "%%" as a "%" of the data,
// so there GS becomes "%" and each "%" of the data "%%"; in the other modes no character
// stands for another and the data is given as it is (GS is the separator of byte mode).
func qrGS1Data(s string) string {
	alnum := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == gs:
		case c >= '0' && c <= '9':
		case strings.IndexByte(qrAlphanumeric, c) >= 0:
			alnum = true
		default:
			return s
		}
	}
	hasGS := strings.IndexByte(s, gs) >= 0
	if !alnum && !hasGS {
		return s // digits only: numeric mode
	}
	out := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			out = append(out, '%', '%')
		case gs:
			out = append(out, '%')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
