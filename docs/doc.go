// Package docs holds the check that keeps docs/ARCHITECTURE.md's package
// table true: the table is generated from `go list` (each package's path,
// the first sentence of its doc comment and the project packages it
// imports), and its test fails, with the difference, when the committed
// table is not what the code says.
//
// After adding, removing or re-documenting a package, rewrite the table with
// `go generate ./docs` (or `go test ./docs -run TestArchitectureTable -update`).
package docs

//go:generate go test -run TestArchitectureTable -update .
