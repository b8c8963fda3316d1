package vector

import "testing"

func TestDefaultIDField(t *testing.T) {
	for _, c := range []struct {
		fields []string
		want   string
	}{
		{[]string{"area", "Name", "ID"}, "ID"},
		{[]string{"name", "Stand"}, "Stand"},
		{[]string{"owner", "name"}, "name"},
		{[]string{"stand_id", "id_old"}, "stand_id"},
		{[]string{"area", "owner"}, ""},
		{nil, ""},
	} {
		l := &Layer{}
		for _, f := range c.fields {
			l.Fields = append(l.Fields, Field{Name: f, Type: "TEXT"})
		}
		if got := l.DefaultIDField(); got != c.want {
			t.Errorf("fields %v: %q, want %q", c.fields, got, c.want)
		}
	}
}
