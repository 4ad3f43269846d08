package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/secretfile"
	"github.com/labelprinter/go-labelprinter/outbox"
	"github.com/spf13/cobra"
)

// outboxCommand is "labelctl outbox": print intents kept in a local file until the printer has
// them, sent at most once, with the doubtful ones left for an operator to settle.
func (a *app) outboxCommand() *cobra.Command {
	var db, queueName, listenDB, passwordFile string
	// dsn and listenDSN are --db and --listen-db as connected to: with the password of
	// --db-password-file, which no message shows.
	var dsn, listenDSN string
	cmd := &cobra.Command{
		Use:   "outbox",
		Short: "Queue print jobs in a local file and deliver them at most once (see Unknown ones with list)",
		Long: "The outbox keeps print jobs in a file (--db) until the printer has them. 'run' delivers\n" +
			"them; a job whose fate is unclear (the answer was lost, the process died while sending)\n" +
			"becomes unknown and waits: check the printer, then 'resend' or 'cancel' it.\n" +
			"With --db postgres://... the outbox is the queue --queue-name in that PostgreSQL database,\n" +
			"which any number of 'run's and 'enqueue's, on any number of machines, may use at once.",
	}
	cmd.PersistentFlags().StringVar(&db, "db", a.env("LABELPRINTER_OUTBOX"), "outbox file, or a PostgreSQL database: postgres://... or host=... dbname=... (env LABELPRINTER_OUTBOX)")
	cmd.PersistentFlags().StringVar(&queueName, "queue-name", "default", "the queue in the PostgreSQL database of --db postgres://...")
	cmd.PersistentFlags().StringVar(&passwordFile, "db-password-file", a.env("LABELPRINTER_OUTBOX_PASSWORD_FILE"), "the PostgreSQL password of --db (and --listen-db), read from this file less one trailing newline, as the bridge's password_file (env LABELPRINTER_OUTBOX_PASSWORD_FILE)")
	cmd.PersistentFlags().StringVar(&listenDB, "listen-db", "", "with a --db through a pooler in transaction mode (PgBouncer), the same database reached directly: postgres://... for the notifications")

	// open opens the outbox named by --db; with a client for run. Only enqueue creates the
	// file, and only enqueue --create a queue in PostgreSQL: for every other command a missing
	// file or queue is a typo, and an empty outbox made from it would answer "nothing here"
	// about the wrong one.
	checkDB := func(create bool) error {
		if db == "" {
			return usagef("no outbox file: give --db or set LABELPRINTER_OUTBOX")
		}
		if !isPostgres(db) && cmd.PersistentFlags().Changed("queue-name") {
			return usagef("--queue-name names a queue in PostgreSQL; --db %s is a file", db)
		}
		if listenDB != "" && !isPostgres(db) {
			return usagef("--listen-db is for a queue in PostgreSQL; --db %s is a file", db)
		}
		if listenDB != "" && !isPostgres(listenDB) {
			return usagef("--listen-db must be a PostgreSQL database: postgres://... or host=... dbname=...")
		}
		dsn, listenDSN = db, listenDB
		// Set in the environment, the password file is for the databases and left alone beside
		// an outbox file; given as a flag there, it is a mistake.
		if passwordFile != "" && !isPostgres(db) && cmd.PersistentFlags().Changed("db-password-file") {
			return usagef("--db-password-file is the password of a PostgreSQL --db; --db %s is a file", db)
		}
		if passwordFile != "" && isPostgres(db) {
			for _, f := range []struct{ flag, dsn string }{{"--db", db}, {"--listen-db", listenDB}} {
				if secretfile.DSNHasPassword(f.dsn) {
					return usagef("%s holds a password and --db-password-file is given: keep the password in one place (the file)", f.flag)
				}
			}
			pw, err := secretfile.Read(passwordFile)
			if err != nil {
				return usagef("--db-password-file: %v", err)
			}
			dsn = secretfile.WithPassword(db, string(pw))
			if listenDB != "" {
				listenDSN = secretfile.WithPassword(listenDB, string(pw))
			}
		}
		if isPostgres(db) {
			return nil // the queue's tables are made on first use: there is no file to mistype
		}
		if !create {
			if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("outbox file %s does not exist (check --db or LABELPRINTER_OUTBOX); 'labelctl outbox enqueue' creates it", db)
			}
		}
		return nil
	}
	open := func(ctx context.Context, create bool, c *labelprinter.Client, opts ...outbox.Option) (*outbox.Outbox, error) {
		if err := checkDB(create); err != nil {
			return nil, err
		}
		if isPostgres(db) {
			if listenDB != "" {
				opts = append(opts, outbox.WithListenDSN(listenDSN))
			}
			if !create {
				if err := queueExists(ctx, dsn, db, queueName); err != nil {
					return nil, err
				}
			}
			ob, err := outbox.OpenPostgres(ctx, dsn, queueName, c, opts...)
			if errors.Is(err, outbox.ErrNoNotifications) {
				if listenDB != "" {
					return nil, reworded(err, "%s: no notification comes back through --listen-db: it must reach the database directly, not through a pooler in transaction mode", outboxName(db, queueName))
				}
				return nil, reworded(err, "%s: no notification comes back: --db likely goes through a pooler in transaction mode (PgBouncer), which does not carry LISTEN; "+
					"give --listen-db the same database reached directly", outboxName(db, queueName))
			}
			return ob, outboxError("open", "", outboxName(db, queueName), err)
		}
		ob, err := outbox.Open(db, c, opts...)
		return ob, outboxError("open", "", outboxName(db, queueName), err)
	}
	// with runs f on the outbox, closing it afterwards.
	with := func(ctx context.Context, create bool, f func(ob *outbox.Outbox) error) error {
		ob, err := open(ctx, create, nil)
		if err != nil {
			return err
		}
		err = f(ob)
		if cerr := ob.Close(); err == nil {
			err = cerr
		}
		return err
	}

	var (
		jf                             jobFlags
		id                             string
		expireAfter                    time.Duration
		createQueue, trigger, deselect bool
	)
	enqueue := &cobra.Command{
		Use: "enqueue", Short: "Add a print job, a trigger or a deselect for --printer to the outbox (the same --id twice adds it once)", Args: exactArgs(0, "flags only"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			kind, j, err := enqueueKind(cmd.Flags(), &jf, trigger, deselect, a.printer)
			if err != nil {
				return err
			}
			if createQueue && !isPostgres(db) {
				return usagef("--create makes a queue in PostgreSQL; --db %s is a file, which enqueue creates anyway", db)
			}
			return with(cmd.Context(), createQueue || !isPostgres(db), func(ob *outbox.Outbox) error {
				_, known := ob.Get(id)
				e, err := ob.Enqueue(cmd.Context(), outbox.Intent{ID: id, Printer: a.printer, Job: j, ExpireAfter: expireAfter, Kind: kind})
				if errors.Is(err, outbox.ErrIDConflict) {
					return idConflict(ob, id, a.printer, kind)
				}
				if err != nil {
					return outboxError("enqueue", id, outboxName(db, queueName), err)
				}
				switch {
				case a.output == "json":
					return a.printJSON(entryView(e))
				case id != "" && known == nil:
					_, err = fmt.Fprintf(a.stdout, "%s is already in the outbox (%s); nothing added\n", e.ID, e.State)
				default:
					what := ""
					if e.Kind != outbox.KindPrintJob {
						what = " (" + e.Kind.String() + ")"
					}
					_, err = fmt.Fprintf(a.stdout, "enqueued %s%s for %s\n", e.ID, what, printerName(e.Printer))
				}
				return err
			})
		},
	}
	f := enqueue.Flags()
	f.StringVar(&id, "id", "", "the order's own key; empty generates one")
	f.DurationVar(&expireAfter, "expire-after", 24*time.Hour, "never send it after this long")
	f.BoolVar(&createQueue, "create", false, "with --db postgres://..., make the queue --queue-name if it does not exist (every other command refuses a queue that does not)")
	f.BoolVar(&trigger, "trigger", false, "enqueue one trigger of --printer (one print of its selected job) instead of a print job")
	f.BoolVar(&deselect, "deselect", false, "enqueue a deselect of every job on --printer instead of a print job")
	jf.declare(f)

	var states string
	list := &cobra.Command{
		Use: "list", Short: "List the entries: state, printer, attempts, age and last error", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			want, err := parseStates(states)
			if err != nil {
				return err
			}
			return with(cmd.Context(), false, func(ob *outbox.Outbox) error {
				entries, err := ob.List(want...)
				if err != nil {
					if errors.Is(err, labelprinter.ErrInvalidArgument) {
						return usagef("--state: %v", err)
					}
					return err
				}
				return a.printEntries(entries, time.Now())
			})
		},
	}
	list.Flags().StringVar(&states, "state", "", "only these states, comma-separated (pending,sending,sent,rejected,unknown,expired,cancelled)")

	get := &cobra.Command{
		Use: "get ID", Short: "Show one entry as JSON, with its job and the printer's answer", Args: exactArgs(1, "an entry ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return with(cmd.Context(), false, func(ob *outbox.Outbox) error {
				e, err := ob.Get(args[0])
				if err != nil {
					return bridgeKeyHint(ob, args[0], outboxError("get", args[0], outboxName(db, queueName), err))
				}
				return a.printJSON(entryView(e))
			})
		},
	}
	cancel := &cobra.Command{
		Use: "cancel ID", Short: "Never send a pending entry, or drop an unknown one", Args: exactArgs(1, "an entry ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return with(cmd.Context(), false, func(ob *outbox.Outbox) error {
				if err := ob.Cancel(args[0]); err != nil {
					return bridgeKeyHint(ob, args[0], outboxError("cancel", args[0], outboxName(db, queueName), err))
				}
				return a.done("cancelled %s", args[0])
			})
		},
	}
	resend := &cobra.Command{
		Use: "resend ID", Short: "Send an unknown entry again, after checking it did not print", Args: exactArgs(1, "an entry ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return with(cmd.Context(), false, func(ob *outbox.Outbox) error {
				if err := ob.Resend(args[0]); err != nil {
					return bridgeKeyHint(ob, args[0], outboxError("resend", args[0], outboxName(db, queueName), err))
				}
				return a.done("%s is pending again; 'run' sends it", args[0])
			})
		},
	}
	var olderThan time.Duration
	prune := &cobra.Command{
		Use: "prune", Short: "Remove sent, rejected, expired and cancelled entries older than --older-than", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan < 0 {
				return usagef("--older-than must not be negative")
			}
			return with(cmd.Context(), false, func(ob *outbox.Outbox) error {
				n, err := ob.Prune(olderThan)
				if err != nil {
					return err
				}
				return a.done("removed %d entries", n)
			})
		},
	}
	prune.Flags().DurationVar(&olderThan, "older-than", 7*24*time.Hour, "keep entries changed more recently than this")

	var (
		retry time.Duration
		drain bool
	)
	run := &cobra.Command{
		Use:   "run",
		Short: "Deliver the outbox to the printer at --url until Ctrl-C (or, with --drain, until nothing is due), a line per change",
		Long: "run sends the outbox's pending entries, a line per change of state. With --drain it sends\n" +
			"what is due, waits for what is in flight and exits, with a line per state: exit 0 when\n" +
			"nothing is left pending and this run made nothing unknown or rejected, 1 otherwise.",
		Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if retry <= 0 {
				return usagef("--retry must be positive")
			}
			if err := checkDB(false); err != nil { // before the printer: a typo is said first
				return err
			}
			c, err := a.connect()
			if err != nil {
				return err
			}
			var h slog.Handler = &changeHandler{w: a.stdout}
			if a.output == "json" {
				h = slog.NewJSONHandler(a.stdout, nil)
			}
			var tally drainTally
			if drain { // a run without end would keep every ID it ever saw
				h = &tallyHandler{Handler: h, tally: &tally}
			}
			opts := []outbox.Option{outbox.WithLogger(slog.New(h)), outbox.WithRetryInterval(retry)}
			ob, err := open(cmd.Context(), false, c, opts...)
			if err != nil {
				return err
			}
			if a.output != "json" {
				until := "Ctrl-C to stop"
				if drain {
					until = "until nothing is due"
				}
				fmt.Fprintf(a.stdout, "delivering %s to %s; %s\n", outboxName(db, queueName), c.BaseURL(), until)
			}
			if !drain {
				err = ob.Run(cmd.Context())
				if cerr := ob.Close(); err == nil {
					err = cerr
				}
				if err == nil && a.output != "json" {
					fmt.Fprintln(a.stdout, "stopped")
				}
				return err
			}
			err = ob.Drain(cmd.Context())
			var left []outbox.Entry
			if err == nil {
				left, err = ob.List(outbox.Pending)
			}
			if cerr := ob.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			return a.drainSummary(&tally, left)
		},
	}
	run.Flags().DurationVar(&retry, "retry", time.Second, "first wait before sending again to a printer that was not reachable (doubles up to 1m)")
	run.Flags().BoolVar(&drain, "drain", false, "send what is due, wait for what is in flight, then exit (1 if anything is left pending or became unknown or rejected)")

	queues := &cobra.Command{
		Use: "queues", Short: "List the queues of the PostgreSQL database --db: name, controller and entries by state", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkDB(false); err != nil {
				return err
			}
			if !isPostgres(db) {
				return usagef("queues lists the queues of a PostgreSQL database; --db %s is a file, which holds one outbox", db)
			}
			if cmd.Flags().Changed("queue-name") {
				return usagef("queues lists every queue; --queue-name is for the other commands")
			}
			qs, err := outbox.PostgresQueues(cmd.Context(), dsn)
			if err != nil {
				return outboxError("list the queues of", "", outboxName(db, queueName), err)
			}
			return a.printQueues(qs)
		},
	}

	cmd.AddCommand(enqueue, list, get, cancel, resend, prune, run, queues)
	return cmd
}

// isPostgres reports whether --db names a PostgreSQL database rather than a file: a URL, or
// a keyword/value connection string.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") || isKeywordDSN(db)
}

// outboxName is the outbox as run names it: the file, or the queue and the database without
// its password.
func outboxName(db, queue string) string {
	if !isPostgres(db) {
		return db
	}
	if isKeywordDSN(db) {
		return fmt.Sprintf("queue %q of %s", queue, redactKeywordDSN(db))
	}
	if u, err := url.Parse(db); err == nil {
		q := u.Query()
		for k := range q {
			if strings.Contains(strings.ToLower(k), "password") {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return fmt.Sprintf("queue %q of %s", queue, u.Redacted())
	}
	return fmt.Sprintf("queue %q", queue)
}

// drainTally keeps the last state of every entry this run changed, as the outbox logs its own
// changes, each after its commit: the same on a file and on a queue in PostgreSQL, where
// other processes' changes are not this run's, and whatever notifications the database
// delivers.
type drainTally struct {
	mu    sync.Mutex
	order []string
	last  map[string]outbox.State
}

// tallyHandler passes the outbox's log on and notes each change of state in the tally.
type tallyHandler struct {
	slog.Handler
	tally *drainTally
}

func (h *tallyHandler) Handle(ctx context.Context, r slog.Record) error {
	var id, state string
	r.Attrs(func(at slog.Attr) bool {
		switch at.Key {
		case "id":
			id = at.Value.String()
		case "state":
			state = at.Value.String()
		}
		return true
	})
	if id != "" && state != "" && r.Message == "outbox: "+state {
		h.tally.add(id, outbox.State(state))
	}
	return h.Handler.Handle(ctx, r)
}

func (d *drainTally) add(id string, s outbox.State) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[string]outbox.State{}
	}
	if _, seen := d.last[id]; !seen {
		d.order = append(d.order, id)
	}
	d.last[id] = s
}

// drainSummary prints a line per state and fails (exit 1) when anything is left pending or
// this run made an entry unknown or rejected.
func (a *app) drainSummary(d *drainTally, left []outbox.Entry) error {
	d.mu.Lock()
	byState := map[outbox.State][]string{}
	for _, id := range d.order {
		if s := d.last[id]; s != outbox.Pending {
			byState[s] = append(byState[s], id)
		}
	}
	d.mu.Unlock()
	for _, e := range left {
		byState[outbox.Pending] = append(byState[outbox.Pending], e.ID)
	}
	states := []outbox.State{outbox.Sent, outbox.Rejected, outbox.Unknown, outbox.Expired, outbox.Pending}
	if a.output == "json" {
		out := map[string][]string{}
		for _, s := range states {
			out[string(s)] = append([]string{}, byState[s]...)
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		notes := map[outbox.State]string{
			outbox.Sent: "by this run", outbox.Rejected: "by this run", outbox.Unknown: "by this run: check the printer, then resend or cancel",
			outbox.Expired: "by this run", outbox.Pending: "left for the next run",
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		for _, s := range states {
			ids := byState[s]
			line := fmt.Sprintf("%s\t%d\t%s", s, len(ids), notes[s])
			if len(ids) > 0 && s != outbox.Sent {
				shown := ids[:min(len(ids), 10)]
				line += ": " + strings.Join(shown, " ")
				if len(ids) > len(shown) {
					line += fmt.Sprintf(" and %d more", len(ids)-len(shown))
				}
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var bad []string
	for _, s := range []outbox.State{outbox.Pending, outbox.Unknown, outbox.Rejected} {
		if n := len(byState[s]); n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("outbox not drained cleanly: %s", strings.Join(bad, ", "))
	}
	return nil
}

// entryJSON is an entry as labelctl prints it: the job as the body that is sent, durations
// as text.
type entryJSON struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`
	Printer     string          `json:"printer"`
	State       outbox.State    `json:"state"`
	Attempts    int             `json:"attempts"`
	Enqueued    time.Time       `json:"enqueued"`
	Updated     time.Time       `json:"updated"`
	ExpireAfter string          `json:"expireAfter"`
	Error       string          `json:"error,omitempty"`
	Job         json.RawMessage `json:"job,omitempty"` // the body sent, for a print job
	Response    json.RawMessage `json:"response,omitempty"`
}

func entryView(e outbox.Entry) entryJSON {
	var body json.RawMessage
	if e.Kind == outbox.KindPrintJob {
		var err error
		if body, err = e.Job.MarshalJSON(); err != nil {
			body, _ = json.Marshal(err.Error())
		}
	}
	return entryJSON{
		ID: e.ID, Kind: e.Kind.String(), Printer: e.Printer, State: e.State, Attempts: e.Attempts,
		Enqueued: e.Enqueued, Updated: e.Updated, ExpireAfter: e.ExpireAfter.String(),
		Error: e.Error, Job: body, Response: e.Response,
	}
}

func (a *app) printEntries(entries []outbox.Entry, now time.Time) error {
	if a.output == "json" {
		out := make([]entryJSON, len(entries))
		for i, e := range entries {
			out[i] = entryView(e)
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tPRINTER\tATTEMPTS\tAGE\tERROR")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.ID, e.Kind, e.State, printerName(e.Printer), e.Attempts, age(now.Sub(e.Enqueued)), oneLine(e.Error))
	}
	return tw.Flush()
}

// printerName shows the single-printer path as "-".
func printerName(p string) string {
	if p == "" {
		return "-"
	}
	return p
}

// age is coarse on purpose: an operator needs "minutes or days", and a listing that does not
// change every second can be compared.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// changeHandler prints the outbox's state changes one per line:
// "15:04:05 order-1 sent printer=line1 attempts=1 error=...". It shows info and above, so the
// Sending step (debug) stays out of the way.
type changeHandler struct {
	mu sync.Mutex
	w  io.Writer
}

func (h *changeHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *changeHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *changeHandler) WithGroup(string) slog.Handler                { return h }

func (h *changeHandler) Handle(_ context.Context, r slog.Record) error {
	var id, state, printer, errText string
	var attempts int64
	r.Attrs(func(at slog.Attr) bool {
		switch at.Key {
		case "id":
			id = at.Value.String()
		case "state":
			state = at.Value.String()
		case "printer":
			printer = at.Value.String()
		case "attempts":
			attempts = at.Value.Int64()
		case "error":
			errText = at.Value.String()
		}
		return true
	})
	line := fmt.Sprintf("%s %s %s printer=%s attempts=%d", r.Time.Format(time.TimeOnly), id, state, printerName(printer), attempts)
	if errText != "" {
		line += " error=" + oneLine(errText)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintln(h.w, line)
	return err
}

// idConflict is enqueue's one line for an --id the outbox holds for another printer or kind.
func idConflict(ob *outbox.Outbox, id, printer string, kind outbox.Kind) error {
	held, err := ob.Get(id)
	if err != nil {
		return fmt.Errorf("--id %s is already in the outbox for another printer or kind; nothing added", id)
	}
	where := func(p string) string {
		if p == "" {
			return "the single-printer paths"
		}
		return "printer " + p
	}
	if held.Printer == printer {
		return fmt.Errorf("--id %s is already in the outbox as a %s for %s (%s), not a %s; nothing added: one id is one order",
			id, held.Kind, where(held.Printer), held.State, kind)
	}
	return fmt.Errorf("--id %s is already in the outbox for %s (%s %s), not for %s; nothing added: one id is one order",
		id, where(held.Printer), held.Kind, held.State, where(printer))
}
