package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"canopy/compute/scene"
	"canopy/compute/season"
)

// maxEntries bounds the products a stack gathers before they are grouped
// into dates (several products of a day are one date).
const maxEntries = 4 * season.MaxDates

// Entries dates the paths of a stack, each as `canopy stack` takes it,
// and a folder of scenes as its scenes: a list file (.txt, .csv: one
// path,date a line, ReadList); a saved search (a STAC ItemCollection
// .json, SavedSearch, its items saved in items); a folder that is not a
// product itself (scene.IsProductDir) as every scene in it, by name (the
// files scene.IsProductName names and the product folders, one level
// down); any other path a product or GeoTIFF dated by DateOf. The first
// path that cannot be dated stops it, with an error naming it.
func Entries(ctx context.Context, paths []string, items string) ([]Entry, error) {
	var out []Entry
	add := func(es ...Entry) error {
		out = append(out, es...)
		if len(out) > maxEntries {
			return fmt.Errorf("more than %d products for a stack (at most %d dates)", maxEntries, season.MaxDates)
		}
		return nil
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch ext := strings.ToLower(filepath.Ext(p)); {
		case ext == ".txt" || ext == ".csv":
			es, err := ReadList(p)
			if err != nil {
				return nil, err
			}
			if err := add(es...); err != nil {
				return nil, err
			}
			continue
		case ext == ".json":
			es, ok, err := SavedSearch(p, items)
			if err != nil {
				return nil, err
			}
			if ok {
				if err := add(es...); err != nil {
					return nil, err
				}
				continue
			}
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() && !scene.IsProductDir(p) {
			scenes, err := folderScenes(p)
			if err != nil {
				return nil, err
			}
			for _, s := range scenes {
				e, err := DateOf(ctx, s)
				if err != nil {
					return nil, err
				}
				if err := add(e); err != nil {
					return nil, err
				}
			}
			continue
		}
		e, err := DateOf(ctx, p)
		if err != nil {
			return nil, err
		}
		if err := add(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// folderScenes lists the scenes of a folder by name: the files named as
// scenes are (GeoTIFFs, zips, tars, STAC items) and the product folders.
func folderScenes(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var out []string
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if de.IsDir() {
			if scene.IsProductDir(p) {
				out = append(out, p)
			}
			continue
		}
		if scene.IsProductName(name) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no scene in the folder (GeoTIFFs, .zip, .tar, .SAFE, Landsat folders, STAC items)", dir)
	}
	slices.Sort(out)
	return out, nil
}
