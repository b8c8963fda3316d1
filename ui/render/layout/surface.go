package layout

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// vgSurface draws on a gonum/plot canvas (PNG through vgimg, SVG through
// vgsvg). Pixels become points at the plan's DPI; vg's y axis points up.
type vgSurface struct {
	c   vg.Canvas
	h   float64 // page height in pixels
	px  float64 // pixels per point
	img *image.RGBA
}

func (s *vgSurface) p(x, y float64) vg.Point {
	return vg.Point{X: vg.Length(x / s.px), Y: vg.Length((s.h - y) / s.px)}
}

func (s *vgSurface) path(pts []pt, closed bool) vg.Path {
	var path vg.Path
	for i, q := range pts {
		if i == 0 {
			path.Move(s.p(q.x, q.y))
		} else {
			path.Line(s.p(q.x, q.y))
		}
	}
	if closed {
		path.Close()
	}
	return path
}

func (s *vgSurface) fill(r rectF, c color.Color) {
	if r.x1 <= r.x0 || r.y1 <= r.y0 {
		return
	}
	if s.img != nil {
		// Whole-pixel rectangles go straight into the picture, so that
		// swatches and bars have exact colours and edges.
		ir := r.int()
		if rf(ir) == r {
			draw.Draw(s.img, ir, image.NewUniform(c), image.Point{}, draw.Over)
			return
		}
	}
	s.c.SetColor(c)
	s.c.Fill(s.path([]pt{{r.x0, r.y0}, {r.x1, r.y0}, {r.x1, r.y1}, {r.x0, r.y1}}, true))
}

func (s *vgSurface) poly(pts []pt, c color.Color) {
	s.c.SetColor(c)
	s.c.Fill(s.path(pts, true))
}

func (s *vgSurface) stroke(pts []pt, w float64, c color.Color) {
	s.c.SetColor(c)
	s.c.SetLineWidth(vg.Length(w / s.px))
	s.c.SetLineDash(nil, 0)
	s.c.Stroke(s.path(pts, false))
}

func (s *vgSurface) text(str string, x, y float64, st textStyle, align float64, c color.Color) {
	f := face(st)
	x -= align * f.Width(str).Points() * s.px
	s.c.SetColor(c)
	s.c.FillString(f, s.p(x, y), str)
}

func (s *vgSurface) raster(r image.Rectangle, img *image.NRGBA) {
	if s.img != nil {
		draw.Draw(s.img, r, img, image.Point{}, draw.Src)
		return
	}
	s.c.DrawImage(vg.Rectangle{Min: s.p(float64(r.Min.X), float64(r.Max.Y)), Max: s.p(float64(r.Max.X), float64(r.Min.Y))}, img)
}

// newPNGSurface returns a white picture of the plan's size and its surface.
func newPNGSurface(p *plan) (*vgimg.Canvas, *vgSurface) {
	img := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	c := vgimg.NewWith(vgimg.UseImage(img), vgimg.UseDPI(int(p.dpi+0.5)))
	s := &vgSurface{c: c, h: float64(p.h), px: float64(int(p.dpi+0.5)) / 72, img: c.Image().(*image.RGBA)}
	return c, s
}

// pdfSurface draws on an fpdf page measured in points.
type pdfSurface struct {
	doc *fpdf.Fpdf
	px  float64
	n   int
}

const pdfFont = "liberationsans"

func newPDFSurface(p *plan) *pdfSurface {
	wPt, hPt := float64(p.w)/p.px, float64(p.h)/p.px
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: wPt, Ht: hPt}})
	doc.SetMargins(0, 0, 0)
	doc.SetAutoPageBreak(false, 0)
	doc.SetCompression(true)
	doc.SetCatalogSort(true)
	doc.SetCreator("Canopy", true)
	doc.AddUTF8FontFromBytes(pdfFont, "", liberationsansregular.TTF)
	doc.AddUTF8FontFromBytes(pdfFont, "B", liberationsansbold.TTF)
	doc.AddPageFormat("P", fpdf.SizeType{Wd: wPt, Ht: hPt})
	return &pdfSurface{doc: doc, px: p.px}
}

func rgb(c color.Color) (r, g, b int, a float64) {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return int(n.R), int(n.G), int(n.B), float64(n.A) / 255
}

func (s *pdfSurface) colour(c color.Color, fill bool) {
	r, g, b, a := rgb(c)
	if fill {
		s.doc.SetFillColor(r, g, b)
	} else {
		s.doc.SetDrawColor(r, g, b)
	}
	s.doc.SetAlpha(a, "Normal")
}

func (s *pdfSurface) fill(r rectF, c color.Color) {
	if r.x1 <= r.x0 || r.y1 <= r.y0 {
		return
	}
	s.colour(c, true)
	s.doc.Rect(r.x0/s.px, r.y0/s.px, (r.x1-r.x0)/s.px, (r.y1-r.y0)/s.px, "F")
}

func (s *pdfSurface) poly(pts []pt, c color.Color) {
	s.colour(c, true)
	ps := make([]fpdf.PointType, len(pts))
	for i, q := range pts {
		ps[i] = fpdf.PointType{X: q.x / s.px, Y: q.y / s.px}
	}
	s.doc.Polygon(ps, "F")
}

func (s *pdfSurface) stroke(pts []pt, w float64, c color.Color) {
	s.colour(c, false)
	s.doc.SetLineWidth(w / s.px)
	for i, q := range pts {
		if i == 0 {
			s.doc.MoveTo(q.x/s.px, q.y/s.px)
		} else {
			s.doc.LineTo(q.x/s.px, q.y/s.px)
		}
	}
	s.doc.DrawPath("D")
}

func (s *pdfSurface) text(str string, x, y float64, st textStyle, align float64, c color.Color) {
	style := ""
	if st.bold {
		style = "B"
	}
	s.doc.SetFont(pdfFont, style, st.size)
	r, g, b, a := rgb(c)
	s.doc.SetTextColor(r, g, b)
	s.doc.SetAlpha(a, "Normal")
	f := face(st)
	w := f.Width(str).Points()
	s.doc.Text(x/s.px-align*w, y/s.px, str)
}

func (s *pdfSurface) raster(r image.Rectangle, img *image.NRGBA) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		s.doc.SetError(fmt.Errorf("encode the map for the PDF: %w", err))
		return
	}
	s.n++
	name := fmt.Sprintf("map%d", s.n)
	opt := fpdf.ImageOptions{ImageType: "PNG"}
	s.doc.RegisterImageOptionsReader(name, opt, &buf)
	s.doc.ImageOptions(name, float64(r.Min.X)/s.px, float64(r.Min.Y)/s.px, float64(r.Dx())/s.px, float64(r.Dy())/s.px, false, opt, 0, "")
}
