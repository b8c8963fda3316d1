package ui

import (
	"image"
	"image/draw"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/mapview"
)

// What the map's patterns mean, as the legend says it.
const (
	noDataText = "no data, outside the scene"
	maskedText = "masked: clouds, shadows (the product's mask)"
)

// maskShown is the mask the map draws hatched: the product's mask of the
// scene shown, but for the after date's view (another date's pixels), a
// composite shown under the mask, and an image read by views (whose mask
// is held per view: largeMask).
func (w *window) maskShown() []uint8 {
	s := w.shown
	if s == nil || s.large != nil || s.set == nil || s.masked == 0 {
		return nil
	}
	if w.shownComposite() != nil {
		if w.view.unmasked {
			return nil
		}
		return s.set.mask
	}
	if w.twoCurrent() != nil && w.two.view == viewAfter {
		return nil
	}
	return s.set.mask
}

// largeMask is the image read by views whose mask the map hatches, view
// by view (nil: none): the image shown when it has a mask, unless its
// statistics found nothing masked.
func (w *window) largeMask() *largeImage {
	s := w.shown
	if s == nil || s.large == nil || !s.large.im.HasMask() || (s.summary != nil && s.masked == 0) {
		return nil
	}
	return s.large
}

// compositeMasked reports whether the composite on the map has the
// product's mask hatched over it.
func (w *window) compositeMasked() bool {
	if lc := w.shownLargeColour(); lc != nil {
		return !lc.unmasked && w.largeMask() != nil
	}
	return w.maskShown() != nil
}

// showMask gives the map the mask to hatch (or, for an image read by
// views, the views' masks), shows the masked row of the legend when it
// does, and the "Show under the mask" toggle in the composite views of a
// masked scene (of an image read by views too).
func (w *window) showMask() {
	mask := w.maskShown()
	w.Map.SetMask(mask)
	var perView func([]uint8, int, int, float64, float64, float64)
	if lc := w.shownLargeColour(); lc != nil {
		if !lc.unmasked && w.largeMask() != nil {
			perView = lc.markMask
		}
	} else if lg := w.largeMask(); lg != nil {
		perView = lg.markMask
	}
	w.Map.SetMaskView(perView)
	if (mask != nil || perView != nil) && w.shownComposite() == nil {
		w.colour.maskRow.Show()
	} else {
		w.colour.maskRow.Hide()
	}
	s, v := w.shown, w.view
	if s != nil && (s.large == nil && s.masked > 0 || w.largeMask() != nil) && v.mode != viewIndex {
		v.Unmasked.Show()
	} else {
		v.Unmasked.Hide()
	}
}

// swatchSide is a pattern swatch's side in Fyne units.
const swatchSide = 14

// patternSwatch is a swatch of a map pattern, drawn by fill.
func patternSwatch(fill func(*image.NRGBA)) fyne.CanvasObject {
	img := image.NewNRGBA(image.Rect(0, 0, 2*swatchSide, 2*swatchSide))
	fill(img)
	c := canvas.NewImageFromImage(img)
	c.ScaleMode = canvas.ImageScalePixels
	c.SetMinSize(fyne.NewSize(swatchSide, swatchSide))
	return c
}

func noDataSwatch() fyne.CanvasObject { return patternSwatch(mapview.FillNoData) }
func maskedSwatch() fyne.CanvasObject { return patternSwatch(mapview.FillMasked) }

// patternRow is a legend row: a pattern's swatch and what it means.
func patternRow(sw fyne.CanvasObject, text string) *fyne.Container {
	l := widget.NewLabel(text)
	l.SizeName = theme.SizeNameCaptionText
	return container.NewHBox(container.NewCenter(sw), l)
}

// withNoDataPattern is a legend picture whose "no data" swatch (its
// transparent pixels) shows the map's no-data pattern, as the map does.
func withNoDataPattern(p *image.Paletted) image.Image {
	b := p.Bounds()
	img := image.NewNRGBA(b)
	mapview.FillNoData(img)
	draw.Draw(img, b, p, b.Min, draw.Over)
	return img
}
