package gs1

import "testing"

// BenchmarkCheck: Check of a typical pallet label's element string (SSCC-free trade item:
// GTIN, expiry, batch, serial, net weight, count).
func BenchmarkCheck(b *testing.B) {
	els, err := ParseBracketed("(01)09501101530003(17)261231(10)AB12(21)SN123456(3103)001250(30)12")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(els); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRawCheck: splitting the same string from its raw form, then Check.
func BenchmarkParseRawCheck(b *testing.B) {
	els, _ := ParseBracketed("(01)09501101530003(17)261231(10)AB12(21)SN123456(3103)001250(30)12")
	raw := Raw(els)
	b.ReportAllocs()
	for b.Loop() {
		els, err := ParseRaw(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := Check(els); err != nil {
			b.Fatal(err)
		}
	}
}
