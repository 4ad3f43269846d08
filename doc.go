// Package labelprinter is a client for the HTTP control service (API v3) of an industrial label
// printer: labels, images, tables, print counters and history, and print control.
//
// # Quick start
//
//	c, err := labelprinter.NewClient("http://printer") // requests go to http://printer/api/v3/...
//	if err != nil { ... }
//	defer c.Close()
//	counters, err := c.Printers.Counters(ctx, "line1")
//
// The Client has one sub-object per part of the contract: [Client.Labels], [Client.Images],
// [Client.Tables] and [Client.Printers]. Every method takes a context first; the context bounds
// the whole call, retries and waits included. Names of labels, images, tables and printers
// become exactly one escaped path segment: "a/b" is sent as "a%2Fb". Empty names, "." and
// "..", and names with control characters are refused before anything is sent. Printer "" is
// the single-printer form where the contract has one (counters, history, printJob; status
// takes no name); trigger, abortPrint and [PrintersService.ConfirmTrigger] need a name.
//
// # What is decoded
//
// The documented responses are typed: [ImageInfo], [PrintCounters], [PrintHistory], and the
// status in the maker's shape, [PrinterStatus], which keeps its whole body in Raw. Bodies the
// contract does not describe (labels, tables, the answers of print control) are
// returned as json.RawMessage, empty when the printer sent no body. A documented struct that
// arrives empty or null is a [*DecodeError] instead, since zero counters would be
// indistinguishable from real ones; so are counters that lack one of the three counters or
// hold null or a non-number there, and a history without time or count or with arrays of
// different lengths. Image info and status stay lenient: the maker's pages are not a contract. JSON is recognised by content, whatever the Content-Type.
// Numbers decode whether the printer writes 3, 3.0 or 3e0, and enum values the SDK does not
// know are kept.
//
// # Errors
//
// A response outside 2xx is an [*APIError] with the status, the request line, the printer's
// message and at most 64 KiB of the body; errors.Is matches it against [ErrNotFound],
// [ErrUnauthorized], [ErrForbidden], [ErrConflict], [ErrRateLimited] and [ErrServer]. Bad input
// wraps [ErrInvalidArgument] and sends nothing. A failure without a response is a
// [*TransportError]; when the request may have reached the printer it matches
// [ErrOutcomeUnknown], as does the *APIError of a printJob or trigger answered 500, 502 or
// 504. Errors name the path that was requested, the base URL's own path included.
//
// APIError.Message is the reason the body gives, whoever wrote it: the "message", "error",
// "detail" or "title" of a JSON body, the <title> of an HTML page (a proxy's error page, such
// as nginx's "400 No required SSL certificate was sent"), the first non-empty line of a text
// body.
//
// No error, no field of one and no log line holds 12 bytes in a row of a credential (all of
// it when it is shorter): the bearer token, the basic-auth password, the value of a
// [WithHeader] header named Authorization, Proxy-Authorization or Cookie or whose name holds
// "auth", "token", "key", "secret", "pass" or "session", and the values given to
// [WithRedactedValues]: credentials that a transport of yours adds, which the Client cannot
// see ([WithRedactedValuesFunc] for those that rotate, asked for when an error is built). A credential a server echoes back is found as written, JSON-escaped, percent-encoded or
// as HTML character references, and the 64 KiB cut of the body is made after it is removed.
// [Client.Redact] applies the same rule to text of yours, such as your transport's own errors.
//
// Memory follows the bytes that arrived: a Content-Length the server declares reserves
// nothing, and JSON bodies are capped by [WithMaxResponseBytes].
//
// # Retries, and what is never retried
//
// GET, PUT, DELETE and abortPrint are retried on connection errors and on 408, 429, 500, 502,
// 503 and 504: four attempts by default, with full-jitter exponential backoff, honouring
// Retry-After up to a cap and never past the context's deadline (see [RetryPolicy]).
// printJob and trigger are retried only when the connection could not be made: once the
// request may have been written, a failure is returned, because a label printed twice costs
// more than an error. No idempotency header is ever sent, since net/http would treat it as
// permission to replay a POST. A POST, PUT or DELETE never follows a redirect, and a GET
// follows one only to the same scheme, host and port.
//
// # Did it print?
//
// Accepted is not printed. [PrintersService.WatchCounters] and [PrintersService.WatchStatus]
// poll once, well: first answer at once, then only changes, back-off while the printer is
// down, and the first answer after failed polls even when nothing changed. A counter reset is
// reported as such, its Delta being the new counters (the labels printed since the restart).
// Counters and histories are complete or a [*DecodeError]: a missing, null or non-number
// counter is never read as zero, so it is a failed poll, not a reset. [PrintersService.WaitPrinted]
// waits until the counters show n labels since a reading. [PrintersService.ConfirmTrigger]
// settles a trigger from the counters around it; it answers [TriggerNotReceived] only when the
// counters did not move and the trigger provably never arrived (no connection, or a 4xx
// answer), and [TriggerUnknown] when it may have arrived: a printer still working after a
// timeout, or a gateway's 502/504, prints later. The counters are per printer, not per job: a
// trigger can be settled only while nothing else triggers that printer (otherwise
// [TriggerUnknown]), and a printJob whose answer was lost cannot be settled at all, since the
// contract gives no way to read a selection back.
//
// # Authentication and TLS
//
// The contract leaves authentication open; printers behind proxies take [WithBearerToken],
// [WithBasicAuth] or [WithHeader]. [WithTLSConfig] adds a CA pool for self-signed printers or
// client certificates. TLS verification is always on unless the caller's own config turns it
// off.
//
// # Logging
//
// The SDK logs nothing unless given a logger with [WithLogger]; then requests and retries are
// logged at debug level, without credentials.
//
// # The rest of the module
//
// Beside the SDK, and never imported by it:
//
//   - Package [github.com/labelprinter/go-labelprinter/printersim] is a printer in memory: the
//     whole contract over real HTTP on loopback, with faults injected on purpose, for tests
//     and demos that need no printer.
//   - Package [github.com/labelprinter/go-labelprinter/label] is the maker's label format 3 as
//     Go types: [LabelsService.Put] takes a *label.Label (any json.Marshaler), and
//     label.Validate names every problem (a missing barHeight, a wrong GTIN check digit) before
//     anything is sent.
//   - Package [github.com/labelprinter/go-labelprinter/outbox] keeps print orders in a local
//     file until the printer has them: they survive a crash, and none is sent twice.
//   - Command labelctl (cmd/labelctl) does every operation from the command line: print, watch,
//     history charts, an outbox for operators, a built-in simulator.
//   - Command printersim (cmd/printersim) runs the simulator on its own.
//   - Command labelprinter-exporter (cmd/labelprinter-exporter) puts every printer on a
//     Prometheus dashboard, probing them as blackbox_exporter does.
//   - Command labelprinter-mqtt (cmd/labelprinter-mqtt) puts the printers on a plant's MQTT
//     broker: status and counters retained, print commands printed at most once through an
//     outbox; package [github.com/labelprinter/go-labelprinter/mqttbridge] runs the same
//     bridge inside a Go service.
//   - The programs under examples/ (quickstart, print-from-table, upload-image,
//     watch-counters, print-and-confirm, history, outbox) each run against a simulator they
//     start in-process, or against a printer given with -url; examples/quickstart only reads a
//     real printer unless told -allow-writes.
//   - examples/systemd holds hardened service units for the exporter and the bridge; the
//     README's "Running as a service or container" section has them and the OCI images.
package labelprinter
