package labelprinter

import (
	"context"
	"encoding/json"
)

// TablesService manages the data tables labels are selected and filled from. The table object's
// shape is not part of the contract, so tables travel as json.RawMessage.
type TablesService service

// List returns every table, keyed by name (GET /api/v3/tables).
func (s *TablesService) List(ctx context.Context) (map[string]json.RawMessage, error) {
	return s.client.doDictionary(ctx, &operation{name: "Tables.List", method: "GET", path: "/tables"})
}

// Get returns the table called name as the printer stored it (GET /api/v3/tables/{name}).
func (s *TablesService) Get(ctx context.Context, name string) (json.RawMessage, error) {
	const op = "Tables.Get"
	esc, err := escapeName(op, "table", name)
	if err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &operation{name: op, method: "GET", path: "/tables/", seg: esc})
}

// Put creates or replaces the table called name (PUT /api/v3/tables/{name}). A json.RawMessage
// or []byte table is sent verbatim and must be valid JSON; any other value is marshalled.
func (s *TablesService) Put(ctx context.Context, name string, table any) error {
	const op = "Tables.Put"
	esc, err := escapeName(op, "table", name)
	if err != nil {
		return err
	}
	body, err := jsonBody(op, table)
	if err != nil {
		return err
	}
	return s.client.doNoContent(ctx, &operation{name: op, method: "PUT", path: "/tables/", seg: esc, body: body, contentType: mediaJSON})
}

// Delete deletes the table called name (DELETE /api/v3/tables/{name}).
func (s *TablesService) Delete(ctx context.Context, name string) error {
	const op = "Tables.Delete"
	esc, err := escapeName(op, "table", name)
	if err != nil {
		return err
	}
	return s.client.doNoContent(ctx, &operation{name: op, method: "DELETE", path: "/tables/", seg: esc})
}
