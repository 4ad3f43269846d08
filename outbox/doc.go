// Package outbox keeps print intents in a local file until the printer has them, so an order
// survives a crash of the process, a reboot and an offline printer, and is sent at most once.
//
//	ob, err := outbox.Open("line1.outbox", client)
//	if err != nil { ... } // outbox.ErrLocked: another process has the file
//	defer ob.Close()
//	runErr := make(chan error, 1)
//	go func() { runErr <- ob.Run(ctx) }() // delivers until ctx ends; an error is a file that cannot be written
//	e, err := ob.Enqueue(ctx, outbox.Intent{ID: "order-4711/3", Printer: "line1", Job: job})
//	e, err = ob.Wait(ctx, e.ID) // sent, rejected, expired, cancelled or unknown
//
// The file is a bbolt database: every Enqueue is committed and fsynced before it returns,
// concurrent Enqueues share one commit, and only one Outbox (in any process) can have the file
// open at a time. [Outbox.Drain] is Run for a batch job: it sends what is due and returns.
// The file keeps indexes in the transaction of every change: of its pending, sending and
// unknown entries, of each printer's count of entries in each state, of its final entries by
// their last change, and of the settled entries not acknowledged. Open and [Outbox.List] of
// those states read those entries alone, [Outbox.Prune] the entries old enough to go,
// [Outbox.Unacknowledged] those not acknowledged, and [Outbox.Counts] none. Files
// written before kinds, pruned IDs or the indexes existed open unchanged (their indexes built
// once) and are marked with the newer format, which older versions refuse to open rather
// than misread.
//
// # PostgreSQL
//
// [OpenPostgres] keeps the entries in a queue of a PostgreSQL database instead, with the same
// methods and meaning: any number of Outboxes, in any number of processes on any number of
// machines, may use one queue at once. Each printer's entries are delivered by one [Outbox.Run]
// at a time, the one that holds the printer's lease (a row renewed while it delivers, see
// [WithLeaseTTL]); when its holder dies or is cut off, another Run takes the lane over once the
// lease has run out and turns the entry the holder left Sending into Unknown. A holder writes a
// printer's request only within 4/5 of the TTL from the moment it sent its last successful
// renewal, by its own monotonic clock: a request not written by then (still dialling, or a
// retry of the SDK's) is stopped and never written later, and goes back to Pending if the lane
// is still the holder's. So once another Run has taken the lane over, the old holder no
// longer writes the entry's request: a person who finds it missing at the printer may resend
// it. A request written in time is left to bring its answer. Leases, expiry and Prune go by
// the database's clock, and Wait and WithStateChange hear of every process's changes through
// LISTEN/NOTIFY, which OpenPostgres checks at open: behind a pooler in transaction mode, which
// does not carry LISTEN, give [WithListenDSN] the database reached directly. Nothing waits on
// a notification alone: Wait reads its entry every 2 s, and the Outbox's own changes whose
// notification does not come are read back and told within 2 s. A queue belongs to the
// controller of the first client that opens it: a client of another controller is refused
// with a [ControllerError]. [PostgresQueues] lists a database's queues, with their
// controllers and entries by state, and creates nothing.
//
// # Kinds
//
// An [Intent] is a print job ([KindPrintJob], the zero value), a deselect of every job
// ([KindDeselect], the empty printJob body) or a trigger ([KindTrigger], which needs a named
// printer). Entries of every kind share their printer's queue, so "select this job, then
// trigger" goes out in that order.
//
// # Hearing of changes
//
// [WithStateChange] has the owner told of every committed change of an entry, in commit
// order, one call at a time, without polling; [Outbox.Wait] returns once one entry is settled.
//
// # At most once
//
// An entry is committed as [Sending] before its request goes out. The printer's answer then
// makes it [Sent] (2xx), [Rejected] (4xx other than 408 and 429: sending again cannot help),
// [Pending] again (the connection could not be made, or the printer answered 408, 429 or 503:
// the request was not processed), or [Unknown] (every failure after the request may have
// reached the printer: a lost answer, a 500, 502, 504 or other 5xx, a refused redirect). An
// entry found in Sending when the file is opened becomes Unknown: the process died while the
// request was on its way. Unknown entries wait for a person, who checks the
// printer and calls [Outbox.Resend] or [Outbox.Cancel]; nothing leaves Unknown on its own. The
// SDK underneath never resends a printJob or trigger that may have arrived either, so no layer duplicates
// a print.
//
// # Order
//
// The entries of one printer go out one at a time, in enqueue order. An entry waiting for its
// printer after a failure holds back the later entries of that printer, while other printers
// go on; an Unknown entry holds back nothing. A Pending entry older than its ExpireAfter
// (counted from Enqueue) becomes [Expired] and is never sent.
//
// # IDs
//
// An ID is the caller's key for one intent. Enqueue of an ID the outbox holds for the same
// printer and kind returns the entry held and adds nothing; for another printer or kind it
// adds nothing and returns [ErrIDConflict].
//
// # Audit
//
// Entries in final states (Sent, Rejected, Expired, Cancelled) stay in the file, with the
// printer's answer or the last error, until [Outbox.Prune] removes them. Prune keeps their
// IDs, so a sender that repeats one gets [ErrPruned] and nothing is printed again, until
// [Outbox.ForgetIDs] lets go of them.
package outbox
