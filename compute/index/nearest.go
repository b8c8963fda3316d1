package index

import "strings"

// NearestRole returns the band role closest to a name that is not one
// (a typo: "rde" → "red", "nri" → "nir", "swir" → "swir1"), or "" when
// none is near enough to be the likely meaning.
func NearestRole(name string) string {
	return Nearest(name, Roles[:])
}

// Nearest returns the word of words closest to s by edit distance
// (insertions, deletions, substitutions and swaps of two neighbours,
// case ignored), or "" when the closest is further than about a third of
// its length (at most 2 edits, at least 1).
func Nearest(s string, words []string) string {
	s = strings.ToLower(s)
	best, bestD := "", 1<<30
	for _, w := range words {
		d := editDistance(s, strings.ToLower(w))
		if d < bestD {
			best, bestD = w, d
		}
	}
	limit := min(2, max(1, len([]rune(best))/3))
	if best == "" || bestD == 0 || bestD > limit {
		return ""
	}
	return best
}

// DidYouMean is ": did you mean "w"?" for the nearest of words to s, or ""
// when none is near; for the end of an error's first clause.
func DidYouMean(s string, words []string) string {
	if w := Nearest(s, words); w != "" {
		return ": did you mean \"" + w + "\"?"
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30 // no word of ours is that long
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
