package index_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"canopy/compute/index"
)

// px builds a pixel from role=value pairs; the other roles are NaN, so a
// formula that reads a role it should not gives NaN and fails.
func px(kv map[string]float64) *[index.NumRoles]float64 {
	var v [index.NumRoles]float64
	for i := range v {
		v[i] = math.NaN()
	}
	for k, x := range kv {
		v[index.RoleIndex(k)] = x
	}
	return &v
}

// asi are the catalogue's formulas written independently in Go, term for
// term as awesome-spectral-indices writes them, with its constants.
var asi = map[string]func(b map[string]float64) float64{
	"ndvi": func(b map[string]float64) float64 { N, R := b["nir"], b["red"]; return (N - R) / (N + R) },
	"evi": func(b map[string]float64) float64 {
		N, R, B := b["nir"], b["red"], b["blue"]
		g, C1, C2, L := 2.5, 6.0, 7.5, 1.0
		return g * (N - R) / (N + C1*R - C2*B + L)
	},
	"evi2": func(b map[string]float64) float64 {
		N, R := b["nir"], b["red"]
		g, L := 2.5, 1.0
		return g * (N - R) / (N + 2.4*R + L)
	},
	"savi": func(b map[string]float64) float64 {
		N, R := b["nir"], b["red"]
		L := 0.5
		return (1.0 + L) * (N - R) / (N + R + L)
	},
	"msavi2": func(b map[string]float64) float64 {
		N, R := b["nir"], b["red"]
		return 0.5 * (2.0*N + 1 - math.Pow(math.Pow(2*N+1, 2)-8*(N-R), 0.5))
	},
	"osavi": func(b map[string]float64) float64 { N, R := b["nir"], b["red"]; return (N - R) / (N + R + 0.16) },
	"gndvi": func(b map[string]float64) float64 { N, G := b["nir"], b["green"]; return (N - G) / (N + G) },
	"ndre":  func(b map[string]float64) float64 { N, RE1 := b["nir"], b["rededge1"]; return (N - RE1) / (N + RE1) },
	"ndvi705": func(b map[string]float64) float64 {
		RE2, RE1 := b["rededge2"], b["rededge1"]
		return (RE2 - RE1) / (RE2 + RE1)
	},
	"ndmi":  func(b map[string]float64) float64 { N, S1 := b["nir"], b["swir1"]; return (N - S1) / (N + S1) },
	"nbr":   func(b map[string]float64) float64 { N, S2 := b["nir"], b["swir2"]; return (N - S2) / (N + S2) },
	"nbr2":  func(b map[string]float64) float64 { S1, S2 := b["swir1"], b["swir2"]; return (S1 - S2) / (S1 + S2) },
	"ndwi":  func(b map[string]float64) float64 { G, N := b["green"], b["nir"]; return (G - N) / (G + N) },
	"mndwi": func(b map[string]float64) float64 { G, S1 := b["green"], b["swir1"]; return (G - S1) / (G + S1) },
}

// pixels are reflectances of a few surfaces (forest, grass, soil, water,
// burnt, then a bright snow-like one last, on which EVI leaves its display
// range: its denominator nears zero where blue is bright).
var pixels = []map[string]float64{
	{"blue": 0.02, "green": 0.05, "red": 0.03, "rededge1": 0.08, "rededge2": 0.25, "rededge3": 0.31, "nir": 0.35, "nir2": 0.36, "swir1": 0.15, "swir2": 0.07},
	{"blue": 0.05, "green": 0.09, "red": 0.06, "rededge1": 0.12, "rededge2": 0.30, "rededge3": 0.36, "nir": 0.41, "nir2": 0.42, "swir1": 0.22, "swir2": 0.12},
	{"blue": 0.11, "green": 0.15, "red": 0.19, "rededge1": 0.21, "rededge2": 0.23, "rededge3": 0.25, "nir": 0.27, "nir2": 0.28, "swir1": 0.33, "swir2": 0.29},
	{"blue": 0.07, "green": 0.06, "red": 0.04, "rededge1": 0.03, "rededge2": 0.025, "rededge3": 0.02, "nir": 0.015, "nir2": 0.014, "swir1": 0.008, "swir2": 0.005},
	{"blue": 0.04, "green": 0.05, "red": 0.07, "rededge1": 0.09, "rededge2": 0.11, "rededge3": 0.12, "nir": 0.12, "nir2": 0.13, "swir1": 0.21, "swir2": 0.24},
	{"blue": 0.9, "green": 0.88, "red": 0.85, "rededge1": 0.8, "rededge2": 0.78, "rededge3": 0.77, "nir": 0.75, "nir2": 0.74, "swir1": 0.1, "swir2": 0.06},
}

func TestCatalogueValues(t *testing.T) {
	cat := index.Catalogue()
	if len(cat) < 10 {
		t.Fatalf("catalogue has %d entries", len(cat))
	}
	for _, want := range []string{"ndvi", "evi", "evi2", "savi", "msavi2", "gndvi", "ndre", "ndmi", "nbr", "ndwi"} {
		if _, ok := index.Lookup(want); !ok {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	for _, c := range cat {
		ref, ok := asi[c.Name]
		if !ok {
			t.Errorf("%s: no independent formula in the test", c.Name)
			continue
		}
		for i, p := range pixels {
			// Only the index's roles are set: it must not read others.
			sub := map[string]float64{}
			for _, r := range c.Roles {
				sub[r] = p[r]
			}
			got := c.Expr.Eval64(px(sub))
			want := ref(p)
			if math.IsNaN(got) || math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("%s on pixel %d = %v, want %v", c.Name, i, got, want)
			}
			if i < len(pixels)-1 && want < c.Range[0]-1e-9 || want > c.Range[1]+1e-9 {
				t.Errorf("%s on pixel %d = %v, outside its range %v", c.Name, i, want, c.Range)
			}
		}
	}
}

// TestCatalogueEntries checks every entry is complete and consistent.
func TestCatalogueEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range index.Catalogue() {
		if seen[c.Name] || c.Name != strings.ToLower(c.Name) {
			t.Errorf("bad or duplicate name %q", c.Name)
		}
		seen[c.Name] = true
		if c.Description == "" || c.Reference == "" || c.ASIKey == "" || !strings.HasPrefix(c.Paper, "https://") {
			t.Errorf("%s: incomplete entry %+v", c.Name, c)
		}
		if strings.Contains(c.Description, "\n") {
			t.Errorf("%s: description is more than one line", c.Name)
		}
		e, err := index.Parse(c.Formula)
		if err != nil || !e.Equal(c.Expr) {
			t.Errorf("%s: formula %q does not parse to its Expr (%v)", c.Name, c.Formula, err)
		}
		if strings.Join(c.Roles, ",") != strings.Join(e.Roles(), ",") || len(c.Roles) == 0 {
			t.Errorf("%s: roles %v, formula uses %v", c.Name, c.Roles, e.Roles())
		}
		if !(c.Range[0] < c.Range[1]) {
			t.Errorf("%s: range %v", c.Name, c.Range)
		}
	}
}

var nan, inf = math.NaN(), math.Inf(1)

// ruleCases are the result rules on hand-made cases, for Eval64 and Eval32.
var ruleCases = []struct {
	src  string
	in   map[string]float64
	want float64
}{
	{"0 / 0", nil, nan},
	{"1 / 0", nil, nan},
	{"nir / red", map[string]float64{"nir": 1, "red": 0}, nan},
	{"nir / red", map[string]float64{"nir": 1, "red": math.Copysign(0, -1)}, nan},
	{"nir / red", map[string]float64{"nir": 0, "red": 0}, nan},
	{"(nir - red) / (nir + red)", map[string]float64{"nir": 0.5, "red": -0.5}, nan},
	{"nir / red", map[string]float64{"nir": 0, "red": 2}, 0},
	{"nir / red", map[string]float64{"nir": 3, "red": inf}, 0},
	{"nir / red", map[string]float64{"nir": inf, "red": 2}, nan},
	{"nir + red", map[string]float64{"nir": nan, "red": 2}, nan},
	{"nir * 0", map[string]float64{"nir": nan}, nan},
	{"nir * 0", map[string]float64{"nir": inf}, nan},
	{"nir - nir", map[string]float64{"nir": inf}, nan},
	{"nir", map[string]float64{"nir": -inf}, nan},
	{"1 / nir", map[string]float64{"nir": inf}, 0},
	{"1 / (nir * 1e30 * 1e30 * 1e30 * 1e30 * 1e30 * 1e30 * 1e30 * 1e30 * 1e30 * 1e30 * 1e30)", map[string]float64{"nir": 1}, 0},
	{"nir * 1e38", map[string]float64{"nir": 1e300}, nan},
	{"sqrt(nir)", map[string]float64{"nir": -1}, nan},
	{"sqrt(-1)", nil, nan},
	{"sqrt(nir)", map[string]float64{"nir": 0}, 0},
	{"sqrt(nir)", map[string]float64{"nir": 2.25}, 1.5},
	{"sqrt(nir)", map[string]float64{"nir": inf}, nan},
	{"min(nir, red)", map[string]float64{"nir": nan, "red": 1}, nan},
	{"min(nir, red)", map[string]float64{"nir": 1, "red": nan}, nan},
	{"max(nir, red)", map[string]float64{"nir": nan, "red": 1}, nan},
	{"max(nir, red)", map[string]float64{"nir": 1, "red": nan}, nan},
	{"min(nir, red)", map[string]float64{"nir": 1, "red": 2}, 1},
	{"max(nir, red)", map[string]float64{"nir": 1, "red": 2}, 2},
	{"min(nir, red)", map[string]float64{"nir": -inf, "red": 2}, nan},
	{"max(min(nir, 5), 1)", map[string]float64{"nir": inf}, 5},
	{"clamp(nir, 0, 1)", map[string]float64{"nir": 2}, 1},
	{"clamp(nir, 0, 1)", map[string]float64{"nir": -2}, 0},
	{"clamp(nir, 0, 1)", map[string]float64{"nir": 0.25}, 0.25},
	{"clamp(nir, 1, 0)", map[string]float64{"nir": 0.25}, 0},
	{"clamp(nir, 0, 1)", map[string]float64{"nir": nan}, nan},
	{"clamp(nir, red, 1)", map[string]float64{"nir": 0.5, "red": nan}, nan},
	{"clamp(nir, 0, red)", map[string]float64{"nir": 0.5, "red": nan}, nan},
	{"clamp(nir, 0, 1)", map[string]float64{"nir": inf}, 1},
	{"abs(nir)", map[string]float64{"nir": -inf}, nan},
	{"abs(nir - red)", map[string]float64{"nir": 1, "red": 3}, 2},
	{"-nir", map[string]float64{"nir": 2}, -2},
	{"nir - red * 2", map[string]float64{"nir": 1, "red": 3}, -5},
	{"nir - red - blue", map[string]float64{"nir": 1, "red": 2, "blue": 3}, -4},
	{"nir / red / blue", map[string]float64{"nir": 8, "red": 2, "blue": 4}, 1},
	{"-nir * red", map[string]float64{"nir": 2, "red": 3}, -6},
	{"--nir", map[string]float64{"nir": 2}, 2},
	{"0 * nir", map[string]float64{"nir": 1}, 0},
}

// TestNaNRules checks the result rules on hand-made cases.
func TestNaNRules(t *testing.T) {
	for _, c := range ruleCases {
		got := index.MustParse(c.src).Eval64(px(c.in))
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && got != c.want {
			t.Errorf("%s with %v = %v, want %v", c.src, c.in, got, c.want)
		}
	}
}

func TestLookupResolve(t *testing.T) {
	if c, ok := index.Lookup(" NDVI "); !ok || c.Name != "ndvi" {
		t.Errorf("Lookup(NDVI) = %v %v", c.Name, ok)
	}
	if _, ok := index.Lookup("ndvx"); ok {
		t.Error("Lookup(ndvx) found something")
	}
	name, e, err := index.Resolve("EVI")
	if err != nil || name != "evi" || !e.Equal(index.MustParse("2.5*(nir-red)/(nir+6*red-7.5*blue+1)")) {
		t.Errorf("Resolve(EVI) = %q %v %v", name, e, err)
	}
	name, e, err = index.Resolve("(NIR-swir1)/( nir+swir1 )")
	if err != nil || name != "(nir - swir1) / (nir + swir1)" || e == nil {
		t.Errorf("Resolve(formula) = %q %v %v", name, e, err)
	}
	if name, _, err = index.Resolve("nir"); err != nil || name != "nir" {
		t.Errorf("Resolve(nir) = %q %v", name, err)
	}
	_, _, err = index.Resolve("ndvii")
	if err == nil || !strings.Contains(err.Error(), `unknown index "ndvii"`) || !strings.Contains(err.Error(), "ndvi, evi") {
		t.Errorf("Resolve(ndvii): %v", err)
	}
	if _, _, err = index.Resolve("nir +"); err == nil || err.Error() != `column 5: missing operand after "+"` {
		t.Errorf("Resolve(nir +): %v", err)
	}
}

func TestParseList(t *testing.T) {
	got, err := index.ParseList("ndvi, EVI,ndmi")
	if err != nil || len(got) != 3 || got[0].Name != "ndvi" || got[1].Name != "evi" || got[2].Name != "ndmi" {
		t.Fatalf("ParseList = %v, %v", got, err)
	}
	for list, want := range map[string]string{
		"ndvi,foo":  `unknown index "foo" (indices: ndvi, evi, `,
		"ndvi,,evi": `empty index name in "ndvi,,evi"`,
		"":          `empty index name`,
		"ndvi,NDVI": `index "ndvi" given twice`,
	} {
		_, err := index.ParseList(list)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseList(%q): %v, want %s...", list, err, want)
		}
	}
}

// TestIndicesDoc keeps docs/INDICES.md's catalogue table in step with the
// catalogue.
func TestIndicesDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/INDICES.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), index.MarkdownTable()) {
		t.Errorf("docs/INDICES.md does not contain the catalogue table; paste index.MarkdownTable() into it:\n%s", index.MarkdownTable())
	}
	if !strings.Contains(string(doc), index.ASIURL) {
		t.Error("docs/INDICES.md does not cite Awesome Spectral Indices")
	}
}
