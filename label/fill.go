package label

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// Fill returns a copy of the label with the dynamic text of every property that may hold it
// (text, colours, apps values) filled by [Expand] from env, read at one moment of env's clock,
// and the codes it could not fill, each a [*Problem] naming its property (joined; nil when
// there is none). The label itself is not changed. Validate the copy to check what will
// print: a GS1 value or a check digit holding dynamic text is checked once filled.
func (l *Label) Fill(env *Env) (*Label, error) {
	return l.fill(env, false)
}

// fill is Fill; lint leaves a code whose value env does not hold unfilled without reporting it.
func (l *Label) fill(env *Env, lint bool) (*Label, error) {
	data, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data) // a deep copy, Extra and unknown objects included
	if err != nil {
		return nil, err
	}
	e := Env{}
	if env != nil {
		e = *env
	}
	now := time.Now()
	if e.Clock != nil {
		now = e.Clock()
	}
	e.Clock = func() time.Time { return now }
	f := filler{env: &e, lint: lint}
	f.props(c, "")
	f.objects(c.Objs, "objs")
	if len(f.errs) == 0 {
		return c, nil
	}
	return c, errors.Join(f.errs...)
}

type filler struct {
	env  *Env
	lint bool
	errs []error
}

// expand fills *s; the property's path, path and name joined, is written only for a
// problem, so that a deep group does not write a long path for every property.
func (f *filler) expand(s *string, path, name string) {
	out, err := Expand(*s, f.env)
	*s = out
	if err == nil {
		return
	}
	at := join(path, name)
	for _, ce := range codeErrors(err) {
		if f.lint && ce.missing {
			continue
		}
		f.errs = append(f.errs, &Problem{Path: at, Msg: ce.Error()})
	}
}

func codeErrors(err error) []*CodeError {
	var out []*CodeError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if ce, ok := e.(*CodeError); ok {
				out = append(out, ce)
			}
		}
	}
	return out
}

func (f *filler) props(p props, path string) {
	fs := p.fields()
	for i := range fs {
		if ptr, ok := fs[i].ptr.(**string); ok && fs[i].dyn && *ptr != nil {
			f.expand(*ptr, path, fs[i].name)
		}
	}
}

func (f *filler) objects(objs []Object, path string) {
	for i, o := range objs {
		at := path + "[" + strconv.Itoa(i) + "]"
		if p, ok := o.(props); ok {
			f.props(p, at)
		}
		switch o := o.(type) {
		case *Group:
			f.objects(o.Children, at+".children")
		case *GS1128:
			f.apps(o.Apps, at)
		case *GS1DataMatrix:
			f.apps(o.Apps, at)
		case *GS1QRCode:
			f.apps(o.Apps, at)
		}
	}
}

func (f *filler) apps(apps []App, at string) {
	for i := range apps {
		f.expand(&apps[i].Value, at, "apps["+strconv.Itoa(i)+"].value")
	}
}
