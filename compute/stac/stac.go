// Package stac searches STAC APIs (Earth Search, Microsoft's Planetary
// Computer, any server of the STAC API Item Search specification) for the
// scenes over an area and a season: POST /search with the collections,
// the bounding box (or a GeoJSON geometry, such as the stands' extent),
// the datetime interval and a cloud-cover ceiling (the query extension's
// eo:cloud_cover, checked again on every item for servers that ignore
// it), then every page through the `next` links as the specification
// has them (GET, or POST with a body that replaces the request's or is
// merged into it). A 429 or 5xx answer is retried with backoff, honouring
// Retry-After; pages, items and bytes are bounded.
//
// A CQL2-JSON filter (Query.Filter) may go with the query.
//
// Items are kept as the server sent them (Item.Raw, for a search result
// file that compute/scene's STAC item reader opens) with the few fields a
// list of scenes shows: date, cloud cover, platform, projection, assets
// with their roles, raster:bands, grids and requester-pays flag.
// MarshalResult writes a search's result file (a STAC ItemCollection) and
// ReadResult reads one back as a stack's dates, each item to be opened
// with compute/scene's OpenItem; ResultSources gives them as paths and
// dates (each item kept as a local item file by SaveItem). A Client's
// Progress hears each page.
//
// PCSigner signs Planetary Computer asset links (Azure Blob Storage) with
// the SAS token of their storage account and container, fetched from the
// Planetary Computer's token endpoint and reused until a minute before it
// expires; it is a compute/remote Signer. Preview reads an item's red,
// green and blue bands from the smallest overview of its COGs that still
// has the side asked for, for a thumbnail.
package stac

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"canopy/compute/internal/retry"
)

// Known APIs.
const (
	EarthSearch       = "https://earth-search.aws.element84.com/v1"
	PlanetaryComputer = "https://planetarycomputer.microsoft.com/api/stac/v1"
)

// Limits of one search.
const (
	maxPageBytes = 64 << 20
	maxPages     = 1000
	// DefaultMaxItems bounds a search's items unless Query.MaxItems says.
	DefaultMaxItems = 10000
)

// Query is one search.
type Query struct {
	// API is the STAC API's root (its /search is posted to); default
	// EarthSearch. A URL ending in /search is taken as the endpoint.
	API string
	// Collections to search ("sentinel-2-l2a", "landsat-c2-l2").
	Collections []string
	// BBox is west, south, east, north in degrees (WGS 84); nil for
	// none. Intersects, a GeoJSON geometry, is used instead when set.
	BBox       []float64
	Intersects json.RawMessage
	// Datetime is an RFC 3339 interval ("2024-05-01/2024-09-30"; dates
	// are completed to the start and end of their days, UTC; ".." for
	// open).
	Datetime string
	// MaxCloud is the highest eo:cloud_cover (percent) kept; < 0 keeps
	// every item.
	MaxCloud float64
	// Filter is a CQL2-JSON filter (the Filter extension, which Earth
	// Search and the Planetary Computer answer), sent as it is; nil for
	// none.
	Filter json.RawMessage
	// Limit is the page size asked for (default 100); MaxItems bounds the
	// search (default DefaultMaxItems).
	Limit, MaxItems int
}

// Item is one STAC item of a search.
type Item struct {
	ID         string
	Collection string
	// Date is the acquisition time (properties.datetime, else
	// start_datetime), UTC.
	Date time.Time
	// Cloud is eo:cloud_cover in percent, NaN when the item has none.
	Cloud    float64
	Platform string
	// EPSG is the item's proj:epsg (or the number of its proj:code
	// "EPSG:N"), 0 when it has none.
	EPSG   int
	BBox   []float64
	Assets map[string]Asset
	// Links are the item's links ("self": the item's own URL).
	Links []Link
	// Raw is the item as the server sent it.
	Raw json.RawMessage
}

// Asset is one of an item's files.
type Asset struct {
	Href  string   `json:"href"`
	Type  string   `json:"type,omitempty"`
	Title string   `json:"title,omitempty"`
	Roles []string `json:"roles,omitempty"`
	// ProjShape (rows, columns) and ProjTransform (the affine transform,
	// GDAL's order a, b, c, d, e, f as the projection extension has it)
	// are the asset's grid, when the item says.
	ProjShape     []int     `json:"proj:shape,omitempty"`
	ProjTransform []float64 `json:"proj:transform,omitempty"`
	// RequesterPays is the storage extension's storage:requester_pays:
	// the bucket bills the reader, so an unsigned HTTPS request is
	// refused (Earth Search's Landsat and Sentinel-2 JPEG 2000 assets).
	RequesterPays bool `json:"storage:requester_pays,omitempty"`
	// EOBands and RasterBands are the asset's eo:bands and raster:bands.
	EOBands []struct {
		Name       string `json:"name,omitempty"`
		CommonName string `json:"common_name,omitempty"`
	} `json:"eo:bands,omitempty"`
	RasterBands []struct {
		NoData     any      `json:"nodata,omitempty"`
		Scale      *float64 `json:"scale,omitempty"`
		Offset     *float64 `json:"offset,omitempty"`
		DataType   string   `json:"data_type,omitempty"`
		Resolution float64  `json:"spatial_resolution,omitempty"`
	} `json:"raster:bands,omitempty"`
}

// Link is a STAC link of an item.
type Link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	Type string `json:"type,omitempty"`
}

// HasRole reports whether the asset has role r ("data", "overview",
// "thumbnail", "cloud").
func (a Asset) HasRole(r string) bool {
	for _, x := range a.Roles {
		if x == r {
			return true
		}
	}
	return false
}

// Client sends searches. The zero value uses http.DefaultClient's
// transport with a per-request time limit.
type Client struct {
	// HTTP is the client requests go through (nil: a default one).
	HTTP *http.Client
	// Retries is how many times a 429, 5xx or broken request is tried
	// again (default 5); BackoffBase the first wait (default 500 ms),
	// doubled each time up to a minute; a Retry-After is honoured up to
	// MaxRetryAfter (default 2 minutes).
	Retries       int
	BackoffBase   time.Duration
	MaxRetryAfter time.Duration
	// Requests counts the requests sent (for tests and the benchmark).
	Requests int
	// Progress, when set, is called after each page with the pages read,
	// the items kept so far and the items the server says the search
	// matches (-1 when it does not say).
	Progress func(pages, items, matched int)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 5 * time.Minute}
}

// SearchURL is the search endpoint of an API root.
func SearchURL(api string) string {
	if api == "" {
		api = EarthSearch
	}
	api = strings.TrimRight(api, "/")
	if strings.HasSuffix(api, "/search") {
		return api
	}
	return api + "/search"
}

// Body is the JSON body of the search's first POST.
func (q Query) Body() (map[string]any, error) {
	body := map[string]any{}
	if len(q.Collections) > 0 {
		body["collections"] = q.Collections
	}
	switch {
	case len(q.Intersects) > 0:
		body["intersects"] = q.Intersects
	case q.BBox != nil:
		if len(q.BBox) != 4 {
			return nil, fmt.Errorf("a bounding box is west,south,east,north: %d numbers given", len(q.BBox))
		}
		w, s, e, n := q.BBox[0], q.BBox[1], q.BBox[2], q.BBox[3]
		if !(w >= -180 && e <= 180 && s >= -90 && n <= 90 && s <= n) {
			return nil, fmt.Errorf("bounding box %g,%g,%g,%g is not west,south,east,north in degrees", w, s, e, n)
		}
		body["bbox"] = q.BBox
	}
	if q.Datetime != "" {
		dt, err := Interval(q.Datetime)
		if err != nil {
			return nil, err
		}
		body["datetime"] = dt
	}
	if len(q.Filter) > 0 {
		if !json.Valid(q.Filter) {
			return nil, fmt.Errorf("the filter is not JSON (CQL2-JSON is)")
		}
		body["filter"] = q.Filter
		body["filter-lang"] = "cql2-json"
	}
	if q.MaxCloud >= 0 {
		body["query"] = map[string]any{"eo:cloud_cover": map[string]any{"lte": q.MaxCloud}}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	body["limit"] = limit
	return body, nil
}

// Interval turns "A/B" (dates or RFC 3339 times, ".." or "" for open)
// into the RFC 3339 interval a STAC API takes: a date A is the start of
// its day, a date B the end of its day, UTC. A single date is that day.
func Interval(s string) (string, error) {
	a, b, two := strings.Cut(strings.TrimSpace(s), "/")
	if !two {
		b = a
	}
	conv := func(v string, end bool) (string, error) {
		v = strings.TrimSpace(v)
		if v == "" || v == ".." {
			return "..", nil
		}
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t.UTC().Format(time.RFC3339), nil
		}
		d, err := time.Parse("2006-01-02", v)
		if err != nil {
			return "", fmt.Errorf("datetime %q: %q is neither a date (2024-05-01) nor an RFC 3339 time", s, v)
		}
		if end {
			d = d.Add(24*time.Hour - time.Second)
		}
		return d.Format(time.RFC3339), nil
	}
	x, err := conv(a, false)
	if err != nil {
		return "", err
	}
	y, err := conv(b, true)
	if err != nil {
		return "", err
	}
	if x != ".." && y != ".." && x > y {
		return "", fmt.Errorf("datetime %q: the interval ends before it starts", s)
	}
	if x == ".." && y == ".." {
		return "", fmt.Errorf("datetime %q: open at both ends", s)
	}
	return x + "/" + y, nil
}

// link is a STAC link, with the request fields of a paging link.
type link struct {
	Rel     string            `json:"rel"`
	Href    string            `json:"href"`
	Method  string            `json:"method"`
	Body    map[string]any    `json:"body"`
	Merge   bool              `json:"merge"`
	Headers map[string]string `json:"headers"`
}

// page is one answer of a search.
type page struct {
	Type     string            `json:"type"`
	Features []json.RawMessage `json:"features"`
	Links    []link            `json:"links"`
	// NumberMatched (OGC API Features) or the context extension's
	// matched: the search's items on every page, when the server says.
	NumberMatched *int `json:"numberMatched"`
	Context       struct {
		Matched *int `json:"matched"`
	} `json:"context"`
}

// Search runs q and returns its items in the server's order, every page
// followed. Items above q.MaxCloud are left out even when the server did
// not filter them.
func (c *Client) Search(ctx context.Context, q Query) ([]Item, error) {
	body, err := q.Body()
	if err != nil {
		return nil, err
	}
	search := SearchURL(q.API)
	if u, err := url.Parse(search); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the STAC API %q is not an http(s) URL", q.API)
	}
	maxItems := q.MaxItems
	if maxItems <= 0 {
		maxItems = DefaultMaxItems
	}
	var items []Item
	seen := map[string]bool{}
	method, target, hdr := http.MethodPost, search, map[string]string(nil)
	for pages := 0; ; pages++ {
		if pages == maxPages {
			return nil, fmt.Errorf("%s: more than %d pages; narrow the search", search, maxPages)
		}
		key := method + " " + target
		if body != nil {
			b, _ := json.Marshal(body)
			key += " " + string(b)
		}
		if seen[key] {
			return nil, fmt.Errorf("%s: the server's next page is a page already read (a paging loop)", search)
		}
		seen[key] = true
		p, err := c.page(ctx, method, target, body, hdr)
		var st statusError
		if err != nil && errors.As(err, &st) && st.code == http.StatusMethodNotAllowed && method == http.MethodPost && target != search {
			// A next link pointing at the wrong endpoint (the
			// Planetary Computer has answered with its API's root): the
			// body goes to the search endpoint, as pystac-client does.
			target = search
			p, err = c.page(ctx, method, target, body, hdr)
		}
		if err != nil {
			return nil, err
		}
		report := func() {
			if c.Progress == nil {
				return
			}
			matched := -1
			if p.NumberMatched != nil {
				matched = *p.NumberMatched
			} else if p.Context.Matched != nil {
				matched = *p.Context.Matched
			}
			c.Progress(pages+1, len(items), matched)
		}
		for _, raw := range p.Features {
			it, err := parseItem(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", search, err)
			}
			if q.MaxCloud >= 0 && !math.IsNaN(it.Cloud) && it.Cloud > q.MaxCloud {
				continue
			}
			items = append(items, it)
			if len(items) >= maxItems {
				report()
				return items, nil
			}
		}
		report()
		var next *link
		for i := range p.Links {
			if p.Links[i].Rel == "next" {
				next = &p.Links[i]
				break
			}
		}
		if next == nil || len(p.Features) == 0 {
			return items, nil
		}
		if next.Href == "" {
			next.Href = target
		}
		nu, err := url.Parse(search)
		if err == nil {
			var ref *url.URL
			if ref, err = url.Parse(next.Href); err == nil {
				nu = nu.ResolveReference(ref)
			}
		}
		if err != nil || (nu.Scheme != "http" && nu.Scheme != "https") {
			return nil, fmt.Errorf("%s: the next page's link %q is not an http(s) URL", search, clip(next.Href))
		}
		target, hdr = nu.String(), next.Headers
		if strings.EqualFold(next.Method, http.MethodPost) {
			method = http.MethodPost
			switch {
			case next.Merge:
				merged := map[string]any{}
				for k, v := range body {
					merged[k] = v
				}
				for k, v := range next.Body {
					merged[k] = v
				}
				body = merged
			case next.Body != nil:
				body = next.Body
			}
		} else {
			method, body = http.MethodGet, nil
		}
	}
}

// statusError is an HTTP answer other than 200.
type statusError struct {
	code   int
	status string
	detail string
}

func (e statusError) Error() string {
	if e.detail != "" {
		return "the server answers " + e.status + ": " + e.detail
	}
	return "the server answers " + e.status
}

// page sends one request of a search, retrying 429, 5xx and broken
// connections.
func (c *Client) page(ctx context.Context, method, target string, body map[string]any, hdr map[string]string) (*page, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	var p *page
	err := c.policy().Do(ctx, func(int) retry.Outcome {
		var o retry.Outcome
		p, o = c.once(ctx, method, target, payload, hdr)
		return o
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", redact(target), err)
	}
	return p, nil
}

// policy is the Client's retry policy.
func (c *Client) policy() retry.Policy {
	base := c.BackoffBase
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	return retry.Policy{Retries: c.Retries, Base: base, Max: time.Minute, MaxAfter: c.MaxRetryAfter}
}

// once sends one request: the page, or the try's outcome (the error,
// whether it may be retried, the wait the server asked for).
func (c *Client) once(ctx context.Context, method, target string, payload []byte, hdr map[string]string) (*page, retry.Outcome) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, retry.Outcome{Err: err}
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/geo+json, application/json")
	req.Header.Set("User-Agent", "canopy")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c.Requests++
	resp, err := c.http().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// A server that is not there (refused, no such host) stays so;
		// a broken or timed-out exchange may mend.
		if retry.Unreachable(err) {
			return nil, retry.Outcome{Err: err}
		}
		return nil, retry.Outcome{Err: err, Retry: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		se := statusError{resp.StatusCode, resp.Status, oneLine(string(msg))}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, retry.Outcome{Err: se, Retry: true, Busy: true, After: retry.After(resp.Header.Get("Retry-After"))}
		}
		return nil, retry.Outcome{Err: se}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, retry.Outcome{Err: err, Retry: true}
	}
	if len(data) > maxPageBytes {
		return nil, retry.Outcome{Err: fmt.Errorf("a page of results is larger than %d MiB", maxPageBytes>>20)}
	}
	var p page
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, retry.Outcome{Err: fmt.Errorf("the answer is not JSON: %v", clip(err.Error()))}
	}
	if p.Type != "FeatureCollection" {
		return nil, retry.Outcome{Err: fmt.Errorf("the answer is not a STAC ItemCollection (type %q)", clip(p.Type))}
	}
	return &p, retry.Outcome{}
}

// parseItem reads the fields of an item a list shows.
func parseItem(raw json.RawMessage) (Item, error) {
	var it struct {
		Type       string           `json:"type"`
		ID         string           `json:"id"`
		Collection string           `json:"collection"`
		BBox       []float64        `json:"bbox"`
		Properties map[string]any   `json:"properties"`
		Assets     map[string]Asset `json:"assets"`
		Links      []Link           `json:"links"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return Item{}, fmt.Errorf("an item is malformed: %v", clip(err.Error()))
	}
	if it.Type != "Feature" || it.ID == "" {
		return Item{}, fmt.Errorf("an item is not a STAC item (a GeoJSON Feature with an id)")
	}
	out := Item{ID: it.ID, Collection: it.Collection, BBox: it.BBox, Assets: it.Assets, Links: it.Links, Raw: raw, Cloud: math.NaN()}
	str := func(k string) string { s, _ := it.Properties[k].(string); return s }
	for _, k := range []string{"datetime", "start_datetime"} {
		if t, err := time.Parse(time.RFC3339Nano, str(k)); err == nil {
			out.Date = t.UTC()
			break
		}
	}
	if v, ok := it.Properties["eo:cloud_cover"].(float64); ok {
		out.Cloud = v
	}
	out.Platform = str("platform")
	switch v := it.Properties["proj:epsg"].(type) {
	case float64:
		if v > 0 && v < 1e6 && v == math.Trunc(v) {
			out.EPSG = int(v)
		}
	case nil:
		if c, ok := strings.CutPrefix(str("proj:code"), "EPSG:"); ok {
			if n, err := strconv.Atoi(c); err == nil && n > 0 {
				out.EPSG = n
			}
		}
	}
	return out, nil
}

func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(s), " "))
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// redact drops a URL's query for messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return clip(u)
	}
	p.RawQuery, p.User = "", nil
	return clip(p.String())
}
