package geotiff

import "strings"

func contains(err error, s string) bool { return strings.Contains(err.Error(), s) }
