package ui

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"testing"
)

// TestExportsMainOnly: the window is a program, not a library; package
// ui exports Main and nothing else (the widgets it is built from that
// others could use are packages of their own: ui/mapview, ui/swipe).
func TestExportsMainOnly(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var exported []string
	for _, name := range append(pkg.GoFiles, pkg.CgoFiles...) {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					exported = append(exported, filepath.Base(name)+": "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					var names []*ast.Ident
					switch s := s.(type) {
					case *ast.TypeSpec:
						names = []*ast.Ident{s.Name}
					case *ast.ValueSpec:
						names = s.Names
					}
					for _, n := range names {
						if n.IsExported() {
							exported = append(exported, filepath.Base(name)+": "+n.Name)
						}
					}
				}
			}
		}
	}
	sort.Strings(exported)
	if len(exported) != 1 || exported[0] != "main.go: Main" {
		t.Errorf("package ui exports %q, want only Main", exported)
	}
}
