package index

import (
	"strings"
	"testing"
)

// TestNearestRole: typos of roles suggest the role meant; words far from
// every role suggest nothing.
func TestNearestRole(t *testing.T) {
	for in, want := range map[string]string{
		"rde": "red", "RDE": "red", "nri": "nir", "niir": "nir", "swir": "swir1", "gren": "green",
		"bleu": "blue", "rededge": "rededge1", "nir3": "nir", "ndvi": "", "alpha": "", "x": "", "red": "",
	} {
		if got := NearestRole(in); got != want {
			t.Errorf("NearestRole(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseUnknownRoleSuggests: the formula parser's unknown role names
// the nearest.
func TestParseUnknownRoleSuggests(t *testing.T) {
	_, err := Parse("(nir - rde) / (nir + red)")
	if err == nil || !strings.Contains(err.Error(), `unknown role "rde": did you mean "red"?`) {
		t.Fatalf("Parse: %v", err)
	}
}
