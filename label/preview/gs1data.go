package preview

import "fmt"

// gs1ASCII refuses GS1 data with a byte beyond ASCII: every GS1 character set is a subset of
// ISO/IEC 646, so such data is no GS1 element string, and a symbol of it would announce
// another character set (an ECI) or scan as other characters.
func gs1ASCII(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] >= 128 {
			return fmt.Errorf("byte 0x%02x at %d is not ASCII, which GS1 data is", s[i], i)
		}
	}
	return nil
}
