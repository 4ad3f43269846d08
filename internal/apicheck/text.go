package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"sort"
	"strings"
)

// This file holds the human-readable record, api/PATH.txt: one line per exported identifier,
// field and method, with its type, in the manner of the Go project's api/ files.

// apiTexts returns the record of every public package, read from the export data the go
// command builds for it.
func (m *module) apiTexts() (map[string]string, error) {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, p := range m.pkgs {
		args = append(args, p.path)
	}
	out, err := m.goCmd(args...)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[p] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	texts := map[string]string{}
	for _, p := range m.pkgs {
		tp, err := imp.Import(p.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p.path, err)
		}
		texts[p.path] = apiText(tp)
	}
	return texts, nil
}

// apiText lists pkg's exported API: constants with their values, variables, functions, types
// (a struct's exported fields, an interface's methods) and the exported methods of exported
// types, one sorted line each, "pkg PATH, ...".
func apiText(pkg *types.Package) string {
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Path()
	}
	ts := func(t types.Type) string { return types.TypeString(t, qual) }
	sig := func(s *types.Signature) string { return strings.TrimPrefix(types.TypeString(unnamed(s), qual), "func") }
	var lines []string
	add := func(format string, args ...any) {
		lines = append(lines, "pkg "+pkg.Path()+", "+fmt.Sprintf(format, args...))
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", name, ts(o.Type()), o.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, ts(o.Type()))
		case *types.Func:
			s := o.Type().(*types.Signature)
			add("func %s%s%s", name, typeParams(s.TypeParams(), qual), sig(s))
		case *types.TypeName:
			typeLines(add, o, ts, sig, qual)
		}
	}
	if len(lines) == 0 {
		// A package that exports nothing still says which package it is.
		return "pkg " + pkg.Path() + "\n"
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// typeLines adds the lines of the exported type o.
func typeLines(add func(string, ...any), o *types.TypeName, ts func(types.Type) string, sig func(*types.Signature) string, qual types.Qualifier) {
	name := o.Name()
	if o.IsAlias() {
		add("type %s = %s", name, ts(o.Type()))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		add("type %s %s", name, ts(o.Type()))
		return
	}
	decl := name + typeParams(named.TypeParams(), qual)
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s struct", decl)
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			switch {
			case f.Embedded():
				add("type %s struct, embedded %s", name, ts(f.Type()))
			case f.Exported():
				add("type %s struct, %s %s", name, f.Name(), ts(f.Type()))
			}
		}
	case *types.Interface:
		add("type %s interface", decl)
		for i := 0; i < u.NumEmbeddeds(); i++ {
			add("type %s interface, embedded %s", name, ts(u.EmbeddedType(i)))
		}
		for i := 0; i < u.NumExplicitMethods(); i++ {
			f := u.ExplicitMethod(i)
			if f.Exported() {
				add("type %s interface, %s%s", name, f.Name(), sig(f.Type().(*types.Signature)))
			} else {
				add("type %s interface, unexported methods", name)
			}
		}
	default:
		add("type %s %s", decl, ts(u))
	}
	for i := 0; i < named.NumMethods(); i++ {
		f := named.Method(i)
		if !f.Exported() {
			continue
		}
		s := f.Type().(*types.Signature)
		recv := name
		if _, ptr := s.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + name
		}
		add("method (%s) %s%s", recv, f.Name(), sig(s))
	}
}

// typeParams writes a type parameter list, [T any, K comparable], or "" when there is none.
func typeParams(l *types.TypeParamList, qual types.Qualifier) string {
	if l.Len() == 0 {
		return ""
	}
	var parts []string
	for i := 0; i < l.Len(); i++ {
		tp := l.At(i)
		parts = append(parts, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), qual))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// unnamed is s without the names of its parameters and results, which callers do not see: a
// renamed parameter changes no line.
func unnamed(s *types.Signature) *types.Signature {
	strip := func(t *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, t.Len())
		for i := range vars {
			vars[i] = types.NewParam(token.NoPos, nil, "", t.At(i).Type())
		}
		return types.NewTuple(vars...)
	}
	return types.NewSignatureType(nil, nil, nil, strip(s.Params()), strip(s.Results()), s.Variadic())
}
