package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"canopy/compute/index"
	"canopy/compute/request"
	"canopy/compute/scene"
)

// indexEntry is one line of `canopy indices --json`.
type indexEntry struct {
	Name        string     `json:"name"`
	Formula     string     `json:"formula"`
	Roles       []string   `json:"roles"`
	Range       [2]float64 `json:"range"`
	Description string     `json:"description"`
	Reference   string     `json:"reference"`
}

func cmdIndices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("indices", stderr)
	asJSON := fs.Bool("json", false, "one JSON object per index")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, c := range index.Catalogue() {
		if *asJSON {
			e := indexEntry{c.Name, c.Formula, c.Roles, c.Range, c.Description, c.Reference}
			if err := enc.Encode(e); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stdout, "%-8s %-58s %-28s %s\n", c.Name, c.Formula, strings.Join(c.Roles, ","), c.Description)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "Formulas from Awesome Spectral Indices (%s). A custom formula: --expr '...'\n", index.ASIURL)
	}
	return nil
}

func cmdScene(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("scene", stderr)
	asJSON := fs.Bool("json", false, "print the scene as JSON")
	// The path comes first (canopy scene PATH --json) or after the flags.
	var path string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		path, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return helpOrUsage(fs, err, stdout)
	}
	if path == "" && fs.NArg() > 0 {
		path = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return request.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if path == "" {
		return request.Errorf("give the product: canopy scene PATH (a .SAFE folder or .zip, a Landsat folder or .tar, a STAC item .json, a GeoTIFF)")
	}
	s, err := scene.Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(s)
	}
	fmt.Fprint(stdout, s.Describe())
	return nil
}
