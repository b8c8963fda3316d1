package colormap

import (
	"encoding/json"
	"image/color"
	"math"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/change"
)

func TestPresetsAreValidAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Presets() {
		if err := p.Table.Validate(); err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
		}
		if seen[p.Name] {
			t.Errorf("preset %s twice", p.Name)
		}
		seen[p.Name] = true
		cols := map[color.NRGBA]string{}
		for _, c := range p.Table {
			if o, dup := cols[c.Color]; dup {
				t.Errorf("preset %s: %q and %q share colour %v", p.Name, o, c.Name, c.Color)
			}
			cols[c.Color] = c.Name
		}
	}
	for _, name := range []string{"ndvi", "dnbr", "ndwi", "ndmi"} {
		if !seen[name] {
			t.Errorf("no %s preset", name)
		}
	}
}

func TestPresetThresholdsAreTheEngines(t *testing.T) {
	// The NDVI and dNBR presets carry the engine's thresholds, so that
	// the statistics (which classify with compute's tables) and the map agree.
	for name, want := range map[string][]compute.Class{"ndvi": compute.NDVIClasses(), "dnbr": change.DNBRClasses()} {
		p, ok := PresetFor(name)
		if !ok || len(p) != len(want) {
			t.Fatalf("PresetFor(%q) = %d classes, %v", name, len(p), ok)
		}
		for i := range want {
			if p[i].Lo != want[i].Lo || p[i].Hi != want[i].Hi {
				t.Errorf("%s class %d: [%g, %g), the engine's [%g, %g)", name, i, p[i].Lo, p[i].Hi, want[i].Lo, want[i].Hi)
			}
		}
	}
	if p, _ := PresetFor("NDVI"); p[0].Name != "no vegetation" || p[0].Bounds() != "< 0" {
		t.Errorf("NDVI below 0 is %q %q", p[0].Name, p[0].Bounds())
	}
	for _, name := range []string{"evi", "savi", "nbr", "gndvi"} {
		if _, ok := IndexClasses(name); ok {
			t.Errorf("%s got classes made for another index", name)
		}
	}
	for _, name := range []string{"ndvi", "NDWI", "ndmi"} {
		if tb, ok := IndexClasses(name); !ok || len(tb) < 4 {
			t.Errorf("IndexClasses(%q): %d classes %v", name, len(tb), ok)
		}
	}
	// Change maps: dNBR severity for NBR (compute/change's choice), the
	// symmetric table otherwise.
	for index, want := range map[string][]compute.Class{"nbr": change.ClassesFor("nbr"), "nbr2": change.ClassesFor("nbr2"), "ndvi": change.ClassesFor("ndvi")} {
		got := ChangeClasses(index).Compute()
		if len(got) != len(want) {
			t.Fatalf("ChangeClasses(%q): %d classes, compute/change has %d", index, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("ChangeClasses(%q)[%d] = %+v, compute/change %+v", index, i, got[i], want[i])
			}
		}
	}
}

func TestClassLUTAgreesWithClassOf(t *testing.T) {
	for _, p := range Presets() {
		lut, err := NewClasses(p.Table)
		if err != nil {
			t.Fatal(err)
		}
		if !lut.Discrete() || lut.Ramp() != RampClasses {
			t.Errorf("%s: LUT is not discrete", p.Name)
		}
		// Every float32 near every threshold, and a sweep over the range.
		var vs []float32
		for _, th := range p.Table.Thresholds() {
			v := float32(th)
			for k := 0; k < 4; k++ {
				vs = append(vs, v)
				v = math.Nextafter32(v, float32(math.Inf(-1)))
			}
			v = float32(th)
			for k := 0; k < 4; k++ {
				v = math.Nextafter32(v, float32(math.Inf(1)))
				vs = append(vs, v)
			}
		}
		for x := -3.0; x <= 3; x += 0.0007 {
			vs = append(vs, float32(x))
		}
		for _, v := range vs {
			c := p.Table.ClassOf(v)
			if c < 0 || lut.Color(v) != p.Table[c].Color || int(lut.Index(v)) != c+1 {
				t.Fatalf("%s: LUT colour of %.9g is %v (index %d), class %d is %v", p.Name, v, lut.Color(v), lut.Index(v), c, p.Table[c].Color)
			}
		}
		if lut.Index(float32(math.NaN())) != IndexNaN || lut.Color(float32(math.NaN())).A != 0 {
			t.Errorf("%s: NaN is not transparent", p.Name)
		}
		// The palette of paletted maps holds the classes' colours.
		pal := lut.Palette()
		for i, c := range p.Table {
			if pal[i+1] != c.Color {
				t.Errorf("%s: palette entry %d is %v, class %q is %v", p.Name, i+1, pal[i+1], c.Name, c.Color)
			}
		}
		got := lut.Classes()
		got[0].Name = "changed"
		if lut.Classes()[0].Name == "changed" {
			t.Errorf("%s: Classes returns the LUT's own table", p.Name)
		}
	}
}

func TestClassLUTWideThresholds(t *testing.T) {
	// A table for a quantity outside [-1, 1] (a temperature, a DN).
	tb, err := NewClassTable([]float64{100, 1000, 5000}, []string{"low", "mid", "high", "very high"},
		[]color.NRGBA{hex("#000000"), hex("#ff0000"), hex("#00ff00"), hex("#0000ff")})
	if err != nil {
		t.Fatal(err)
	}
	lut, err := NewClasses(tb)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[float32]int{-1e9: 0, 99.99: 0, 100: 1, 999: 1, 1000: 2, 4999.9: 2, 5000: 3, 1e12: 3} {
		if lut.Color(v) != tb[want].Color {
			t.Errorf("%g: colour %v, want class %d", v, lut.Color(v), want)
		}
	}
	if r := lut.Range(); !(r.Lo < 100 && r.Hi > 5000) {
		t.Errorf("range %v does not cover the thresholds", r)
	}
}

func TestClassTableEdits(t *testing.T) {
	tb := Classes()
	e, err := tb.WithThreshold(1, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if e[1].Hi != 0.25 || e[2].Lo != 0.25 || tb[1].Hi != 0.2 {
		t.Errorf("WithThreshold: %v, original %v", e[1:3], tb[1:3])
	}
	if e.ClassOf(0.22) != 1 || tb.ClassOf(0.22) != 2 {
		t.Error("moved threshold does not classify")
	}
	for _, bad := range []struct {
		i int
		v float64
	}{{1, 0}, {1, 0.4}, {1, math.NaN()}, {4, 1}, {-1, 0}} {
		if _, err := tb.WithThreshold(bad.i, bad.v); err == nil {
			t.Errorf("WithThreshold(%d, %g) accepted", bad.i, bad.v)
		}
	}
	// The first and last thresholds may move freely on their open side.
	if _, err := tb.WithThreshold(0, -5); err != nil {
		t.Error(err)
	}
	if n, err := tb.WithName(0, "water, snow"); err != nil || n[0].Name != "water, snow" || tb[0].Name == "water, snow" {
		t.Errorf("WithName: %v %v", n, err)
	}
	if _, err := tb.WithName(0, " "); err == nil {
		t.Error("empty name accepted")
	}
	if c, err := tb.WithColor(2, color.NRGBA{1, 2, 3, 0}); err != nil || c[2].Color != (color.NRGBA{1, 2, 3, 255}) {
		t.Errorf("WithColor: %v %v", c[2].Color, err)
	}
	if got := tb.Compute(); len(got) != 5 || got[2] != compute.NDVIClasses()[2] {
		t.Errorf("Compute: %v", got)
	}
}

func TestClassTableValidate(t *testing.T) {
	good := Classes()
	for name, edit := range map[string]func(ClassTable) ClassTable{
		"empty":          func(ClassTable) ClassTable { return nil },
		"closed below":   func(t ClassTable) ClassTable { t[0].Lo = -1; return t },
		"closed above":   func(t ClassTable) ClassTable { t[4].Hi = 1; return t },
		"gap":            func(t ClassTable) ClassTable { t[2].Lo = 0.25; return t },
		"decreasing":     func(t ClassTable) ClassTable { t[1].Hi, t[2].Lo = -0.5, -0.5; return t },
		"nameless":       func(t ClassTable) ClassTable { t[3].Name = ""; return t },
		"NaN threshold":  func(t ClassTable) ClassTable { t[1].Hi, t[2].Lo = math.NaN(), math.NaN(); return t },
		"too many":       func(ClassTable) ClassTable { return make(ClassTable, MaxClasses+1) },
		"inf threshold ": func(t ClassTable) ClassTable { t[3].Hi, t[4].Lo = math.Inf(1), math.Inf(1); return t },
	} {
		bad := edit(good.Clone())
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "class table") {
			t.Errorf("%s: message %q", name, err)
		}
		if _, err := NewClasses(bad); err == nil {
			t.Errorf("%s: NewClasses accepted", name)
		}
	}
	if _, err := NewClassTable([]float64{0}, []string{"a"}, nil); err == nil {
		t.Error("NewClassTable with too few names accepted")
	}
}

func TestClassTableJSON(t *testing.T) {
	tb, _ := PresetFor("dnbr")
	b, err := json.Marshal(tb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"lo":null`) || !strings.Contains(string(b), `"color":"#a41fd6"`) {
		t.Errorf("JSON %s", b)
	}
	var back ClassTable
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(tb) {
		t.Fatalf("read back %d classes", len(back))
	}
	for i := range tb {
		if back[i] != tb[i] {
			t.Errorf("class %d read back %+v, wrote %+v", i, back[i], tb[i])
		}
	}
	if err := json.Unmarshal([]byte(`[{"name":"a","lo":null,"hi":null,"color":"red"}]`), &back); err == nil {
		t.Error("colour \"red\" accepted")
	}
}

func TestFromClasses(t *testing.T) {
	cs, err := change.ParseClasses("-0.2,0,0.3")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := FromClasses(cs, RampChange)
	if err != nil {
		t.Fatal(err)
	}
	lut, err := NewClasses(tb)
	if err != nil {
		t.Fatal(err)
	}
	if lut.Color(-0.5) == lut.Color(0.5) || tb[0].Color == tb[3].Color {
		t.Error("classes from a ramp share a colour")
	}
	if _, err := FromClasses(cs, RampClasses); err == nil {
		t.Error("colours from the classes ramp")
	}
}

func TestLegendDrawsTableColours(t *testing.T) {
	tb, _ := PresetFor("ndwi")
	lut, _ := NewClasses(tb)
	img := lut.WithHeading("NDWI").Legend(1)
	count := map[uint8]int{}
	for _, p := range img.Pix {
		count[p]++
	}
	for i, c := range tb {
		if count[uint8(i+1)] < 50 {
			t.Errorf("legend has %d pixels of %q", count[uint8(i+1)], c.Name)
		}
	}
}
