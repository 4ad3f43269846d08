package suggest

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ParseFlags parses args into fs as fs.Parse does, but says a mistake in one line instead of
// the error followed by every flag's usage: an unknown flag names the closest defined one
// ("unknown flag --lisen (did you mean --listen?)"). -h and --help still print the usage, to
// help, and return flag.ErrHelp. fs's own output is left discarded.
func ParseFlags(fs *flag.FlagSet, args []string, help io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(help)
		fmt.Fprintf(help, "Usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return err
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg := "unknown flag --" + name
		if s := Closest(name, names); s != "" {
			msg += " (did you mean --" + s + "?)"
		}
		return errors.New(msg)
	}
	// Go words the rest in one line already ("invalid value ... for flag -timeout: ..."); the
	// flag is spelt with two dashes, as the usage does.
	return errors.New(strings.Replace(err.Error(), "for flag -", "for flag --", 1))
}
