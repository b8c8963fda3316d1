package geo

// #include <stdlib.h>
// #include <proj.h>
import "C"

import (
	"os"
	"path/filepath"
	"unsafe"
)

// On Windows PROJ has no system folder holding proj.db: the portable zip
// puts it in a folder "proj" beside canopy.exe. Unless PROJ_DATA (or the
// older PROJ_LIB) says otherwise, that folder becomes the search path of
// PROJ's default context, before any context is made (go-proj uses the
// default one; the contexts of crs.go copy it).
func init() {
	if os.Getenv("PROJ_DATA") != "" || os.Getenv("PROJ_LIB") != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	dir := filepath.Join(filepath.Dir(exe), "proj")
	if _, err := os.Stat(filepath.Join(dir, "proj.db")); err != nil {
		return
	}
	cs := C.CString(dir)
	defer C.free(unsafe.Pointer(cs))
	paths := [1]*C.char{cs}
	C.proj_context_set_search_paths(nil, 1, &paths[0])
}
