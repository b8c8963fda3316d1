package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/geo"
	"canopy/compute/remote"
	"canopy/compute/stac"
	"canopy/ui/render/composite"
)

// archiveState is File › Search the archive…'s: the scenes the last
// search found and the list that shows them.
type archiveState struct {
	items []stac.Item
	list  *widget.List
	open  *widget.Button
	dlg   dialog.Dialog
	// api is the search endpoint of the last search (for messages).
	api string
	// thumbs are the scenes' pictures by list row, drawn from their
	// COGs' overviews; client and signer read them.
	thumbs map[int]image.Image
	client *remote.Client
	signer *stac.PCSigner
}

// thumbSide is a thumbnail's side in pixels; maxThumbs bounds how many
// scenes of a search get one.
const (
	thumbSide = 72
	maxThumbs = 60
)

// archiveAPIs are the STAC APIs the dialog offers, by label.
var archiveAPIs = []struct{ label, url string }{
	{"Earth Search (AWS)", stac.EarthSearch},
	{"Planetary Computer (Microsoft)", stac.PlanetaryComputer},
}

// searchDialog is File › Search the archive…: the area (the part of the
// map on screen, in degrees, or typed), the collection, the season and
// the highest cloud share; the search runs off the event goroutine with
// progress and Cancel, and the scenes found are listed to open.
func (w *Window) searchDialog() {
	labels := make([]string, len(archiveAPIs))
	for i, a := range archiveAPIs {
		labels[i] = a.label
	}
	api := widget.NewSelect(labels, nil)
	api.SetSelectedIndex(0)
	coll := widget.NewSelectEntry([]string{"sentinel-2-l2a", "landsat-c2-l2"})
	coll.SetText("sentinel-2-l2a")
	area := widget.NewEntry()
	area.SetPlaceHolder("west,south,east,north in degrees")
	area.SetText(w.viewBBox())
	now := time.Now().UTC()
	from, to := widget.NewEntry(), widget.NewEntry()
	from.SetText(now.AddDate(0, -6, 0).Format("2006-01-02"))
	to.SetText(now.Format("2006-01-02"))
	cloud := widget.NewEntry()
	cloud.SetText("30")
	items := []*widget.FormItem{
		widget.NewFormItem("Archive", api),
		widget.NewFormItem("Collection", coll),
		widget.NewFormItem("Area", area),
		widget.NewFormItem("From", from),
		widget.NewFormItem("To", to),
		widget.NewFormItem("Cloud at most (%)", cloud),
	}
	d := dialog.NewForm("Search the archive", "Search", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		q, err := archiveQuery(archiveAPIs[max(0, api.SelectedIndex())].url, coll.Text, area.Text, from.Text, to.Text, cloud.Text)
		if err != nil {
			dialog.ShowError(err, w.Win)
			return
		}
		w.searchArchive(q)
	}, w.Win)
	d.Resize(fyne.NewSize(560, 420))
	d.Show()
}

// archiveQuery checks the dialog's fields.
func archiveQuery(api, coll, area, from, to, cloud string) (stac.Query, error) {
	q := stac.Query{API: api, Collections: []string{strings.TrimSpace(coll)}, MaxCloud: -1, MaxItems: 500}
	if q.Collections[0] == "" {
		return q, errors.New("name the collection (sentinel-2-l2a, landsat-c2-l2, …)")
	}
	parts := strings.Split(area, ",")
	if len(parts) != 4 {
		return q, fmt.Errorf("the area %q is not west,south,east,north in degrees", area)
	}
	for _, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return q, fmt.Errorf("the area %q is not west,south,east,north in degrees", area)
		}
		q.BBox = append(q.BBox, v)
	}
	q.Datetime = strings.TrimSpace(from) + "/" + strings.TrimSpace(to)
	if _, err := stac.Interval(q.Datetime); err != nil {
		return q, err
	}
	if c := strings.TrimSpace(cloud); c != "" {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || v < 0 || v > 100 {
			return q, fmt.Errorf("the cloud share %q is not a percentage (0 to 100)", cloud)
		}
		q.MaxCloud = v
	}
	if _, err := q.Body(); err != nil {
		return q, err
	}
	return q, nil
}

// searchArchive runs q on the bridge and lists the scenes found.
func (w *Window) searchArchive(q stac.Query) {
	w.bridge.start("Searching "+stac.SearchURL(q.API), func(ctx context.Context, progress progressFunc) (func(), error) {
		items, err := (&stac.Client{}).Search(ctx, q)
		if err != nil {
			return nil, err
		}
		return func() {
			w.archive.items, w.archive.api = items, stac.SearchURL(q.API)
			w.showArchive()
			w.setStatus(fmt.Sprintf("%d scene%s found in %s", len(items), map[bool]string{true: "", false: "s"}[len(items) == 1], w.archive.api), true)
		}, nil
	})
}

// archiveRow is how a scene is listed: date, cloud share, platform, id.
func archiveRow(it stac.Item) string {
	c := "cloud –"
	if !math.IsNaN(it.Cloud) {
		c = fmt.Sprintf("cloud %4.1f%%", it.Cloud)
	}
	return fmt.Sprintf("%s   %s   %s   %s", it.Date.Format("2006-01-02 15:04"), c, it.Platform, it.ID)
}

// showArchive shows the scenes of the last search; Open opens the one
// selected as a product (its STAC item, read over the network).
func (w *Window) showArchive() {
	a := &w.archive
	selected := -1
	a.open = widget.NewButton("Open", nil)
	a.open.Disable()
	a.thumbs = map[int]image.Image{}
	a.list = widget.NewList(func() int { return len(a.items) },
		func() fyne.CanvasObject {
			img := canvas.NewImageFromImage(nil)
			img.FillMode = canvas.ImageFillContain
			img.SetMinSize(fyne.NewSize(thumbSide, thumbSide))
			return container.NewHBox(img, widget.NewLabel("2024-06-03 10:16   cloud 99.9%   sentinel-2b   S2B_32TQM_20240603_0_L2A"))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			img := row.Objects[0].(*canvas.Image)
			img.Image = a.thumbs[i]
			img.Refresh()
			row.Objects[1].(*widget.Label).SetText(archiveRow(a.items[i]))
		})
	a.list.OnSelected = func(i widget.ListItemID) { selected = i; a.open.Enable() }
	a.open.OnTapped = func() {
		if selected < 0 || selected >= len(a.items) {
			return
		}
		href := selfHref(a.items[selected])
		if href == "" {
			dialog.ShowError(fmt.Errorf("%s: the archive gives the scene no link of its own to open", a.items[selected].ID), w.Win)
			return
		}
		if a.dlg != nil {
			a.dlg.Hide()
		}
		w.openProduct(href)
	}
	head := widget.NewLabel(fmt.Sprintf("%d scene%s from %s", len(a.items), map[bool]string{true: "", false: "s"}[len(a.items) == 1], a.api))
	body := container.NewBorder(head, a.open, nil, nil, a.list)
	if a.dlg != nil {
		a.dlg.Hide()
	}
	a.dlg = dialog.NewCustom("Scenes in the archive", "Close", body, w.Win)
	a.dlg.Resize(fyne.NewSize(820, 560))
	a.dlg.Show()
	w.drawThumbnails()
}

// drawThumbnails draws the listed scenes' pictures as a job (progress,
// Cancel; opening a scene stops it): each from the smallest overview of
// its COGs that still has thumbSide pixels (stac.Preview), stretched as
// the natural-colour view is. A scene that cannot be drawn keeps an
// empty picture.
func (w *Window) drawThumbnails() {
	a := &w.archive
	items := a.items[:min(len(a.items), maxThumbs)]
	if len(items) == 0 {
		return
	}
	if a.client == nil {
		a.client = remote.New(remote.Options{Cache: remote.DefaultCache()})
		a.signer = &stac.PCSigner{}
	}
	client, signer := a.client, a.signer
	w.bridge.start("Drawing the scenes' thumbnails", func(ctx context.Context, progress progressFunc) (func(), error) {
		pics := make([]image.Image, len(items))
		var done atomic.Int64
		var wg sync.WaitGroup
		var pmu sync.Mutex // progress is the bridge's, for one goroutine
		sem := make(chan struct{}, 4)
		for i, it := range items {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if ctx.Err() != nil {
					return
				}
				bands, err := stac.Preview(ctx, client, signer, it, thumbSide)
				if err == nil {
					if c, err := composite.New(bands, nil, composite.Options{}); err == nil {
						pics[i] = c.Image()
					}
				}
				pmu.Lock()
				progress(float64(done.Add(1))/float64(len(items)), "thumbnails")
				pmu.Unlock()
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return func() {
			if len(a.items) < len(pics) {
				return // another search replaced the list
			}
			for i, p := range pics {
				if p != nil {
					a.thumbs[i] = p
				}
			}
			if a.list != nil {
				a.list.Refresh()
			}
		}, nil
	})
}

// selfHref is the URL of a STAC item itself (its "self" link).
func selfHref(it stac.Item) string {
	for _, l := range it.Links {
		if l.Rel == "self" && (strings.HasPrefix(l.Href, "https://") || strings.HasPrefix(l.Href, "http://")) {
			return l.Href
		}
	}
	return ""
}

// viewBBox is the part of the map on screen in degrees (west,south,east,
// north), "" when what is shown has no usable georeferencing.
func (w *Window) viewBBox() string {
	s := w.shown
	if s == nil || s.set == nil || !s.set.geo.Valid() || s.w == 0 || s.h == 0 {
		return ""
	}
	zoom, x0, y0 := w.Map.View()
	vw, vh := w.Map.PixelSize()
	c0, r0, c1, r1 := 0.0, 0.0, float64(s.w), float64(s.h)
	if zoom > 0 && vw > 0 && vh > 0 {
		c0, r0 = max(c0, x0), max(r0, y0)
		c1, r1 = min(c1, x0+float64(vw)/zoom), min(r1, y0+float64(vh)/zoom)
	}
	if c1 <= c0 || r1 <= r0 {
		return ""
	}
	tr, err := geo.TransformerOf(s.set.geo)
	if err != nil {
		return ""
	}
	west, south, east, north := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range [][2]float64{{c0, r0}, {c1, r0}, {c0, r1}, {c1, r1}, {(c0 + c1) / 2, r0}, {(c0 + c1) / 2, r1}, {c0, (r0 + r1) / 2}, {c1, (r0 + r1) / 2}} {
		x, y, err := geo.PixelToMap(s.set.geo, p[0], p[1])
		if err != nil {
			return ""
		}
		lat, lon, err := tr.ToLatLon(x, y)
		if err != nil {
			return ""
		}
		west, east, south, north = min(west, lon), max(east, lon), min(south, lat), max(north, lat)
	}
	return fmt.Sprintf("%.5f,%.5f,%.5f,%.5f", west, south, east, north)
}
