package mqttbridge

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/labelprinter/go-labelprinter/internal/suggest"
)

// untypedJobAttributes are the attributes the maker documents for a print job that PrintJob
// has no field for: they go to PrintJob.Extra as sent. repeatPrint is named in the maker's
// table without a type or meaning.
var untypedJobAttributes = []string{"repeatPrint"}

// jobAttributes are the names a "job" member may have: PrintJob's fields (jobFields) and
// untypedJobAttributes, spelled exactly. Anything else is a typo or an attribute the maker
// does not document, and riding along unseen it could leave out what the person meant: a
// misspelt "copies" prints on every trigger until the job is deselected.
var jobAttributes = func() []string {
	names := append([]string(nil), untypedJobAttributes...)
	for k := range jobFields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}()

// checkJobAttributes refuses the first member of a job, in sorted order, that is not one of
// jobAttributes, naming it and the closest known one.
func checkJobAttributes(members []string) error {
	sort.Strings(members)
	for _, k := range members {
		if _, ok := jobFields[k]; ok {
			continue
		}
		known := false
		for _, u := range untypedJobAttributes {
			known = known || k == u
		}
		if known {
			continue
		}
		msg := fmt.Sprintf("%q: not an attribute of a print job", clip(k))
		if s := suggest.Closest(k, jobAttributes); s != "" {
			msg += "; did you mean " + strconv.Quote(s) + "?"
		}
		return invalidf("%s", msg)
	}
	return nil
}
