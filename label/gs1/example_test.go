package gs1_test

import (
	"fmt"

	"github.com/labelprinter/go-labelprinter/label/gs1"
)

func ExampleCheckDigit() {
	gtin, err := gs1.CheckDigit("0950110153000")
	fmt.Println(gtin, err)
	sscc, _ := gs1.CheckDigit("10614141123456789")
	fmt.Println(sscc)
	// Output:
	// 09501101530003 <nil>
	// 106141411234567897
}

func ExampleCheck() {
	els, err := gs1.ParseBracketed("(01)09501101530003(17)261231(10)AB12")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(gs1.Check(els))
	fmt.Printf("%q\n", gs1.Raw(els))

	els, _ = gs1.ParseBracketed("(02)09501101530004(17)260230")
	fmt.Println(gs1.Check(els))
	// Output:
	// <nil>
	// "01095011015300031726123110AB12"
	// element 0: AI (02): check digit is 4, must be 3 (position 14 of "09501101530004")
	// element 0: AI (02) needs AI (37)
	// element 1: AI (17): day 30 does not exist in 2026-02 (in "260230")
}

func ExampleParseRaw() {
	els, err := gs1.ParseRaw("0109501101530003\x1d10AB12\x1d21SN1")
	fmt.Println(els, err)
	fmt.Println(gs1.Bracketed(els))
	// Output:
	// [{01 09501101530003} {10 AB12} {21 SN1}] <nil>
	// (01)09501101530003(10)AB12(21)SN1
}
