package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/stac"
	"canopy/compute/vector"
)

// apiNames are the STAC APIs --api knows by name.
var apiNames = map[string]string{
	"earth-search":       stac.EarthSearch,
	"planetary-computer": stac.PlanetaryComputer,
	"pc":                 stac.PlanetaryComputer,
}

// cmdSearch is `canopy search`: the scenes of a STAC API over an area and
// a season, as a list or (--json, or saved with --out) as a STAC
// ItemCollection that holds the items as the API sent them (links
// unsigned: a Planetary Computer item is signed when it is read), which
// canopy stack and monitor take as a stack (stac.ReadResult).
func cmdSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stderr)
	var collections collectionFlags
	fs.Var(&collections, "collection", "collection to search (repeatable, or comma-separated): sentinel-2-l2a, landsat-c2-l2, ...")
	bbox := fs.String("bbox", "", "the area: west,south,east,north in degrees")
	stands := fs.String("stands", "", "the area: the extent of these stands (FILE[:LAYER])")
	datetime := fs.String("datetime", "", "the season: START/END (dates or RFC 3339 times; .. for open)")
	cloud := fs.Float64("cloud", -1, "keep scenes with at most this cloud cover (percent)")
	api := fs.String("api", "earth-search", "the STAC API: earth-search, planetary-computer, or its URL")
	limit := fs.Int("max", 1000, "the most scenes listed")
	asJSON := fs.Bool("json", false, "print a STAC ItemCollection (the items as the API sent them)")
	out := fs.String("out", "", "also save the result (a STAC ItemCollection) in this file, for canopy stack and monitor")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	var cols []string
	for _, c := range collections {
		for _, x := range strings.Split(c, ",") {
			if x = strings.TrimSpace(x); x != "" {
				cols = append(cols, x)
			}
		}
	}
	if len(cols) == 0 {
		return request.Errorf("--collection: name the collection (sentinel-2-l2a, landsat-c2-l2, ...)")
	}
	if (*bbox == "") == (*stands == "") {
		return request.Errorf("give the area: --bbox W,S,E,N or --stands FILE (one of them)")
	}
	if *datetime == "" {
		return request.Errorf("--datetime: give the season, START/END (2024-05-01/2024-09-30)")
	}
	if _, err := stac.Interval(*datetime); err != nil {
		return request.Errorf("--datetime: %v", err)
	}
	if *cloud > 100 || math.IsNaN(*cloud) {
		return request.Errorf("--cloud %g: a share in percent, 0 to 100", *cloud)
	}
	if *limit <= 0 {
		return request.Errorf("--max %d: at least 1", *limit)
	}
	apiURL := *api
	if u, ok := apiNames[strings.ToLower(apiURL)]; ok {
		apiURL = u
	} else if !strings.HasPrefix(apiURL, "http://") && !strings.HasPrefix(apiURL, "https://") {
		return request.Errorf("--api %q: earth-search, planetary-computer, or an http(s) URL", apiURL)
	}
	q := stac.Query{API: apiURL, Collections: cols, Datetime: *datetime, MaxCloud: *cloud, MaxItems: *limit}
	if *bbox != "" {
		b, err := parseBBox(*bbox)
		if err != nil {
			return request.Errorf("--bbox: %v", err)
		}
		q.BBox = b
	} else {
		b, err := standsBBox(*stands)
		if err != nil {
			return err
		}
		q.BBox = b
	}
	if _, err := q.Body(); err != nil {
		return request.Errorf("%v", err)
	}
	items, err := (&stac.Client{}).Search(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON || *out != "" {
		var ceiling *float64
		if *cloud >= 0 {
			ceiling = cloud
		}
		b, err := stac.MarshalResult(items, stac.SearchInfo{API: stac.SearchURL(apiURL), Collections: cols, BBox: q.BBox, Datetime: *datetime,
			MaxCloud: ceiling, Searched: time.Now().UTC().Format(time.RFC3339)})
		if err != nil {
			return err
		}
		if *out != "" {
			// Through an outfile set that knows the stands read: --out
			// never replaces them (nor a link, FIFO, device or folder).
			var inputs []string
			if p, _, err := vector.ParseStands(*stands); err == nil && *stands != "" {
				inputs = append(inputs, p)
			}
			set := outfile.NewSet(inputs...)
			w, err := set.Create(*out)
			if err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				set.Abort()
				return err
			}
			if err := set.Commit(); err != nil {
				return err
			}
		}
		if *asJSON {
			_, err := stdout.Write(b)
			return err
		}
	}
	fmt.Fprintf(stdout, "%-16s  %6s  %-13s  %s\n", "date (UTC)", "cloud", "platform", "id")
	for _, it := range items {
		c := "     -"
		if !math.IsNaN(it.Cloud) {
			c = fmt.Sprintf("%5.1f%%", it.Cloud)
		}
		fmt.Fprintf(stdout, "%-16s  %6s  %-13s  %s\n", it.Date.Format("2006-01-02 15:04"), c, it.Platform, it.ID)
	}
	word := "scenes"
	if len(items) == 1 {
		word = "scene"
	}
	fmt.Fprintf(stdout, "%d %s from %s\n", len(items), word, stac.SearchURL(apiURL))
	return nil
}

// collectionFlags is the repeatable --collection.
type collectionFlags []string

func (c *collectionFlags) String() string { return strings.Join(*c, ",") }

func (c *collectionFlags) Set(v string) error { *c = append(*c, v); return nil }

// parseBBox reads W,S,E,N in degrees.
func parseBBox(s string) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, fmt.Errorf("%q: four numbers west,south,east,north", s)
	}
	b := make([]float64, 4)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: %q is not a number", s, p)
		}
		b[i] = v
	}
	if b[0] < -180 || b[2] > 180 || b[1] < -90 || b[3] > 90 || b[1] > b[3] || b[0] > b[2] {
		return nil, fmt.Errorf("%q is not west,south,east,north in degrees", s)
	}
	return b, nil
}

// standsBBox is the extent of the stands in degrees (WGS 84).
func standsBBox(spec string) ([]float64, error) {
	path, name, err := vector.ParseStands(spec)
	if err != nil {
		return nil, request.Errorf("--stands: %v", err)
	}
	l, err := vector.Read(path, name)
	if err != nil {
		return nil, err
	}
	return vector.ExtentLatLon(l)
}
