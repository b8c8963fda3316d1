// Command shorttests lists, for each package directory it is given, the
// tests whose behaviour depends on -short: the top-level Test functions
// that reach testing.Short, directly, through the package's own test
// helpers or through a helper package's function. make test runs every
// test once under the race detector with -short (where such tests take
// their lighter form: fewer layouts, a smaller scene) and then only these,
// in full, without it.
//
// usage: go run ./scripts/shorttests [-args] DIR...
//
// It prints one line per directory that has such tests: the directory, a
// tab, and a -run pattern that matches exactly those tests. With -args it
// prints instead, on one line, the arguments of one go test run of them
// all: -run, a pattern that matches every name listed (a name listed in
// one package also runs where another package has a test of that name),
// and the directories; nothing where no directory has such a test.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	args := os.Args[1:]
	asArgs := len(args) > 0 && args[0] == "-args"
	if asArgs {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: shorttests [-args] DIR...")
		os.Exit(2)
	}
	helpers, err := shortHelpers()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shorttests:", err)
		os.Exit(1)
	}
	var names, dirs []string
	for _, dir := range args {
		tests, err := shortTests(dir, helpers)
		if err != nil {
			fmt.Fprintln(os.Stderr, "shorttests:", err)
			os.Exit(1)
		}
		if len(tests) == 0 {
			continue
		}
		if !asArgs {
			fmt.Printf("%s\t^(%s)$\n", dir, strings.Join(tests, "|"))
		}
		names, dirs = append(names, tests...), append(dirs, dir)
	}
	if asArgs && len(dirs) > 0 {
		slices.Sort(names)
		fmt.Printf("-run ^(%s)$ %s\n", strings.Join(slices.Compact(names), "|"), strings.Join(dirs, " "))
	}
}

// shortHelpers returns the exported functions of the module's test
// helper packages (ordinary, non-test files that import testing) that
// reach testing.Short, as "import/path.Func".
func shortHelpers() (map[string]bool, error) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		return nil, fmt.Errorf("run from the module's root: %w", err)
	}
	var modPath string
	for l := range strings.Lines(string(mod)) {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			modPath = f[1]
		}
	}
	out := map[string]bool{}
	// Until nothing is added: a helper may reach testing.Short through
	// another helper package.
	for n := -1; n != len(out); {
		n = len(out)
		err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			files, _ := filepath.Glob(filepath.Join(path, "*.go"))
			files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
			short, err := reachShort(files, out, nil)
			if err != nil {
				return err
			}
			imp := modPath
			if path != "." {
				imp += "/" + filepath.ToSlash(path)
			}
			for fn := range short {
				out[imp+"."+fn] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// shortTests returns the sorted names of dir's Test functions that reach
// testing.Short, in the directory's test files or through a helper
// package's function (helpers).
func shortTests(dir string, helpers map[string]bool) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var tests []string
	short, err := reachShort(files, helpers, &tests)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range tests {
		if short[t] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// reachShort returns the functions of files that reach testing.Short,
// directly, through a helper ("import/path.Func" in helpers) or through
// another function of files. A call is followed by name (functions and
// methods alike; function literals count as their enclosing function),
// which over-approximates: a function is counted when in doubt, never
// left out. The top-level Test functions are appended to tests.
func reachShort(files []string, helpers map[string]bool, tests *[]string) (map[string]bool, error) {
	fset := token.NewFileSet()
	calls := map[string]map[string]bool{} // function -> names it calls
	short := map[string]bool{}            // functions that reach testing.Short
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		imports := map[string]string{} // name in the file -> import path
		for _, im := range af.Imports {
			p := strings.Trim(im.Path.Value, `"`)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if tests != nil && fd.Recv == nil && strings.HasPrefix(name, "Test") && name != "TestMain" {
				*tests = append(*tests, name)
			}
			if calls[name] == nil {
				calls[name] = map[string]bool{}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok {
						if p := imports[id.Name]; p == "testing" && x.Sel.Name == "Short" || helpers[p+"."+x.Sel.Name] {
							short[name] = true
						}
					}
					calls[name][x.Sel.Name] = true
				case *ast.Ident:
					calls[name][x.Name] = true
				}
				return true
			})
		}
	}
	// Close short over the calls: a function that calls one that reaches
	// testing.Short reaches it too.
	for changed := true; changed; {
		changed = false
		for fn, cs := range calls {
			if short[fn] {
				continue
			}
			for c := range cs {
				if short[c] {
					short[fn], changed = true, true
					break
				}
			}
		}
	}
	return short, nil
}
