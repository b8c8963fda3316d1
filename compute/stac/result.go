package stac

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"canopy/compute/outfile"
)

// maxResultBytes bounds a saved search result file.
const maxResultBytes = 256 << 20

// ErrNotResult is ReadResult's error (wrapped) for a JSON file that is
// not a STAC ItemCollection, such as a single STAC item: the caller opens
// it as an item instead.
var ErrNotResult = errors.New("not a STAC ItemCollection (a saved search)")

// Result is a saved search: `canopy search --json` or `--out`, or any STAC
// ItemCollection (an API's /search answer, pystac-client's
// `stac-client search --save`).
type Result struct {
	// Path is the file read.
	Path string
	// API is the search endpoint that answered (the file's
	// "canopy:search" member), "" when the file does not say.
	API string
	// Items are the scenes in acquisition order (Item.Date, then ID),
	// each once (a repeated ID is kept the first time).
	Items []Item
}

// ReadResult reads a saved search for a stack: each item is one date of
// it, opened with compute/scene's OpenItem (the item's JSON as the API
// sent it, Item.Raw, and its own URL, Item.Href, which relative asset
// links resolve against). An item without an acquisition time is an
// error naming it: a stack's dates come from them. A JSON document that
// is not a FeatureCollection is ErrNotResult.
func ReadResult(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxResultBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(b) > maxResultBytes {
		return nil, fmt.Errorf("%s: a search result larger than %d MiB", path, maxResultBytes>>20)
	}
	var doc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
		Search   struct {
			API string `json:"api"`
		} `json:"canopy:search"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: not JSON: %v", path, clip(err.Error()))
	}
	if doc.Type != "FeatureCollection" {
		return nil, fmt.Errorf("%s: %w (type %q)", path, ErrNotResult, clip(doc.Type))
	}
	r := &Result{Path: path, API: doc.Search.API}
	seen := map[string]bool{}
	for i, raw := range doc.Features {
		it, err := parseItem(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: feature %d: %w", path, i+1, err)
		}
		if it.Date.IsZero() {
			return nil, fmt.Errorf("%s: item %s has no acquisition time (properties.datetime)", path, clip(it.ID))
		}
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		r.Items = append(r.Items, it)
	}
	sort.SliceStable(r.Items, func(i, j int) bool {
		a, b := r.Items[i], r.Items[j]
		if !a.Date.Equal(b.Date) {
			return a.Date.Before(b.Date)
		}
		return a.ID < b.ID
	})
	return r, nil
}

// Href is the item's own URL (its "self" link, http or https), which
// compute/scene resolves relative asset links against; "" when it has
// none.
func (it Item) Href() string {
	for _, l := range it.Links {
		if l.Rel == "self" && (strings.HasPrefix(l.Href, "https://") || strings.HasPrefix(l.Href, "http://")) {
			return l.Href
		}
	}
	return ""
}

// SearchInfo is what a saved search records of its query, as the
// "canopy:search" member of the file.
type SearchInfo struct {
	API         string    `json:"api"`
	Collections []string  `json:"collections,omitempty"`
	BBox        []float64 `json:"bbox,omitempty"`
	Datetime    string    `json:"datetime,omitempty"`
	// MaxCloud is the cloud ceiling in percent, nil for none.
	MaxCloud *float64 `json:"max_cloud"`
	// Searched is when the search ran (RFC 3339, UTC).
	Searched string `json:"searched,omitempty"`
}

// MarshalResult is a search's result file: a STAC ItemCollection of the
// items as the API sent them (links unsigned: a Planetary Computer item is
// signed when it is read) with the query in "canopy:search", one JSON
// document and a newline. ReadResult reads it back.
func MarshalResult(items []Item, info SearchInfo) ([]byte, error) {
	feats := make([]json.RawMessage, len(items))
	for i, it := range items {
		feats[i] = it.Raw
	}
	b, err := json.Marshal(struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
		Search   SearchInfo        `json:"canopy:search"`
	}{"FeatureCollection", feats, info})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SaveItem writes the item's JSON into dir (made when missing) as a STAC
// item file that compute/scene opens without the network for its
// metadata: the item as the API sent it, its relative asset links made
// absolute against its own URL. The file is named by the item's ID and a
// hash of its URL; an existing one is replaced. It returns the path.
func SaveItem(dir string, it Item) (string, error) {
	var doc map[string]any
	if err := json.Unmarshal(it.Raw, &doc); err != nil {
		return "", fmt.Errorf("item %s: %v", clip(it.ID), err)
	}
	self := it.Href()
	var base *url.URL
	if self != "" {
		base, _ = url.Parse(self)
	}
	if assets, ok := doc["assets"].(map[string]any); ok {
		for k, v := range assets {
			a, ok := v.(map[string]any)
			if !ok {
				continue
			}
			h, _ := a["href"].(string)
			if h == "" || strings.Contains(h, "://") || strings.HasPrefix(h, "/") {
				continue
			}
			if base == nil {
				return "", fmt.Errorf("item %s: asset %s's link %q is relative and the item has no link of its own", clip(it.ID), k, clip(h))
			}
			ref, err := url.Parse(h)
			if err != nil {
				return "", fmt.Errorf("item %s: asset %s: %v", clip(it.ID), k, err)
			}
			a["href"] = base.ResolveReference(ref).String()
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(it.Collection + "\n" + it.ID + "\n" + self))
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, it.ID)
	if len(safe) > 100 {
		safe = safe[:100]
	}
	p := filepath.Join(dir, safe+"-"+hex.EncodeToString(h[:4])+".json")
	err = outfile.WriteFile(p, func(w *outfile.Writer) error { _, err := w.Write(b); return err })
	return p, err
}

// Source is one date of a stack made from a saved search: a path that
// compute/scene opens (and compute/source, compute/stack) and the
// item's acquisition time.
type Source struct {
	Path string
	// Date is the acquisition time (UTC); ID and Cloud (percent, NaN
	// when the item has none) are the item's.
	Date  time.Time
	ID    string
	Cloud float64
}

// ResultSources reads the saved search at path (ReadResult) as a stack's
// sources, in acquisition order: each item written into dir as a local
// STAC item file (SaveItem: its metadata read without the network, its
// assets over it), or, with dir "", named by its own link (its metadata
// fetched again). A file that is not a saved search is ErrNotResult
// (wrapped).
func ResultSources(path, dir string) ([]Source, error) {
	r, err := ReadResult(path)
	if err != nil {
		return nil, err
	}
	out := make([]Source, 0, len(r.Items))
	for _, it := range r.Items {
		s := Source{Date: it.Date, ID: it.ID, Cloud: it.Cloud}
		if dir != "" {
			if s.Path, err = SaveItem(dir, it); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		} else if s.Path = it.Href(); s.Path == "" {
			return nil, fmt.Errorf("%s: item %s has no link of its own to open it by", path, clip(it.ID))
		}
		out = append(out, s)
	}
	return out, nil
}
