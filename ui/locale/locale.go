// Package locale gives the process a locale Fyne can parse before Fyne's
// own initialisation reads it: under LANG=C or POSIX (containers, CI, cron)
// Fyne logs "Error parsing user locale C" on every start, even for the
// command line. Importing this package (it has no dependencies, so it is
// initialised before fyne.io's packages) maps such values to en_US.UTF-8
// for this process only.
package locale

import (
	"os"
	"strings"
)

func init() {
	for _, k := range []string{"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"} {
		v := os.Getenv(k)
		base, _, _ := strings.Cut(v, ".")
		if base == "C" || base == "POSIX" {
			os.Setenv(k, "en_US.UTF-8")
		}
	}
	if os.Getenv("LANG") == "" && os.Getenv("LC_ALL") == "" && os.Getenv("LC_MESSAGES") == "" && os.Getenv("LANGUAGE") == "" {
		os.Setenv("LANG", "en_US.UTF-8")
	}
}
