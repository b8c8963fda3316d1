package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/geo"
	"canopy/compute/outfile"
	"canopy/compute/remote"
	"canopy/compute/stac"
	"canopy/compute/stack"
	"canopy/ui/render/composite"
)

// archiveState is File › Search the archive…'s: the search form, the
// scenes the last search found and the list that shows them.
type archiveState struct {
	form  archiveForm
	items []stac.Item
	list  *widget.List
	// open opens the selected scene; openMany the scenes checked, as
	// one mosaic; openStack the scenes checked as a stack of dates.
	open, openMany, openStack *widget.Button
	// stack is the last stack's dates (compute/stack), stackText how
	// they are listed.
	stack     []stack.Date
	stackText *widget.Label
	// series is the time-series view the last stack opened in a window
	// of its own (nil when it could not be kept in memory).
	series   *timeSeriesView
	checked  map[int]bool
	selected int
	dlg      dialog.Dialog
	// api is the search endpoint of the last search (for messages);
	// offline says the list is a saved one (the archive could not be
	// reached).
	api     string
	offline bool
	// thumbs are the scenes' pictures by list row, drawn from their
	// COGs' overviews; client and signer read them.
	thumbs map[int]image.Image
	client *remote.Client
	signer *stac.PCSigner
}

// archiveForm is the search dialog's fields (tests drive them).
type archiveForm struct {
	api      *widget.Select
	coll     *widget.SelectEntry
	areaFrom *widget.RadioGroup
	area     *widget.Entry
	from, to *widget.Entry
	cloud    *widget.Entry
	search   *widget.Button
	dlg      dialog.Dialog
}

// The area's sources in the dialog.
const (
	areaView   = "The map view"
	areaStands = "The stands' extent"
)

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
// map on screen, or the loaded stands' extent, in degrees; or typed), the
// collection, the season and the highest cloud share; the search runs off
// the event goroutine with progress and Cancel, and the scenes found are
// listed to open.
func (w *window) searchDialog() {
	f := &w.archive.form
	labels := make([]string, len(archiveAPIs))
	for i, a := range archiveAPIs {
		labels[i] = a.label
	}
	f.api = widget.NewSelect(labels, nil)
	f.api.SetSelectedIndex(0)
	f.coll = widget.NewSelectEntry([]string{"sentinel-2-l2a", "landsat-c2-l2"})
	f.coll.SetText("sentinel-2-l2a")
	f.area = widget.NewEntry()
	f.area.SetPlaceHolder("west,south,east,north in degrees")
	f.areaFrom = widget.NewRadioGroup([]string{areaView, areaStands}, func(choice string) {
		var bb string
		var err error
		switch choice {
		case areaView:
			if bb = w.viewBBox(); bb == "" {
				err = errors.New("the map shows nothing with a known place on Earth: type the area")
			}
		case areaStands:
			bb, err = w.standsP.extentLatLon()
		default:
			return
		}
		if err != nil {
			w.setStatus(err.Error(), false)
			return
		}
		f.area.SetText(bb)
	})
	f.areaFrom.Horizontal = true
	if w.viewBBox() != "" {
		f.areaFrom.SetSelected(areaView)
	}
	now := time.Now().UTC()
	f.from, f.to = widget.NewEntry(), widget.NewEntry()
	f.from.SetText(now.AddDate(0, -6, 0).Format("2006-01-02"))
	f.to.SetText(now.Format("2006-01-02"))
	f.cloud = widget.NewEntry()
	f.cloud.SetText("30")
	form := widget.NewForm(
		widget.NewFormItem("Archive", f.api),
		widget.NewFormItem("Collection", f.coll),
		widget.NewFormItem("Area from", f.areaFrom),
		widget.NewFormItem("Area", f.area),
		widget.NewFormItem("From", f.from),
		widget.NewFormItem("To", f.to),
		widget.NewFormItem("Cloud at most (%)", f.cloud),
	)
	f.search = widget.NewButton("Search", func() {
		q, err := archiveQuery(archiveAPIs[max(0, f.api.SelectedIndex())].url, f.coll.Text, f.area.Text, f.from.Text, f.to.Text, f.cloud.Text)
		if err != nil {
			dialog.ShowError(err, w.Win)
			return
		}
		f.dlg.Hide()
		w.searchArchive(q)
	})
	f.search.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	f.dlg = dialog.NewCustomWithoutButtons("Search the archive", container.NewBorder(nil, container.NewHBox(layout.NewSpacer(), cancel, f.search), nil, nil, form), w.Win)
	f.dlg.Resize(fyne.NewSize(600, 440))
	f.dlg.Show()
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

// archiveDir is the folder of the window's saved searches and items
// (beside compute/remote's cache: CANOPY_CACHE_DIR or the user's cache
// folder), "" when the cache is off.
func archiveDir() string {
	c := remote.DefaultCache()
	if c == nil {
		return ""
	}
	return filepath.Join(filepath.Dir(c.Dir()), "archive")
}

// savedSearch is the file a search's result is kept in: by its endpoint
// and body.
func savedSearch(q stac.Query) string {
	dir := archiveDir()
	body, err := q.Body()
	if dir == "" || err != nil {
		return ""
	}
	b, _ := json.Marshal(body)
	h := sha256.Sum256([]byte(stac.SearchURL(q.API) + "\n" + string(b)))
	return filepath.Join(dir, "searches", hex.EncodeToString(h[:12])+".json")
}

// searchArchive runs q on the bridge and lists the scenes found. The
// result is kept (archiveDir); when the archive cannot be answered, the
// result kept of the same search is listed, and said to be.
func (w *window) searchArchive(q stac.Query) {
	w.bridge.start("Searching "+stac.SearchURL(q.API), func(ctx context.Context, progress progressFunc) (func(), error) {
		api := stac.SearchURL(q.API)
		sc := &stac.Client{Progress: func(pages, items, matched int) {
			if matched > 0 {
				progress(min(1, float64(items)/float64(min(matched, q.MaxItems))), fmt.Sprintf("%d of %d scenes", items, matched))
			} else {
				progress(0, fmt.Sprintf("%d scenes, page %d", items, pages))
			}
		}}
		items, err := sc.Search(ctx, q)
		kept := savedSearch(q)
		offline := ""
		if err != nil {
			if ctx.Err() != nil || kept == "" {
				return nil, err
			}
			r, rerr := stac.ReadResult(kept)
			if rerr != nil {
				return nil, err
			}
			st, _ := os.Stat(kept)
			items, offline = r.Items, fmt.Sprintf(" (the archive did not answer: %v; the result of this search kept %s)", err, st.ModTime().UTC().Format("2006-01-02 15:04 UTC"))
		} else if kept != "" {
			if b, err := stac.MarshalResult(items, stac.SearchInfo{API: api, Collections: q.Collections, BBox: q.BBox, Datetime: q.Datetime,
				Searched: time.Now().UTC().Format(time.RFC3339)}); err == nil && os.MkdirAll(filepath.Dir(kept), 0o755) == nil {
				_ = outfile.WriteFile(kept, func(o *outfile.Writer) error { _, err := o.Write(b); return err })
			}
		}
		return func() {
			w.archive.items, w.archive.api, w.archive.offline = items, api, offline != ""
			w.showArchive()
			w.setStatus(fmt.Sprintf("%d scene%s found in %s%s", len(items), map[bool]string{true: "", false: "s"}[len(items) == 1], api, offline), offline == "")
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

// showArchive shows the scenes of the last search. Open opens the one
// selected as a product: its STAC item as the search found it (kept in
// archiveDir, so that it opens again without the network for what the
// cache holds; its own link when the cache is off), its files read over
// the network. The scenes checked open together as one mosaic (each pixel
// from the first scene of the list valid there), or as a stack of dates
// (openArchiveStack).
func (w *window) showArchive() {
	a := &w.archive
	a.selected = -1
	a.checked = map[int]bool{}
	a.open = widget.NewButton("Open", nil)
	a.open.Disable()
	a.openMany = widget.NewButton("Open the checked as one mosaic", nil)
	a.openMany.Disable()
	a.openStack = widget.NewButton("Open the checked as a stack of dates", nil)
	a.openStack.Disable()
	a.thumbs = map[int]image.Image{}
	a.list = widget.NewList(func() int { return len(a.items) },
		func() fyne.CanvasObject {
			img := canvas.NewImageFromImage(nil)
			img.FillMode = canvas.ImageFillContain
			img.SetMinSize(fyne.NewSize(thumbSide, thumbSide))
			return container.NewHBox(widget.NewCheck("", nil), img, widget.NewLabel("2024-06-03 10:16   cloud 99.9%   sentinel-2b   S2B_32TQM_20240603_0_L2A"))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			check := row.Objects[0].(*widget.Check)
			check.OnChanged = nil // a reused row: set, not a change
			check.SetChecked(a.checked[i])
			check.OnChanged = func(on bool) { a.setChecked(i, on) }
			img := row.Objects[1].(*canvas.Image)
			img.Image = a.thumbs[i]
			img.Refresh()
			row.Objects[2].(*widget.Label).SetText(archiveRow(a.items[i]))
		})
	a.list.OnSelected = func(i widget.ListItemID) { a.selected = i; a.open.Enable() }
	a.open.OnTapped = func() {
		if a.selected < 0 || a.selected >= len(a.items) {
			return
		}
		p, err := a.itemPath(a.items[a.selected])
		if err != nil {
			dialog.ShowError(err, w.Win)
			return
		}
		a.dlg.Hide()
		w.openProduct(p)
	}
	a.openMany.OnTapped = func() {
		var paths []string
		for i := range a.items {
			if !a.checked[i] {
				continue
			}
			p, err := a.itemPath(a.items[i])
			if err != nil {
				dialog.ShowError(err, w.Win)
				return
			}
			paths = append(paths, p)
		}
		if len(paths) < 2 {
			return
		}
		a.dlg.Hide()
		w.openMosaic(paths)
	}
	a.openStack.OnTapped = func() {
		var entries []stack.Entry
		for i, it := range a.items {
			if !a.checked[i] {
				continue
			}
			p, err := a.itemPath(it)
			if err != nil {
				dialog.ShowError(err, w.Win)
				return
			}
			entries = append(entries, stack.Entry{Path: p, Time: it.Date, How: "STAC item", Sensor: it.Platform})
		}
		if len(entries) < 2 {
			return
		}
		a.dlg.Hide()
		w.openArchiveStack(entries)
	}
	text := fmt.Sprintf("%d scene%s from %s", len(a.items), map[bool]string{true: "", false: "s"}[len(a.items) == 1], a.api)
	if a.offline {
		text += " — kept from an earlier search: the archive did not answer"
	}
	head := widget.NewLabel(text)
	note := widget.NewLabel("Check several to open them as one mosaic (each pixel from the first of them valid there), or as a stack of dates: the index on every date, on one grid, with each date's valid share (as canopy stack lists them).")
	note.Wrapping = fyne.TextWrapWord
	body := container.NewBorder(head, container.NewVBox(note, container.NewHBox(a.open, a.openMany, a.openStack)), nil, nil, a.list)
	if a.dlg != nil {
		a.dlg.Hide()
	}
	a.dlg = dialog.NewCustom("Scenes in the archive", "Close", body, w.Win)
	a.dlg.Resize(fyne.NewSize(820, 560))
	a.dlg.Show()
	w.drawThumbnails()
}

// setChecked checks or unchecks row i; two or more enable openMany.
func (a *archiveState) setChecked(i int, on bool) {
	if on {
		a.checked[i] = true
	} else {
		delete(a.checked, i)
	}
	if len(a.checked) >= 2 {
		a.openMany.Enable()
		a.openStack.Enable()
	} else {
		a.openMany.Disable()
		a.openStack.Disable()
	}
}

// openArchiveStack builds a stack of the checked scenes' dates
// (compute/stack: scenes of one UTC day mosaicked, the index computed on
// every date through the one road with the selected backend and mask, on
// the first date's grid) as a job with progress and Cancel, and lists its
// dates with the valid share of each.
func (w *window) openArchiveStack(entries []stack.Entry) {
	mask, buffer, r, ok := w.stackSettings()
	if !ok {
		return
	}
	idx, dates := w.idx, stack.Group(entries)
	w.bridge.start(fmt.Sprintf("Stacking %d dates", len(dates)), func(ctx context.Context, progress progressFunc) (func(), error) {
		st, err := stack.Build(ctx, dates, stack.Options{Mask: mask, MaskBuffer: buffer, Backend: r.b, Mode: r.mode, Name: idx.name, Expr: idx.expr,
			Progress: func(done, total int) {
				progress(float64(done)/float64(total), fmt.Sprintf("%d of %d dates", done, total))
			}})
		if err != nil {
			return nil, err
		}
		lines := []string{fmt.Sprintf("%d dates on %d×%d pixels, %s", len(st.Dates), st.Grid.Width, st.Grid.Height, idx.name)}
		for _, d := range st.Dates {
			lines = append(lines, fmt.Sprintf("%s   %s   valid %5.1f %%   %d scene%s", d.ISO, strings.Join(d.Sensors, ", "), 100*d.ValidShare,
				len(d.Paths), map[bool]string{true: "", false: "s"}[len(d.Paths) == 1]))
		}
		got := st.Dates
		// The stack goes on to the time-series window (a date slider over
		// the map, a pixel's series on a click), which then owns it; one
		// it cannot keep is closed by newTSStack and said in the list.
		ts, terr := newTSStack(st, "the checked scenes")
		if terr != nil {
			lines = append(lines, "", "Not shown as a time series: "+explain(terr).Error())
		}
		return func() {
			a := &w.archive
			a.stack = got
			a.stackText = widget.NewLabel(strings.Join(lines, "\n"))
			if ts != nil {
				a.series = w.showTimeSeries(ts, "")
			}
			dialog.ShowCustom("A stack of dates", "Close", a.stackText, w.Win)
			w.setStatus(lines[0], true)
		}, nil
	})
}

// itemPath is what opens a scene of the list: its item kept in
// archiveDir (stac.SaveItem), or its own link when the cache is off.
func (a *archiveState) itemPath(it stac.Item) (string, error) {
	if dir := archiveDir(); dir != "" {
		return stac.SaveItem(filepath.Join(dir, "items"), it)
	}
	if h := it.Href(); h != "" {
		return h, nil
	}
	return "", fmt.Errorf("%s: the archive gives the scene no link of its own to open", it.ID)
}

// drawThumbnails draws the listed scenes' pictures as a job (progress,
// Cancel; opening a scene stops it): each from the smallest overview of
// its COGs that still has thumbSide pixels (stac.Preview), stretched as
// the natural-colour view is. A scene that cannot be drawn keeps an
// empty picture.
func (w *window) drawThumbnails() {
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

// viewBBox is the part of the map on screen in degrees (west,south,east,
// north), "" when what is shown has no usable georeferencing.
func (w *window) viewBBox() string {
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
