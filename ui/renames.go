package ui

// The old exported names, kept while ui/large.go, ui/mask.go and their
// tests are being changed on other branches; they go with the last of
// those changes.
type (
	Window  = window
	Options = options
)

const (
	ViewAfter      = viewAfter
	ViewDifference = viewDifference
)
