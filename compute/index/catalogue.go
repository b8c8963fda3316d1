package index

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Index is a named index of the catalogue.
type Index struct {
	Name    string // lower-case key: "ndvi"
	Formula string // in the language of this package
	// Roles are the roles the formula uses, in canonical order.
	Roles []string
	// Range is the expected range of values for reflectances in [0, 1]:
	// the mathematical range of normalised differences, the usual display
	// range for EVI (unbounded where its denominator nears zero). Legends,
	// ramps and classes use it.
	Range       [2]float64
	Description string // one line for foresters
	Reference   string // the long name in Awesome Spectral Indices
	ASIKey      string // the entry's key in Awesome Spectral Indices ("NDREI")
	Paper       string // the reference Awesome Spectral Indices gives
	Expr        *Expr  // the parsed formula
}

// ASIURL is the home of Awesome Spectral Indices, where the catalogue's
// formulas and constants come from.
const ASIURL = "https://github.com/awesome-spectral-indices/awesome-spectral-indices"

// catalogue is in display order. Formulas follow awesome-spectral-indices'
// spectral-indices-dict.json term for term, with its default constants
// (g = 2.5, C1 = 6, C2 = 7.5, L = 1 for EVI and EVI2) written in, except
// SAVI's L: the catalogue leaves it a parameter (its constants table's
// default 1.0 is EVI's) and we use 0.5, Huete's (1988) value for
// intermediate vegetation cover.
var catalogue = []Index{
	{Name: "ndvi", Formula: "(nir - red) / (nir + red)", Range: [2]float64{-1, 1},
		Description: "greenness and vigour of the canopy; saturates in dense forest",
		Reference:   "Normalized Difference Vegetation Index", ASIKey: "NDVI", Paper: "https://ntrs.nasa.gov/citations/19740022614"},
	{Name: "evi", Formula: "2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + 1)", Range: [2]float64{-1, 1},
		Description: "like NDVI but corrected for aerosols and soil; keeps contrast in dense canopy",
		Reference:   "Enhanced Vegetation Index", ASIKey: "EVI", Paper: "https://doi.org/10.1016/S0034-4257(96)00112-5"},
	{Name: "evi2", Formula: "2.5 * (nir - red) / (nir + 2.4 * red + 1)", Range: [2]float64{-1, 1},
		Description: "EVI without the blue band, for sensors or scenes where blue is poor",
		Reference:   "Two-Band Enhanced Vegetation Index", ASIKey: "EVI2", Paper: "https://doi.org/10.1016/j.rse.2008.06.006"},
	{Name: "savi", Formula: "(1 + 0.5) * (nir - red) / (nir + red + 0.5)", Range: [2]float64{-1, 1},
		Description: "NDVI adjusted for bright soil showing between sparse trees (L = 0.5)",
		Reference:   "Soil-Adjusted Vegetation Index", ASIKey: "SAVI", Paper: "https://doi.org/10.1016/0034-4257(88)90106-X"},
	{Name: "msavi2", Formula: "0.5 * (2 * nir + 1 - sqrt((2 * nir + 1) * (2 * nir + 1) - 8 * (nir - red)))", Range: [2]float64{-1, 1},
		Description: "soil-adjusted like SAVI without choosing L; for young stands and clearings",
		Reference:   "Modified Soil-Adjusted Vegetation Index", ASIKey: "MSAVI", Paper: "https://doi.org/10.1016/0034-4257(94)90134-1"},
	{Name: "osavi", Formula: "(nir - red) / (nir + red + 0.16)", Range: [2]float64{-1, 1},
		Description: "soil-adjusted NDVI with a fixed 0.16, for sparse and mixed cover",
		Reference:   "Optimized Soil-Adjusted Vegetation Index", ASIKey: "OSAVI", Paper: "https://doi.org/10.1016/0034-4257(95)00186-7"},
	{Name: "gndvi", Formula: "(nir - green) / (nir + green)", Range: [2]float64{-1, 1},
		Description: "NDVI with green instead of red; follows chlorophyll content",
		Reference:   "Green Normalized Difference Vegetation Index", ASIKey: "GNDVI", Paper: "https://doi.org/10.1016/S0034-4257(96)00072-7"},
	{Name: "ndre", Formula: "(nir - rededge1) / (nir + rededge1)", Range: [2]float64{-1, 1},
		Description: "red-edge NDVI: chlorophyll and stress in dense canopy, drone red-edge cameras",
		Reference:   "Normalized Difference Red Edge Index", ASIKey: "NDREI", Paper: "https://doi.org/10.1016/1011-1344(93)06963-4"},
	{Name: "ndvi705", Formula: "(rededge2 - rededge1) / (rededge2 + rededge1)", Range: [2]float64{-1, 1},
		Description: "narrow-band red-edge NDVI (705 and 750 nm): leaf chlorophyll, early senescence",
		Reference:   "Normalized Difference Vegetation Index (705 and 750 nm)", ASIKey: "NDVI705", Paper: "https://doi.org/10.1016/S0176-1617(11)81633-0"},
	{Name: "ndmi", Formula: "(nir - swir1) / (nir + swir1)", Range: [2]float64{-1, 1},
		Description: "canopy water content: drought stress, bark-beetle attack",
		Reference:   "Normalized Difference Moisture Index", ASIKey: "NDMI", Paper: "https://doi.org/10.1016/S0034-4257(01)00318-2"},
	{Name: "nbr", Formula: "(nir - swir2) / (nir + swir2)", Range: [2]float64{-1, 1},
		Description: "burn severity: low after fire; before minus after is dNBR",
		Reference:   "Normalized Burn Ratio", ASIKey: "NBR", Paper: "https://doi.org/10.3133/ofr0211"},
	{Name: "nbr2", Formula: "(swir1 - swir2) / (swir1 + swir2)", Range: [2]float64{-1, 1},
		Description: "burn severity from the two SWIR bands; post-fire recovery",
		Reference:   "Normalized Burn Ratio 2", ASIKey: "NBR2", Paper: "https://www.usgs.gov/core-science-systems/nli/landsat/landsat-normalized-burn-ratio-2"},
	{Name: "ndwi", Formula: "(green - nir) / (green + nir)", Range: [2]float64{-1, 1},
		Description: "open water (McFeeters): positive over water, negative over vegetation",
		Reference:   "Normalized Difference Water Index", ASIKey: "NDWI", Paper: "https://doi.org/10.1080/01431169608948714"},
	{Name: "mndwi", Formula: "(green - swir1) / (green + swir1)", Range: [2]float64{-1, 1},
		Description: "open water with SWIR instead of NIR; separates water from built-up land",
		Reference:   "Modified Normalized Difference Water Index", ASIKey: "MNDWI", Paper: "https://doi.org/10.1080/01431160600589179"},
}

func init() {
	for i := range catalogue {
		c := &catalogue[i]
		c.Expr = MustParse(c.Formula)
		c.Roles = c.Expr.Roles()
	}
}

// Catalogue is every named index, in display order. The slice is a copy;
// the Exprs are shared and must not be modified.
func Catalogue() []Index {
	out := make([]Index, len(catalogue))
	copy(out, catalogue)
	for i := range out {
		out[i].Roles = slices.Clone(out[i].Roles)
	}
	return out
}

// Names are the catalogue's index names, in display order.
func Names() []string {
	out := make([]string, len(catalogue))
	for i, c := range catalogue {
		out[i] = c.Name
	}
	return out
}

// Lookup finds a catalogue index by name, without regard to case.
func Lookup(name string) (Index, bool) {
	name = strings.TrimSpace(name)
	for _, c := range catalogue {
		if strings.EqualFold(c.Name, name) {
			c.Roles = slices.Clone(c.Roles)
			return c, true
		}
	}
	return Index{}, false
}

// unknownIndex is the error for a name that is not in the catalogue.
func unknownIndex(name string) error {
	return fmt.Errorf("unknown index %q (indices: %s)", name, strings.Join(Names(), ", "))
}

// Resolve turns what a user typed for one index into a name and a tree: a
// catalogue name gives that index (its lower-case name); anything else is
// parsed as a formula and named by its canonical text. A single word that
// is neither an index nor a role is reported as an unknown index.
func Resolve(nameOrExpr string) (name string, e *Expr, err error) {
	s := strings.TrimSpace(nameOrExpr)
	if c, ok := Lookup(s); ok {
		return c.Name, c.Expr, nil
	}
	if isWord(s) && RoleIndex(s) < 0 {
		if _, isFunc := functionKind(s); !isFunc {
			return "", nil, unknownIndex(s)
		}
	}
	e, err = Parse(s)
	if err != nil {
		return "", nil, err
	}
	return e.String(), e, nil
}

// isWord reports whether s is one identifier.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || unicode.IsLetter(c) || i > 0 && unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}

// ParseList reads a comma-separated list of catalogue names ("ndvi,evi"),
// as --index takes it. An unknown name is an error naming it and listing
// the known ones; so are an empty item and a name given twice.
func ParseList(list string) ([]Index, error) {
	var out []Index
	for _, item := range strings.Split(list, ",") {
		name := strings.TrimSpace(item)
		if name == "" {
			return nil, fmt.Errorf("empty index name in %q (indices: %s)", list, strings.Join(Names(), ", "))
		}
		c, ok := Lookup(name)
		if !ok {
			return nil, unknownIndex(name)
		}
		for _, o := range out {
			if o.Name == c.Name {
				return nil, fmt.Errorf("index %q given twice in %q", c.Name, list)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// MarkdownTable is the catalogue as a Markdown table (name, formula, roles,
// range, description, reference), as docs/INDICES.md shows it.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| Name | Formula | Roles | Range | Description | Awesome Spectral Indices |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, c := range catalogue {
		fmt.Fprintf(&b, "| %s | `%s` | %s | [%g, %g] | %s | %s (`%s`, [paper](%s)) |\n",
			c.Name, c.Formula, strings.Join(c.Roles, ", "), c.Range[0], c.Range[1], c.Description, c.Reference, c.ASIKey, c.Paper)
	}
	return b.String()
}
