package labelprinter

import (
	"context"
	"encoding/json"
)

// LabelsService manages the labels stored on the printer. The label object's fields are not
// part of the contract, so labels travel as json.RawMessage.
type LabelsService service

// SimulationOptions selects the table row a simulation fills the label from. TableName,
// KeyColumn and Key go together: all three or none.
type SimulationOptions struct {
	// TableName is the table the row is taken from.
	TableName string `url:"tableName,omitempty"`
	// KeyColumn is the column searched for Key.
	KeyColumn string `url:"keyColumn,omitempty"`
	// Key is the value searched in KeyColumn.
	Key string `url:"key,omitempty"`
}

// List returns every label, keyed by name (GET /api/v3/labels).
func (s *LabelsService) List(ctx context.Context) (map[string]json.RawMessage, error) {
	return s.client.doDictionary(ctx, &operation{name: "Labels.List", method: "GET", path: "/labels"})
}

// Get returns the label called name as the printer stored it (GET /api/v3/labels/{name}).
func (s *LabelsService) Get(ctx context.Context, name string) (json.RawMessage, error) {
	const op = "Labels.Get"
	esc, err := escapeName(op, "label", name)
	if err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &operation{name: op, method: "GET", path: "/labels/", seg: esc})
}

// Put creates or replaces the label called name (PUT /api/v3/labels/{name}). A json.RawMessage
// or []byte label is sent verbatim and must be valid JSON; any other value is marshalled: a
// json.Marshaler such as a *label.Label of package
// github.com/labelprinter/go-labelprinter/label (which the SDK does not import), or a map or
// struct. A value that fails to marshal or marshals to null is refused before anything is sent.
func (s *LabelsService) Put(ctx context.Context, name string, label any) error {
	const op = "Labels.Put"
	esc, err := escapeName(op, "label", name)
	if err != nil {
		return err
	}
	body, err := jsonBody(op, label)
	if err != nil {
		return err
	}
	return s.client.doNoContent(ctx, &operation{name: op, method: "PUT", path: "/labels/", seg: esc, body: body, contentType: mediaJSON})
}

// Delete deletes the label called name (DELETE /api/v3/labels/{name}).
func (s *LabelsService) Delete(ctx context.Context, name string) error {
	const op = "Labels.Delete"
	esc, err := escapeName(op, "label", name)
	if err != nil {
		return err
	}
	return s.client.doNoContent(ctx, &operation{name: op, method: "DELETE", path: "/labels/", seg: esc})
}

// Simulate returns the printer's simulation of the label called name, filled from a table row
// when opts names one (GET /api/v3/labels/{name}/simulation). A nil opts simulates without a
// table.
func (s *LabelsService) Simulate(ctx context.Context, name string, opts *SimulationOptions) (json.RawMessage, error) {
	const op = "Labels.Simulate"
	esc, err := escapeName(op, "label", name)
	if err != nil {
		return nil, err
	}
	if opts != nil {
		set := 0
		for _, v := range []string{opts.TableName, opts.KeyColumn, opts.Key} {
			if v != "" {
				set++
			}
		}
		if set != 0 && set != 3 {
			return nil, invalidArg(op, "TableName, KeyColumn and Key go together: set all three or none")
		}
	}
	q, err := encodeQuery(op, opts)
	if err != nil {
		return nil, err
	}
	return s.client.doRaw(ctx, &operation{name: op, method: "GET", path: "/labels/", seg: esc, tail: "/simulation", query: q})
}
