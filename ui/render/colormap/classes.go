package colormap

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strings"

	"canopy/compute"
	"canopy/compute/change"
	"canopy/ui/render/numfmt"
)

// Class is one class of index values (compute.Class: a name and the
// bounds Lo ≤ v < Hi) with the colour the map, the legend and the
// statistics all draw it in.
type Class struct {
	compute.Class
	// Color is the colour of the class.
	Color color.NRGBA
}

// MaxClasses is the most classes a table may hold (the palette's ramp
// entries).
const MaxClasses = RampSteps

// ClassTable is an editable table of classes: contiguous and ascending
// (each class's Hi is the next one's Lo), the first open below (Lo =
// −Inf) and the last open above (Hi = +Inf), so that every number has a
// class. A LUT built from it (NewClasses) draws the map, its legend and the
// colours of the statistics, so that all three agree. Methods that edit
// return a new table and leave the receiver as it was.
type ClassTable []Class

// Validate reports a table no map can be drawn with: empty, more than
// MaxClasses classes, a first class not open below or a last not open
// above, bounds that are not finite, classes out of order or not
// contiguous, an empty name.
func (t ClassTable) Validate() error {
	if len(t) == 0 {
		return errors.New("class table: no class")
	}
	if len(t) > MaxClasses {
		return fmt.Errorf("class table: %d classes, at most %d", len(t), MaxClasses)
	}
	if !math.IsInf(t[0].Lo, -1) {
		return fmt.Errorf("class table: the first class %q must include everything below its upper bound", t[0].Name)
	}
	if !math.IsInf(t[len(t)-1].Hi, 1) {
		return fmt.Errorf("class table: the last class %q must include everything above its lower bound", t[len(t)-1].Name)
	}
	for i, c := range t {
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("class table: class %d has no name", i+1)
		}
		if i == len(t)-1 {
			break
		}
		if math.IsNaN(c.Hi) || math.IsInf(c.Hi, 0) {
			return fmt.Errorf("class table: the bound between %q and %q is not a number", c.Name, t[i+1].Name)
		}
		if c.Hi != t[i+1].Lo {
			return fmt.Errorf("class table: %q ends at %s but %q starts at %s", c.Name, numfmt.Value(c.Hi), t[i+1].Name, numfmt.Value(t[i+1].Lo))
		}
		if i > 0 && !(c.Hi > c.Lo) {
			return fmt.Errorf("class table: thresholds must increase (%q from %s to %s)", c.Name, numfmt.Value(c.Lo), numfmt.Value(c.Hi))
		}
	}
	return nil
}

// NewClassTable builds a table from its n−1 increasing thresholds and n
// names and colours: class i spans [thresholds[i−1], thresholds[i]).
func NewClassTable(thresholds []float64, names []string, colors []color.NRGBA) (ClassTable, error) {
	if len(names) != len(thresholds)+1 || len(colors) != len(names) {
		return nil, fmt.Errorf("class table: %d thresholds need %d names and colours, got %d names and %d colours", len(thresholds), len(thresholds)+1, len(names), len(colors))
	}
	t := make(ClassTable, len(names))
	lo := math.Inf(-1)
	for i := range t {
		hi := math.Inf(1)
		if i < len(thresholds) {
			hi = thresholds[i]
		}
		t[i] = Class{Class: compute.Class{Name: names[i], Lo: lo, Hi: hi}, Color: colors[i]}
		lo = hi
	}
	return t, t.Validate()
}

// Clone returns a copy of t.
func (t ClassTable) Clone() ClassTable { return append(ClassTable(nil), t...) }

// Thresholds returns the bounds between classes, ascending (one fewer
// than the classes).
func (t ClassTable) Thresholds() []float64 {
	if len(t) == 0 {
		return nil
	}
	th := make([]float64, len(t)-1)
	for i := range th {
		th[i] = t[i].Hi
	}
	return th
}

// WithThreshold returns a copy of t whose bound between class i and class
// i+1 is v; v must stay strictly between the neighbouring bounds.
func (t ClassTable) WithThreshold(i int, v float64) (ClassTable, error) {
	if i < 0 || i >= len(t)-1 {
		return nil, fmt.Errorf("class table: no threshold %d (the table has %d)", i+1, max(0, len(t)-1))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("class table: threshold %s is not a number", numfmt.Value(v))
	}
	if i > 0 && !(v > t[i].Lo) {
		return nil, fmt.Errorf("class table: the threshold after %q must be above %s", t[i].Name, numfmt.Value(t[i].Lo))
	}
	if i+1 < len(t)-1 && !(v < t[i+1].Hi) {
		return nil, fmt.Errorf("class table: the threshold before %q must be below %s", t[i+1].Name, numfmt.Value(t[i+1].Hi))
	}
	c := t.Clone()
	c[i].Hi, c[i+1].Lo = v, v
	return c, nil
}

// WithName returns a copy of t with class i named name.
func (t ClassTable) WithName(i int, name string) (ClassTable, error) {
	if i < 0 || i >= len(t) {
		return nil, fmt.Errorf("class table: no class %d (the table has %d)", i+1, len(t))
	}
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("class table: class %d needs a name", i+1)
	}
	c := t.Clone()
	c[i].Name = name
	return c, nil
}

// WithColor returns a copy of t with class i drawn in col (made opaque).
func (t ClassTable) WithColor(i int, col color.NRGBA) (ClassTable, error) {
	if i < 0 || i >= len(t) {
		return nil, fmt.Errorf("class table: no class %d (the table has %d)", i+1, len(t))
	}
	c := t.Clone()
	col.A = 0xff
	c[i].Color = col
	return c, nil
}

// Compute returns the classes without their colours, as the engine's
// statistics take them.
func (t ClassTable) Compute() []compute.Class {
	cs := make([]compute.Class, len(t))
	for i, c := range t {
		cs[i] = c.Class
	}
	return cs
}

// ClassOf returns the index of the class of v, or −1 for NaN: v is
// compared in float32, as the planes are stored (compute.ClassOf).
func (t ClassTable) ClassOf(v float32) int {
	if v != v {
		return -1
	}
	i := 0
	for i < len(t)-1 && v >= float32(t[i].Hi) {
		i++
	}
	return i
}

// Bounds formats the range of class i for a legend or a table, with the
// numbers formatted as everywhere else (numfmt.Value): "< 0", "0 – 0.2",
// "≥ 0.6".
func (t ClassTable) Bounds(i int) string {
	c := t[i].Class
	switch {
	case math.IsInf(c.Lo, -1) && math.IsInf(c.Hi, 1):
		return "all"
	case math.IsInf(c.Lo, -1):
		return "< " + numfmt.Value(c.Hi)
	case math.IsInf(c.Hi, 1):
		return "≥ " + numfmt.Value(c.Lo)
	}
	return numfmt.Value(c.Lo) + " – " + numfmt.Value(c.Hi)
}

// classJSON is a class as a session file stores it: open bounds are
// null, the colour is "#rrggbb".
type classJSON struct {
	Name  string   `json:"name"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
	Color string   `json:"color"`
}

// MarshalJSON writes the class with its colour as "#rrggbb" and an open
// bound as null (JSON has no infinity).
func (c Class) MarshalJSON() ([]byte, error) {
	j := classJSON{Name: c.Name, Color: fmt.Sprintf("#%02x%02x%02x", c.Color.R, c.Color.G, c.Color.B)}
	if !math.IsInf(c.Lo, 0) {
		j.Lo = &c.Lo
	}
	if !math.IsInf(c.Hi, 0) {
		j.Hi = &c.Hi
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Class) UnmarshalJSON(b []byte) error {
	var j classJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	col, err := ParseColor(j.Color)
	if err != nil {
		return fmt.Errorf("class %q: %w", j.Name, err)
	}
	*c = Class{Class: compute.Class{Name: j.Name, Lo: math.Inf(-1), Hi: math.Inf(1)}, Color: col}
	if j.Lo != nil {
		c.Lo = *j.Lo
	}
	if j.Hi != nil {
		c.Hi = *j.Hi
	}
	return nil
}

// ParseColor reads a colour written "#rrggbb" (or "rrggbb").
func ParseColor(s string) (color.NRGBA, error) {
	h := strings.TrimPrefix(strings.TrimSpace(s), "#")
	var r, g, b uint8
	if len(h) != 6 {
		return color.NRGBA{}, fmt.Errorf("colour %q is not #rrggbb", s)
	}
	if _, err := fmt.Sscanf(h, "%02x%02x%02x", &r, &g, &b); err != nil {
		return color.NRGBA{}, fmt.Errorf("colour %q is not #rrggbb", s)
	}
	return color.NRGBA{r, g, b, 0xff}, nil
}

// FromClasses gives colours to an engine class table (a change table,
// thresholds a user typed): the named continuous ramp ("" for the
// default) sampled at the middle of each class's share of the ramp, low
// classes at the ramp's low end.
func FromClasses(cs []compute.Class, rampName string) (ClassTable, error) {
	r, err := rampByName(rampName)
	if err != nil {
		return nil, err
	}
	if r.discrete {
		return nil, fmt.Errorf("colour ramp %s has no continuous colours to give classes", r.name)
	}
	t := make(ClassTable, len(cs))
	for i, c := range cs {
		t[i] = Class{Class: c, Color: r.at((float64(i) + 0.5) / float64(len(cs)))}
	}
	return t, t.Validate()
}

// Preset is a named class table for an index.
type Preset struct {
	// Name is what PresetFor takes: "ndvi", "dnbr", "ndwi", "ndmi",
	// "change".
	Name string
	// Title describes the preset for a menu.
	Title string
	// Table holds the classes.
	Table ClassTable
}

func table(cs []compute.Class, colors ...string) ClassTable {
	t := make(ClassTable, len(cs))
	for i, c := range cs {
		t[i] = Class{Class: c, Color: hex(colors[i])}
	}
	if err := t.Validate(); err != nil {
		panic("colormap: preset " + err.Error())
	}
	return t
}

func named(names []string, thresholds ...float64) []compute.Class {
	cs := make([]compute.Class, len(names))
	lo := math.Inf(-1)
	for i, n := range names {
		hi := math.Inf(1)
		if i < len(thresholds) {
			hi = thresholds[i]
		}
		cs[i] = compute.Class{Name: n, Lo: lo, Hi: hi}
		lo = hi
	}
	return cs
}

// ndviTable is the default NDVI table: the thresholds of
// compute.NDVIClasses; below 0 is named for what it is, no vegetation
// (water, snow, cloud, rock or bare soil can all be there).
var ndviTable = func() ClassTable {
	cs := compute.NDVIClasses()
	cs[0].Name = "no vegetation"
	return table(cs, "#2c7bb6", "#c2a36b", "#e6f08c", "#74c25c", "#1a7335")
}()

var presets = []Preset{
	{Name: "ndvi", Title: "NDVI vegetation cover", Table: ndviTable},
	{Name: "dnbr", Title: "dNBR burn severity (USGS, Key and Benson)",
		// UN-SPIDER's colours for the USGS classes.
		Table: table(change.DNBRClasses(), "#7a8737", "#acbe4d", "#0ae042", "#fff70b", "#ffaf38", "#ff641b", "#a41fd6")},
	{Name: "ndwi", Title: "NDWI water (McFeeters)",
		Table: table(named([]string{"dry land", "moist land", "wet land, flooding", "open water"}, -0.3, 0, 0.2),
			"#a6611a", "#dfc27d", "#80cdc1", "#2166ac")},
	{Name: "ndmi", Title: "NDMI canopy moisture",
		Table: table(named([]string{"bare or very dry", "dry canopy", "moderate moisture", "moist canopy", "very moist canopy"}, -0.2, 0, 0.2, 0.4),
			"#8c510a", "#d8b365", "#f6e8c3", "#5ab4ac", "#01665e")},
	{Name: "change", Title: "index change (before − after)",
		Table: table(change.LossClasses(0.1), "#2166ac", "#92c5de", "#f7f7f7", "#f4a582", "#b2182b")},
}

// Presets returns the class tables Canopy knows (copies): NDVI (the
// default), dNBR burn severity, NDWI water, NDMI moisture and a symmetric
// change table.
func Presets() []Preset {
	ps := make([]Preset, len(presets))
	for i, p := range presets {
		ps[i] = p
		ps[i].Table = p.Table.Clone()
	}
	return ps
}

// PresetFor returns the preset named name ("ndvi", "dnbr", "ndwi",
// "ndmi", "change"; case ignored), and false for another name.
func PresetFor(name string) (t ClassTable, ok bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range presets {
		if p.Name == n {
			return p.Table.Clone(), true
		}
	}
	return nil, false
}

// IndexClasses returns the classes of a map of one date of the catalogue
// index named index: the NDVI, NDWI and NDMI presets; false for an index
// with no established classes (its map then takes a continuous ramp, or
// classes the user gives), so that no index is classified with
// thresholds made for another.
func IndexClasses(index string) (ClassTable, bool) {
	switch n := strings.ToLower(strings.TrimSpace(index)); n {
	case "ndvi", "ndwi", "ndmi":
		return PresetFor(n)
	}
	return nil, false
}

// ChangeClasses returns the classes of a change map (before − after) of
// an index: the dNBR burn severity classes for nbr and nbr2, whose USGS
// thresholds are made for that difference, and the symmetric change
// table for any other index (compute/change.ClassesFor's choice).
func ChangeClasses(index string) ClassTable {
	switch strings.ToLower(strings.TrimSpace(index)) {
	case "nbr", "nbr2", "dnbr":
		t, _ := PresetFor("dnbr")
		return t
	}
	t, _ := PresetFor("change")
	return t
}

// Classes returns the default NDVI class table with colours (a copy),
// the table of the classes ramp.
func Classes() ClassTable { return ndviTable.Clone() }

// ClassOf returns the index in Classes of the NDVI class of v, or -1 for
// NaN.
func ClassOf(v float32) int { return ndviTable.ClassOf(v) }
