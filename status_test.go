package labelprinter_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestStatusEveryState reads each of the maker's states, and one no printer documents, over
// HTTP from the simulator.
func TestStatusEveryState(t *testing.T) {
	srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("line1", "line2")})
	printable := map[labelprinter.PrinterState]bool{labelprinter.StateHeating: true, labelprinter.StateStarted: true}
	states := []labelprinter.PrinterState{
		labelprinter.StateInitializing, labelprinter.StateStopped, labelprinter.StateStandby,
		labelprinter.StateStarting, labelprinter.StateHeating, labelprinter.StateStarted,
		labelprinter.StateMaintenance, labelprinter.StateStopping, labelprinter.StateError,
		labelprinter.StateOther, "WARP_DRIVE",
	}
	for i, state := range states {
		rag := []labelprinter.RAGStatus{labelprinter.RAGRed, labelprinter.RAGAmber, labelprinter.RAGGreen, "BLUE"}[i%4]
		var errs []string
		if state == labelprinter.StateError {
			errs = []string{"lid open", "head cold"}
		}
		srv.Sim.SetStatus(string(state), string(rag), errs...)
		st, err := c.Printers.Status(t.Context())
		must(t, err)
		if st.State != state || st.RAGStatus != rag || st.State.Printable() != printable[state] {
			t.Errorf("%s: got state %q rag %q printable %v", state, st.State, st.RAGStatus, st.State.Printable())
		}
		if len(errs) == 0 && (st.Errors == nil || len(st.Errors) != 0) || len(errs) > 0 && !slices.Equal(st.Errors, errs) {
			t.Errorf("%s: errors %#v, want %#v", state, st.Errors, errs)
		}
		if len(st.Ink) != 1 || st.Ink[0].Level != labelprinter.InkOK || st.Ink[0].RAGStatus != labelprinter.RAGGreen || st.Ink[0].State != "STARTED" {
			t.Errorf("%s: ink %+v", state, st.Ink)
		}
		// Fields the SDK does not type stay in Raw.
		if !strings.Contains(string(st.Raw), `"printers":["line1","line2"]`) || !strings.Contains(string(st.Raw), string(state)) {
			t.Errorf("%s: raw %s", state, st.Raw)
		}
	}
}

// TestStatusEmptyBody: an empty answer is a *DecodeError, not a zero status.
func TestStatusEmptyBody(t *testing.T) {
	for _, body := range []string{"", "  \n", "null", `{"state":3}`, `[1]`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) }))
		c, err := labelprinter.NewClient(srv.URL)
		must(t, err)
		st, err := c.Printers.Status(t.Context())
		_ = c.Close()
		srv.Close()
		var de *labelprinter.DecodeError
		if !errors.As(err, &de) || st != nil || de.What != "PrinterStatus" {
			t.Errorf("body %q: %v, %v", body, st, err)
		}
	}
}
