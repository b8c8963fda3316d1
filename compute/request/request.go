// Package request marks the errors that are the request's, not the run's:
// what was asked (a flag's value, a band role no file gives, a grid, a
// backend for a model) cannot be done as asked, and asking again otherwise
// will do. The engine returns them where it checks what it is asked
// (compute/source, compute/grid, compute/stack), the faces make their own
// for their flags, and both tell them from a failed run: the command line
// exits 2 on one (1 on a failed run), the window says it beside the field
// at fault.
package request

import "fmt"

// Error is an error of the request: Msg says, in one line, what was asked
// and why it cannot be done.
type Error struct{ Msg string }

func (e Error) Error() string { return e.Msg }

// Errorf formats an Error.
func Errorf(format string, a ...any) error { return Error{fmt.Sprintf(format, a...)} }
