package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/outbox"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// printer starts a simulated printer line1 with a label MEDIUM, and returns a Client for it.
func printer() (*labelprinter.Client, func()) {
	srv, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		log.Fatal(err)
	}
	c, err := labelprinter.NewClient(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Labels.Put(context.Background(), "MEDIUM", json.RawMessage(`{"format":3}`)); err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); srv.Close() }
}

// The outbox as a line controller uses it: Run delivers in the background, and its error (a
// file that can no longer be written) is not thrown away.
func Example() {
	c, stop := printer()
	defer stop()
	dir, err := os.MkdirTemp("", "outbox-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ob, err := outbox.Open(filepath.Join(dir, "line1.outbox"), c)
	if err != nil {
		log.Fatal(err) // outbox.ErrLocked: another process has the file
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- ob.Run(ctx) }()

	in := outbox.Intent{
		ID: "order-4711/1", Printer: "line1",
		Job: labelprinter.PrintJob{LabelName: "MEDIUM", Copies: 2, Queue: labelprinter.Ptr(true)},
	}
	if _, err := ob.Enqueue(ctx, in); err != nil { // committed and fsynced when it returns
		log.Fatal(err)
	}
	again, _ := ob.Enqueue(ctx, in) // the same ID adds nothing
	fmt.Println("enqueued twice:", again.ID)

	e, err := ob.Wait(ctx, "order-4711/1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.ID, e.State, "after", e.Attempts, "attempt")

	cancel()
	if err := <-runErr; err != nil {
		log.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// enqueued twice: order-4711/1
	// order-4711/1 sent after 1 attempt
}

// A print job, then a trigger for it, then a deselect: one printer's entries of every kind go
// out one at a time in enqueue order. Drain sends what is due and returns, as a batch job does;
// WithStateChange tells the owner of each change as it is committed.
func ExampleOutbox_Drain() {
	c, stop := printer()
	defer stop()
	dir, err := os.MkdirTemp("", "outbox-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ob, err := outbox.Open(filepath.Join(dir, "line1.outbox"), c,
		outbox.WithStateChange(func(e outbox.Entry) {
			if e.State != outbox.Sending {
				fmt.Println(e.ID, e.Kind, e.State)
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, in := range []outbox.Intent{
		{ID: "select", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "MEDIUM", Queue: labelprinter.Ptr(true)}},
		{ID: "print-one", Printer: "line1", Kind: outbox.KindTrigger},
		{ID: "clear", Printer: "line1", Kind: outbox.KindDeselect},
	} {
		if _, err := ob.Enqueue(ctx, in); err != nil {
			log.Fatal(err)
		}
	}
	if err := ob.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	if err := ob.Close(); err != nil { // returns once every change has been told
		log.Fatal(err)
	}
	// Output:
	// select printJob pending
	// print-one trigger pending
	// clear deselect pending
	// select printJob sent
	// print-one trigger sent
	// clear deselect sent
}

// Prune removes settled entries but keeps their IDs, so an order sent again is refused
// instead of printed twice.
func ExampleOutbox_Prune() {
	c, stop := printer()
	defer stop()
	dir, err := os.MkdirTemp("", "outbox-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ob, err := outbox.Open(filepath.Join(dir, "line1.outbox"), c)
	if err != nil {
		log.Fatal(err)
	}
	defer ob.Close()
	ctx := context.Background()
	in := outbox.Intent{ID: "order-4711/1", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "MEDIUM"}}
	if _, err := ob.Enqueue(ctx, in); err != nil {
		log.Fatal(err)
	}
	if err := ob.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	n, err := ob.Prune(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pruned", n)
	_, err = ob.Enqueue(ctx, in)
	fmt.Println("sent again:", errors.Is(err, outbox.ErrPruned))
	// Output:
	// pruned 1
	// sent again: true
}
