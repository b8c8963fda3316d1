package vector

import "strings"

// idFieldNames are the attribute names that usually name a stand, in the
// order they are preferred.
var idFieldNames = []string{"id", "stand_id", "standid", "stand", "name"}

// DefaultIDField returns the attribute that most likely names the stands:
// the first field (in file order) called id, then stand_id, standid,
// stand, then name, compared without regard to case; "" (the feature id)
// when the layer has none of them.
func (l *Layer) DefaultIDField() string {
	for _, want := range idFieldNames {
		for _, f := range l.Fields {
			if strings.EqualFold(strings.TrimSpace(f.Name), want) {
				return f.Name
			}
		}
	}
	return ""
}
