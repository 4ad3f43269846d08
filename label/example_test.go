package label_test

import (
	"context"
	"fmt"
	"log"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// fixedClock is the simulator's clock in the examples, so that their dates do not move.
type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2024, 10, 4, 10, 30, 0, 0, time.UTC) }

// printOn puts lbl on a simulator started in-process, prints it once (from a one-row table
// when pallet is not empty), and returns the label as the simulator printed it, dynamic text
// filled.
func printOn(ctx context.Context, name string, lbl *label.Label, pallet string) (*label.Label, error) {
	srv, err := printersim.Start(printersim.WithPrinters("line1"), printersim.WithClock(fixedClock{}))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	c, err := labelprinter.NewClient(srv.URL)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Labels.Put(ctx, name, lbl); err != nil { // a *label.Label is a json.Marshaler
		return nil, err
	}
	job := &labelprinter.PrintJob{LabelName: name}
	if pallet != "" {
		table := map[string]any{"columns": []string{"Pallet"}, "rows": [][]string{{pallet}}}
		if err := c.Tables.Put(ctx, "PALLETS", table); err != nil {
			return nil, err
		}
		job.TableName, job.KeyColumn, job.Key = "PALLETS", "Pallet", pallet
	}
	if _, err := c.Printers.PrintJob(ctx, "line1", job); err != nil {
		return nil, err
	}
	if _, err := c.Printers.Trigger(ctx, "line1"); err != nil {
		return nil, err
	}
	printed, _ := srv.Sim.LastPrinted("line1")
	return label.Parse(printed)
}

// A shipping label: an address, a packing date filled when it prints, a GS1-128 with the
// GTIN, batch and best-before date, and the EAN-13 of the product (12 digits: the printer
// adds the check digit). It is checked before anything is sent, then printed.
func Example_shippingLabel() {
	font := &label.Font{Family: label.Ptr("Arial"), Style: label.Ptr("Regular"), Height: label.Ptr(4.0)}
	lbl := &label.Label{
		Format: label.Ptr(3), Width: label.Ptr(100.0), Height: label.Ptr(70.0),
		Objs: []label.Object{
			&label.Text{Anchor: label.Anchor{X: label.Ptr(5.0), Y: label.Ptr(5.0)},
				Text: label.Ptr("ACME Foods, 1 Dock Road, Springfield"), Font: font, Color: label.Ptr("black")},
			&label.Text{Anchor: label.Anchor{X: label.Ptr(5.0), Y: label.Ptr(12.0)},
				Text: label.Ptr("Packed {DAYOFMONTH}.{MONTH}.{YEAR}, best before {TIME;{DAYOFMONTH}.{MONTH}.{YEAR};+20weeks}"),
				Font: font, Color: label.Ptr("black")},
			&label.GS1128{Anchor: label.Anchor{X: label.Ptr(5.0), Y: label.Ptr(20.0)},
				Apps: []label.App{
					{ID: "01", Value: "09501101530003"},
					{ID: "15", Value: "250221"},
					{ID: "10", Value: "LOT42"}, // variable length last: no FNC1 separator needed
				},
				BarHeight: label.Ptr(20.0), BarWidth: label.Ptr(0.3)},
			&label.EAN13{Anchor: label.Anchor{X: label.Ptr(5.0), Y: label.Ptr(45.0)},
				Text: label.Ptr("950110153000"), BarHeight: label.Ptr(18.0), BarWidth: label.Ptr(0.33)},
		},
	}
	if err := lbl.Validate(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("valid")

	// A typo is caught before anything prints, by the maker's property names.
	lbl.Objs[3].(*label.EAN13).Text = label.Ptr("9501101530004")
	for _, p := range label.ProblemsOf(lbl.Validate()) {
		fmt.Println(p)
	}
	lbl.Objs[3].(*label.EAN13).Text = label.Ptr("950110153000")

	printed, err := printOn(context.Background(), "SHIP", lbl, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(*printed.Objs[1].(*label.Text).Text)
	// Output:
	// valid
	// objs[3].text: check digit is 4, must be 3
	// Packed 04.10.2024, best before 21.02.2025
}

// A pallet label: the pallet's SSCC, the GTIN of the trade items it holds and their count in
// a GS1 QR Code, read from JSON as the printer stores it, checked, and printed from a table
// row.
func Example_palletLabel() {
	data := []byte(`{"format": 3, "width": 100, "height": 150, "objs": [
		{"type": "Text", "x": 5, "y": 5, "text": "PALLET {{Pallet}}",
		 "font": {"family": "Arial", "style": "Bold", "height": 8}, "color": "black"},
		{"type": "GS1-QRCode", "x": 50, "y": 80, "hAnchor": "CENTER", "vAnchor": "CENTER",
		 "moduleSize": 1.2, "eccLevel": "M",
		 "apps": [["00", "095011010000000018"], {"id": "02", "value": "09501101530003"}, {"id": "37", "value": "48"}]}
	]}`)
	lbl, err := label.Parse(data)
	if err != nil {
		log.Fatal(err)
	}
	if err := lbl.Validate(); err != nil {
		log.Fatal(err)
	}
	qr := lbl.Objs[1].(*label.GS1QRCode)
	fmt.Println("SSCC", qr.Apps[0].Value, "ecc", label.Or(qr.ECCLevel, label.DefaultECCLevel), "size", label.Or(qr.Size, 0))

	printed, err := printOn(context.Background(), "PALLET", lbl, "P-0007")
	if err != nil {
		log.Fatal(err)
	}
	// {{Pallet}} is a table column (the simulator's convention), filled from the job's row.
	fmt.Println(*printed.Objs[0].(*label.Text).Text, len(printed.Objs[1].(*label.GS1QRCode).Apps))
	// Output:
	// SSCC 095011010000000018 ecc M size 0
	// PALLET P-0007 3
}

// A pallet label's SSCC in a GS1-128 is judged by GS1 symbol specification table 5 (logistic
// units): at 300 dpi a barWidth of 0.4 mm prints 5 dots, 0.423 mm, under the table's 0.495.
// Warnings are not problems: the label is valid and prints, but may not scan as GS1 requires.
func ExampleLabel_Warnings() {
	lbl := &label.Label{
		Format: label.Ptr(3), Width: label.Ptr(150.0), Height: label.Ptr(100.0),
		Objs: []label.Object{
			&label.GS1128{Anchor: label.Anchor{X: label.Ptr(10.0), Y: label.Ptr(10.0)},
				Apps:      []label.App{{ID: "00", Value: "106141411234567897"}},
				BarHeight: label.Ptr(32.0), BarWidth: label.Ptr(0.4)},
		},
	}
	fmt.Println(lbl.Validate())
	for _, w := range lbl.Warnings(300) {
		fmt.Println(w)
	}
	// Output:
	// <nil>
	// objs[0].barWidth: X-dimension 0.423 mm (5 dots at 300 dpi) is under 0.495 mm, the least GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label
}
