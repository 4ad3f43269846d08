package outbox

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/ctlurl"
)

// A queue in PostgreSQL belongs to one controller: its entries name printers by their names
// there, so a Run with a client for another controller would deliver them to the wrong
// printers and report them sent. The queue records the controller URL of the first client
// that opens it (normalised, without credentials), and OpenPostgres refuses a client for
// another one. An Outbox opened without a client (to inspect or fill the queue) neither
// records nor checks. A queue made before the URLs were recorded takes the URL of the first
// client that opens it.

// pgQueuesSchema is the table of the queues' controllers. It is created on its own, at the
// first open with a client, so that tables made before it gain it without a new version.
const pgQueuesSchema = `
CREATE TABLE IF NOT EXISTS labelprinter_outbox_queues (
	queue text PRIMARY KEY,
	controller text NOT NULL,
	recorded timestamptz NOT NULL DEFAULT now()
);
`

// ControllerError is OpenPostgres's error for a client of another controller than the one
// the queue belongs to: nothing was sent. It is a labelprinter.ErrInvalidArgument.
type ControllerError struct {
	// Queue is the queue's name.
	Queue string
	// Recorded is the controller URL the queue belongs to, normalised and without credentials.
	Recorded string
	// Given is the controller URL of the client that was refused, in the same form.
	Given string
}

func (e *ControllerError) Error() string {
	return fmt.Sprintf("outbox: queue %q belongs to the controller %s, and this client is for %s: its entries name printers of %s, so they are not delivered to %s; open the queue with a client for %s, or use another queue",
		e.Queue, e.Recorded, e.Given, e.Recorded, e.Given, e.Recorded)
}

// Is makes a ControllerError a labelprinter.ErrInvalidArgument.
func (e *ControllerError) Is(target error) bool { return target == labelprinter.ErrInvalidArgument }

// bindController records c's controller as the queue's when the queue has none, and refuses c
// when the queue belongs to another controller.
func (s *pgStore) bindController(ctx context.Context, c *labelprinter.Client) error {
	if c == nil {
		return nil
	}
	given := ctlurl.OfBase(c.BaseURL())
	var recorded string
	err := pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		// The lock the outbox tables are made under: two opens at once do not race the DDL.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286135)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pgQueuesSchema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO labelprinter_outbox_queues (queue, controller) VALUES ($1, $2)
			ON CONFLICT DO NOTHING`, s.queue, given); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT controller FROM labelprinter_outbox_queues WHERE queue = $1`, s.queue).Scan(&recorded)
	})
	if err != nil {
		return s.fail("recording the queue's controller", err)
	}
	if recorded != given {
		return &ControllerError{Queue: s.queue, Recorded: recorded, Given: given}
	}
	return nil
}
