//go:build !windows

package usererr

// windowsWords is Windows' part of explainOS: nothing elsewhere.
func windowsWords(error, string, bool) string { return "" }
