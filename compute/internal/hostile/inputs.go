package hostile

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // GeoPackages are built with the reader's own driver
)

// InputCase is one hostile input given to the canopy command line: a
// product (zip, tar, SAFE XML, JPEG 2000, Landsat MTL, STAC item), stands
// (GeoPackage, GeoJSON), a scene list, or a path that is not a file at all
// in any of these places.
type InputCase struct {
	// Name identifies the case: "zip/member-dot-dot".
	Name string
	// Args is the command line after "canopy"; OUT in an argument stands
	// for the case's own output folder (empty before, checked after).
	Args []string
	// Exit is the status a refusal must give: 1 (a failed run) or 2 (bad
	// usage).
	Exit int
	// Either allows success (exit 0) too: only the safety rules apply.
	Either bool
	// Want is a piece of the one line the refusal must print.
	Want string
	// Names is what the line must name (the file, or the archive).
	Names string
	// GUI runs the case through the window's binary (canopy gui), with
	// a display that does not exist: what it tests is refused before any
	// window opens.
	GUI bool
	// Quick says the refusal names a limit: it must come within 1 s of
	// CPU time, before the work the limit spares is done. A case whose
	// Want speaks of a limit ("more than", "longer than") is Quick.
	Quick bool
}

// igen collects input cases.
type igen struct {
	dir       string
	cases     []InputCase
	err       error
	red, nir  string // a valid band pair for zonal
	okStands  string // valid stands for those bands
	landsatID string
}

func (g *igen) fail(err error) {
	if err != nil && g.err == nil {
		g.err = err
	}
}

// path returns dir/rel, making its folder.
func (g *igen) path(rel string) string {
	p := filepath.Join(g.dir, filepath.FromSlash(rel))
	g.fail(os.MkdirAll(filepath.Dir(p), 0o755))
	return p
}

func (g *igen) write(rel string, b []byte) string {
	p := g.path(rel)
	g.fail(os.WriteFile(p, b, 0o644))
	return p
}

func (g *igen) add(c InputCase) {
	for _, o := range g.cases {
		if o.Name == c.Name {
			g.fail(fmt.Errorf("two cases named %s", c.Name))
		}
	}
	if c.Exit == 0 {
		c.Exit = 1
	}
	if strings.Contains(c.Want, "more than") || strings.Contains(c.Want, "longer than") {
		c.Quick = true
	}
	g.cases = append(g.cases, c)
}

// scene adds `canopy scene P` refused with want.
func (g *igen) scene(name, p, want string) {
	g.add(InputCase{Name: name, Args: []string{"scene", p}, Want: want, Names: p})
}

// compute adds `canopy compute --scene P --tif OUT/x.tif` refused with want.
func (g *igen) compute(name, p, want string) {
	g.add(InputCase{Name: name, Args: []string{"compute", "--scene", p, "--backend", "go", "--tif", "OUT/ndvi.tif"}, Want: want, Names: p})
}

// stands adds `canopy zonal` over the valid bands with stands p.
func (g *igen) stands(name, p, want string) {
	g.add(InputCase{Name: name, Args: []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", p, "--csv", "OUT/zonal.csv"}, Want: want, Names: p})
}

// standsEither adds zonal over stands that may be summarised (a stand
// outside the raster, or with no geometry, is a warning, not a failure).
func (g *igen) standsEither(name, p string) {
	g.add(InputCase{Name: name, Args: []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", p, "--csv", "OUT/zonal.csv"}, Either: true, Names: p})
}

// GenerateInputs writes the command-line corpus into dir (an empty
// directory) and returns its cases.
func GenerateInputs(dir string) ([]InputCase, error) {
	g := &igen{dir: dir, landsatID: "LC08_L2SP_044034_20200827_20200906_02_T1"}
	g.red = g.write("bands/red.tif", base().build().bytes())
	g.nir = g.write("bands/nir.tif", base().build().bytes())
	g.okStands = g.write("stands/ok.geojson", []byte(standsJSON(`[[[600050,5299600],[600300,5299600],[600300,5299900],[600050,5299600]]]`)))
	for _, step := range []func(){g.zips, g.s2Zips, g.tars, g.xmls, g.jp2s, g.mtls, g.stacs, g.gpkgs, g.geojsons, g.lists, g.sessions, g.notFiles} {
		step()
	}
	return g.cases, g.err
}

// standsJSON is a feature collection in EPSG:32633 with one polygon of
// the given coordinates.
func standsJSON(coords string) string {
	return `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32633"}},"features":[{"type":"Feature","id":1,"properties":{"name":"A"},"geometry":{"type":"Polygon","coordinates":` + coords + `}}]}`
}

// zipOf builds a zip of the given members (name, body, method).
type member struct {
	name   string
	body   []byte
	method uint16
	mode   os.FileMode
}

func zipOf(ms ...member) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	w.RegisterCompressor(zip.Deflate, func(o io.Writer) (io.WriteCloser, error) { return flate.NewWriter(o, flate.BestCompression) })
	for _, m := range ms {
		h := &zip.FileHeader{Name: m.name, Method: m.method}
		if m.mode != 0 {
			h.SetMode(m.mode)
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			panic(err)
		}
		fw.Write(m.body)
	}
	w.Close()
	return buf.Bytes()
}

// rawZip is a zip of one member whose local and central headers declare
// size bytes (uncompressed) and crc, whatever the data holds.
func rawZip(name string, data []byte, method uint16, size uint32, crc uint32) []byte {
	le := binary.LittleEndian
	var b []byte
	b = le.AppendUint32(b, 0x04034b50)
	b = le.AppendUint16(b, 20)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, method)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, crc)
	b = le.AppendUint32(b, uint32(len(data)))
	b = le.AppendUint32(b, size)
	b = le.AppendUint16(b, uint16(len(name)))
	b = le.AppendUint16(b, 0)
	b = append(append(b, name...), data...)
	cd := len(b)
	b = le.AppendUint32(b, 0x02014b50)
	b = le.AppendUint16(b, 20)
	b = le.AppendUint16(b, 20)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, method)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, crc)
	b = le.AppendUint32(b, uint32(len(data)))
	b = le.AppendUint32(b, size)
	b = le.AppendUint16(b, uint16(len(name)))
	b = append(b, make([]byte, 12)...)
	b = le.AppendUint32(b, 0) // local header offset
	b = append(b, name...)
	end := len(b)
	b = le.AppendUint32(b, 0x06054b50)
	b = append(b, 0, 0, 0, 0)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint32(b, uint32(end-cd))
	b = le.AppendUint32(b, uint32(cd))
	return le.AppendUint16(b, 0)
}

var deflatedGiB = sync.OnceValue(func() []byte { return deflateZeros(1 << 30) })

// deflated returns n zero bytes deflated at the best level (1 GiB is
// made once).
func deflated(n int) []byte {
	if n == 1<<30 {
		return deflatedGiB()
	}
	return deflateZeros(n)
}

func deflateZeros(n int) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	chunk := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		w.Write(chunk[:k])
		n -= k
	}
	w.Close()
	return buf.Bytes()
}

const safeDir = "S2A_MSIL2A_20230714T102601_N0509_R065_T32TQM_20230714T163539.SAFE"

func (g *igen) zips() {
	mtd := []byte(`<?xml version="1.0"?><n1:Level-2A_User_Product xmlns:n1="x"></n1:Level-2A_User_Product>`)
	z := func(name string, b []byte, want string) {
		p := g.write("zip/"+strings.ReplaceAll(name, "/", "-")+".SAFE.zip", b)
		g.scene("zip/"+name, p, want)
	}
	z("member-dot-dot", zipOf(member{name: safeDir + "/../../evil.txt", body: []byte("x")}), "points outside the archive")
	z("member-absolute", zipOf(member{name: "/etc/cron.d/evil", body: []byte("x")}), "points outside the archive")
	z("member-drive-letter", zipOf(member{name: "C:/Windows/evil", body: []byte("x")}), "points outside the archive")
	z("member-backslash", zipOf(member{name: `..\..\evil`, body: []byte("x")}), "points outside the archive")
	z("member-nul", zipOf(member{name: "a\x00b/MTD_MSIL2A.xml", body: mtd}), "points outside the archive")
	z("member-symlink", zipOf(member{name: safeDir + "/MTD_MSIL2A.xml", body: []byte("/etc/passwd"), mode: os.ModeSymlink | 0o777}), "is a symbolic link")
	z("member-name-64KB-dot-dot", zipOf(member{name: strings.Repeat("a/", 32000) + "../../../x", body: []byte("x")}), "points outside the archive")
	z("member-name-64KB", zipOf(member{name: strings.Repeat("b", 65000) + "/MTD_MSIL1C.xml", body: mtd}), "Level-1C")
	var many []member
	for i := range 100001 {
		many = append(many, member{name: fmt.Sprintf("m%06d", i), method: zip.Store})
	}
	z("members-100001", zipOf(many...), "more than 100000 members")
	z("not-a-zip", []byte("PK\x03\x04 this is not a zip archive at all"), "not a zip archive")
	z("empty-file", nil, "not a zip archive")
	z("truncated", zipOf(member{name: safeDir + "/MTD_MSIL2A.xml", body: mtd, method: zip.Deflate})[:60], "not a zip archive")
	z("no-metadata", zipOf(member{name: safeDir + "/readme.txt", body: []byte("hello")}), "without MTD_MSIL2A.xml")
	z("level-1c", zipOf(member{name: safeDir + "/MTD_MSIL1C.xml", body: mtd}), "Level-1C")
	z("metadata-bomb-1GiB", rawZip(safeDir+"/MTD_MSIL2A.xml", deflated(1<<30), zip.Deflate, 1<<30, 0), "more than the")
	z("metadata-declares-3GiB", rawZip(safeDir+"/MTD_MSIL2A.xml", deflated(1<<20), zip.Deflate, 3<<30, 0), "declares")
	z("metadata-bad-crc", rawZip(safeDir+"/MTD_MSIL2A.xml", deflated(1000), zip.Deflate, 1000, 12345), "checksum")
	z("metadata-inflates-past-size", rawZip(safeDir+"/MTD_MSIL2A.xml", deflated(1<<20), zip.Deflate, 1000, 0), "zip")
	z("metadata-stored-size-lie", rawZip(safeDir+"/MTD_MSIL2A.xml", []byte("<a/>"), zip.Store, 1<<20, crc32.ChecksumIEEE([]byte("<a/>"))), "stored member")
	z("metadata-unknown-method", rawZip(safeDir+"/MTD_MSIL2A.xml", []byte("<a/>"), 99, 4, 0), "zip")
	z("metadata-not-xml", zipOf(member{name: safeDir + "/MTD_MSIL2A.xml", body: []byte("\x00\x01\x02 binary"), method: zip.Deflate}), "MTD_MSIL2A.xml")
	z("metadata-deep-xml", zipOf(member{name: safeDir + "/MTD_MSIL2A.xml", body: []byte(strings.Repeat("<a>", 1<<20)), method: zip.Deflate}), "MTD_MSIL2A.xml")
	// The same product given to compute, whose outputs must not appear.
	p := g.write("zip/compute-member-dot-dot.zip", zipOf(member{name: "../evil/MTD_MSIL2A.xml", body: mtd}))
	g.compute("zip/compute-member-dot-dot", p, "points outside the archive")
	p = g.write("zip/compute-bomb.SAFE.zip", rawZip(safeDir+"/MTD_MSIL2A.xml", deflated(1<<30), zip.Deflate, 1<<30, 0))
	g.compute("zip/compute-metadata-bomb", p, "more than the")
}

// tarOf builds a tar of the given headers; regular members get their
// name as content unless body is given.
func tarOf(hs ...*tar.Header) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, h := range hs {
		body := []byte(h.Name)
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(body))
		} else if h.Typeflag != tar.TypeReg {
			body = nil
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := w.WriteHeader(h); err != nil {
			panic(err)
		}
		if body != nil {
			w.Write(body[:min(int64(len(body)), h.Size)])
			if pad := h.Size - int64(len(body)); pad > 0 {
				w.Write(make([]byte, pad))
			}
		}
	}
	w.Close()
	return buf.Bytes()
}

func (g *igen) tars() {
	id := g.landsatID
	t := func(name string, b []byte, want string) {
		p := g.write("tar/"+name+".tar", b)
		g.scene("tar/"+name, p, want)
	}
	reg := func(n string) *tar.Header { return &tar.Header{Name: n, Typeflag: tar.TypeReg} }
	t("member-dot-dot", tarOf(reg("../../etc/cron.d/evil")), "points outside the archive")
	t("member-absolute", tarOf(reg("/etc/passwd")), "points outside the archive")
	t("member-symlink", tarOf(&tar.Header{Name: id + "_MTL.txt", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}), "is a link")
	t("member-hardlink", tarOf(&tar.Header{Name: id + "_MTL.txt", Linkname: "../../etc/passwd", Typeflag: tar.TypeLink}), "is a link")
	t("member-char-device", tarOf(&tar.Header{Name: id + "_MTL.txt", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}), "not a regular file")
	t("member-fifo", tarOf(&tar.Header{Name: id + "_MTL.txt", Typeflag: tar.TypeFifo}), "not a regular file")
	t("member-name-64KB", tarOf(reg(strings.Repeat("n", 65000)+"/../../x")), "points outside the archive")
	t("not-a-tar", []byte(strings.Repeat("not a tar archive ", 100)), "not a tar archive")
	t("gzip", append([]byte{0x1f, 0x8b, 8, 0}, make([]byte, 600)...), "gzip-compressed")
	full := tarOf(reg(id+"_MTL.txt"), reg(id+"_SR_B4.TIF"))
	t("truncated-in-header", full[:700], "")
	t("truncated-in-data", full[:520], "")
	var hb bytes.Buffer
	tw := tar.NewWriter(&hb)
	tw.WriteHeader(&tar.Header{Name: id + "_MTL.txt", Typeflag: tar.TypeReg, Size: 1 << 40, Mode: 0o644})
	t("member-past-end", append(hb.Bytes(), make([]byte, 1536)...), "runs past the end")
	var many []*tar.Header
	for i := range 100001 {
		many = append(many, &tar.Header{Name: fmt.Sprintf("m%06d", i), Typeflag: tar.TypeReg, Size: 0})
	}
	manyB := func() []byte {
		var buf bytes.Buffer
		w := tar.NewWriter(&buf)
		for _, h := range many {
			h.Mode = 0o644
			w.WriteHeader(h)
		}
		w.Close()
		return buf.Bytes()
	}()
	t("members-100001", manyB, "more than 100000 members")
	mtl := "GROUP = LANDSAT_METADATA_FILE\n GROUP = PRODUCT_CONTENTS\n  LANDSAT_PRODUCT_ID = \"" + id + "\"\n"
	for n := 1; n <= 7; n++ {
		mtl += fmt.Sprintf("  FILE_NAME_BAND_%d = \"../../etc/passwd\"\n", n)
	}
	mtl += " END_GROUP = PRODUCT_CONTENTS\n GROUP = IMAGE_ATTRIBUTES\n  SPACECRAFT_ID = \"LANDSAT_8\"\n END_GROUP = IMAGE_ATTRIBUTES\nEND_GROUP = LANDSAT_METADATA_FILE\nEND\n"
	h := &tar.Header{Name: id + "_MTL.txt", Typeflag: tar.TypeReg, Size: int64(len(mtl))}
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	h.Mode = 0o644
	w.WriteHeader(h)
	w.Write([]byte(mtl))
	w.Close()
	t("mtl-names-outside", buf.Bytes(), "")
	p := g.write("tar/compute-member-symlink.tar", tarOf(&tar.Header{Name: id + "_SR_B4.TIF", Linkname: "/dev/zero", Typeflag: tar.TypeSymlink}))
	g.compute("tar/compute-member-symlink", p, "is a link")
}

// safe writes a .SAFE folder whose MTD_MSIL2A.xml is b.
func (g *igen) safe(name string, b []byte) string {
	dir := g.path("xml/" + name + "/" + safeDir)
	g.fail(os.MkdirAll(dir, 0o755))
	g.fail(os.WriteFile(filepath.Join(dir, "MTD_MSIL2A.xml"), b, 0o644))
	return dir
}

func (g *igen) xmls() {
	x := func(name string, b []byte, want string) {
		g.scene("xml/"+name, g.safe(name, b), want)
	}
	head := `<?xml version="1.0" encoding="UTF-8"?>`
	x("billion-laughs", []byte(head+`<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;"><!ENTITY i "&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;">]><l>&i;</l>`), "")
	x("external-entity", []byte(head+`<!DOCTYPE l [<!ENTITY x SYSTEM "file:///etc/passwd">]><l>&x;</l>`), "")
	x("nested-1M", []byte(strings.Repeat("<a>", 1<<20)+strings.Repeat("</a>", 1<<20)), "nested more than 256 deep")
	x("elements-1M", []byte("<a>"+strings.Repeat("<b/>", 1<<20)+"</a>"), "XML elements, the most")
	x("name-1MB", []byte("<"+strings.Repeat("n", 1<<20)+"/>"), "")
	x("attribute-1MB", []byte(`<a b="`+strings.Repeat("v", 1<<20)+`"/>`), "")
	x("text-15MB", []byte("<a>"+strings.Repeat("t", 15<<20)+"</a>"), "")
	x("over-16MiB", []byte("<a>"+strings.Repeat(" ", 17<<20)+"</a>"), "more than the")
	x("unclosed", []byte(head+"<n1:Level-2A_User_Product><General_Info>"), "")
	x("not-utf8", []byte(head+"<a>\xff\xfe\xfd</a>"), "")
	x("utf16-declared", []byte(`<?xml version="1.0" encoding="UTF-16"?><a/>`), "")
	x("empty", nil, "")
	x("binary", bytes.Repeat([]byte{0, 1, 2, 0xff}, 4096), "")
	x("image-file-dot-dot", []byte(head+`<n1:Level-2A_User_Product xmlns:n1="x"><n1:General_Info><Product_Info><Product_Organisation><Granule_List><Granule granuleIdentifier="g" imageFormat="JPEG2000"><IMAGE_FILE>GRANULE/../../../../../etc/B04_10m</IMAGE_FILE><IMAGE_FILE>../../../../../dev/zero/B08_10m</IMAGE_FILE></Granule></Granule_List></Product_Organisation></Product_Info></n1:General_Info></n1:Level-2A_User_Product>`), "")
	x("mtd-is-dev-zero", nil, "")
	// MTD_MSIL2A.xml replaced by a symbolic link to /dev/zero: the walk
	// does not list it, the product has no metadata.
	d := g.safe("mtd-is-dev-zero", nil)
	os.Remove(filepath.Join(d, "MTD_MSIL2A.xml"))
	g.fail(os.Symlink("/dev/zero", filepath.Join(d, "MTD_MSIL2A.xml")))
}

// siz is a J2K main header: SOC, SIZ, COD, QCD, EOC.
func siz(w, h, tw, th uint32, comps uint16) []byte {
	be := binary.BigEndian
	b := []byte{0xff, 0x4f, 0xff, 0x51}
	b = be.AppendUint16(b, uint16(38+3*int(comps)))
	b = be.AppendUint16(b, 0)
	for _, v := range []uint32{w, h, 0, 0, tw, th, 0, 0} {
		b = be.AppendUint32(b, v)
	}
	b = be.AppendUint16(b, comps)
	for range comps {
		b = append(b, 15, 1, 1)
	}
	b = append(b, 0xff, 0x52, 0, 12, 0, 0, 0, 1, 0, 5, 4, 4, 0, 0)
	b = append(b, 0xff, 0x5c, 0, 4, 0x40, 0x48)
	return append(b, 0xff, 0xd9)
}

func jp2Of(cs []byte, w, h uint32, nc uint16) []byte {
	be := binary.BigEndian
	box := func(typ string, body []byte) []byte {
		return append(append(be.AppendUint32(nil, uint32(8+len(body))), typ...), body...)
	}
	ihdr := be.AppendUint32(be.AppendUint32(nil, h), w)
	ihdr = append(be.AppendUint16(ihdr, nc), 15, 7, 0, 0)
	b := []byte{0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a}
	b = append(b, box("ftyp", []byte("jp2 \x00\x00\x00\x00jp2 "))...)
	b = append(b, box("jp2h", append(box("ihdr", ihdr), box("colr", []byte{1, 0, 0, 0, 0, 0, 17})...))...)
	return append(b, box("jp2c", cs)...)
}

// stacItem is a STAC item whose red and nir assets are the given hrefs
// (JPEG 2000 with a 10 m grid of w×h when jp2).
func stacItem(red, nir string, w, h int) []byte {
	asset := func(href, cn string) map[string]any {
		return map[string]any{"href": href, "type": "image/jp2", "eo:bands": []any{map[string]any{"name": cn, "common_name": cn}},
			"proj:shape": []int{h, w}, "proj:transform": []float64{10, 0, 600000, 0, -10, 5300000}}
	}
	it := map[string]any{"type": "Feature", "id": "hostile", "properties": map[string]any{"platform": "sentinel-2a", "proj:epsg": 32633, "datetime": "2023-07-14T10:20:59Z"},
		"assets": map[string]any{"red": asset(red, "red"), "nir": asset(nir, "nir")}}
	b, _ := json.Marshal(it)
	return b
}

func (g *igen) jp2s() {
	j := func(name string, b []byte, w, h int, want string) {
		p := g.write("jp2/"+name+"/B04.jp2", b)
		it := g.write("jp2/"+name+"/item.json", stacItem("B04.jp2", "B04.jp2", w, h))
		g.add(InputCase{Name: "jp2/" + name, Args: []string{"compute", "--scene", it, "--backend", "go", "--tif", "OUT/ndvi.tif"}, Want: want, Names: p})
	}
	j("tiles-65025-components-16-197-bytes", jp2Of(siz(255*64, 255*64, 64, 64, 16), 255*64, 255*64, 16), 255*64, 255*64, "tiles")
	j("million-tiles-226-bytes", jp2Of(siz(65535, 65535, 64, 64, 1), 65535, 65535, 1), 65535, 65535, "tiles")
	j("j2k-billion-pixels-1x1-tiles", siz(1<<30, 1<<30, 1, 1, 1), 1<<30, 1<<30, "tiles")
	j("components-16384", jp2Of(siz(1024, 1024, 1024, 1024, 16384), 1024, 1024, 16384), 1024, 1024, "16384 components")
	j("ihdr-components-16384", jp2Of(siz(64, 64, 64, 64, 1), 64, 64, 16384), 64, 64, "16384 components")
	j("box-past-end", []byte{0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a, 0, 0, 0x10, 0, 'j', 'p', '2', 'h'}, 64, 64, "runs past the end")
	j("no-codestream", jp2Of(nil, 64, 64, 1)[:45], 64, 64, "")
	j("cut-in-siz", siz(64, 64, 64, 64, 1)[:20], 64, 64, "")
	j("huge-single-tile", siz(40000, 40000, 40000, 40000, 1), 40000, 40000, "")
	j("not-jp2", []byte("GIF89a not a jpeg 2000"), 64, 64, "not a JPEG 2000 file")
	j("empty", nil, 64, 64, "")
	j("zero-size", siz(0, 0, 64, 64, 1), 64, 64, "")
}

// landsat writes a Landsat folder whose MTL gives every band file as
// band, beside a valid GeoTIFF, and returns the folder.
func (g *igen) landsat(name, band string, mtlBody string) string {
	dir := g.path("mtl/" + name + "/" + g.landsatID)
	g.fail(os.MkdirAll(dir, 0o755))
	if mtlBody == "" {
		mtlBody = "GROUP = LANDSAT_METADATA_FILE\n GROUP = PRODUCT_CONTENTS\n  LANDSAT_PRODUCT_ID = \"" + g.landsatID + "\"\n  PROCESSING_LEVEL = \"L2SP\"\n"
		for n := 1; n <= 7; n++ {
			mtlBody += fmt.Sprintf("  FILE_NAME_BAND_%d = \"%s\"\n", n, band)
		}
		mtlBody += " END_GROUP = PRODUCT_CONTENTS\n GROUP = IMAGE_ATTRIBUTES\n  SPACECRAFT_ID = \"LANDSAT_8\"\n END_GROUP = IMAGE_ATTRIBUTES\nEND_GROUP = LANDSAT_METADATA_FILE\nEND\n"
	}
	g.fail(os.WriteFile(filepath.Join(dir, g.landsatID+"_MTL.txt"), []byte(mtlBody), 0o644))
	g.fail(os.WriteFile(filepath.Join(dir, g.landsatID+"_SR_B4.TIF"), base().build().bytes(), 0o644))
	return dir
}

func (g *igen) mtls() {
	m := func(name, band, body, want string) {
		g.scene("mtl/"+name, g.landsat(name, band, body), want)
	}
	m("band-dot-dot-passwd", "../../etc/passwd", "", "a file outside its folder: refused")
	m("band-dot-dot-sibling", "../"+g.landsatID+"_SR_B4.TIF", "", "a file outside its folder: refused")
	m("band-absolute-dev-zero", "/dev/zero", "", "")
	m("band-missing", "nothing.TIF", "", "")
	m("band-is-folder", ".", "", "")
	m("band-name-64KB", strings.Repeat("x", 65000)+".TIF", "", "")
	m("mtl-17MiB", "", "LANDSAT_PRODUCT_ID = \"x\"\n"+strings.Repeat(" ", 17<<20), "more than the")
	m("mtl-line-2MB", "", "LANDSAT_PRODUCT_ID = \""+strings.Repeat("x", 2<<20)+"\"\n", "")
	m("mtl-groups-1M", "", strings.Repeat("GROUP = G\n", 1<<20), "")
	m("mtl-binary", "", string(bytes.Repeat([]byte{0, 0xff, '=', '\n'}, 1<<16)), "")
	m("mtl-spacecraft-junk", "", "LANDSAT_PRODUCT_ID = \"x\"\nSPACECRAFT_ID = \""+strings.Repeat("%s", 30000)+"\"\n", "")
	dir := g.landsat("band-symlink-out", g.landsatID+"_SR_B2.TIF", "")
	g.fail(os.Symlink("/etc/passwd", filepath.Join(dir, g.landsatID+"_SR_B2.TIF")))
	g.scene("mtl/band-symlink-out", dir, "outside the product folder: refused")
	dir = g.landsat("band-symlink-dev-zero", g.landsatID+"_SR_B2.TIF", "")
	g.fail(os.Symlink("/dev/zero", filepath.Join(dir, g.landsatID+"_SR_B2.TIF")))
	g.scene("mtl/band-symlink-dev-zero", dir, "")
	// JSON and XML MTLs nested deeply.
	dir = g.path("mtl/json-deep/" + g.landsatID)
	g.fail(os.MkdirAll(dir, 0o755))
	g.fail(os.WriteFile(filepath.Join(dir, g.landsatID+"_MTL.json"), []byte(strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100000)), 0o644))
	g.scene("mtl/json-deep", dir, "")
	dir = g.path("mtl/xml-deep/" + g.landsatID)
	g.fail(os.MkdirAll(dir, 0o755))
	g.fail(os.WriteFile(filepath.Join(dir, g.landsatID+"_MTL.xml"), []byte(strings.Repeat("<a>", 1<<20)), 0o644))
	g.scene("mtl/xml-deep", dir, "")
	g.compute("mtl/compute-band-dot-dot", g.landsat("compute-band-dot-dot", "../../../../../../../../etc/passwd", ""), "a file outside its folder: refused")
}

func (g *igen) stacs() {
	s := func(name string, b []byte, want string) {
		p := g.write("stac/"+name+"/item.json", b)
		g.scene("stac/"+name, p, want)
	}
	tif := func(name string) { g.write("stac/"+name+"/B04.tif", base().build().bytes()) }
	assets := map[string]any{}
	for i := range 100000 {
		assets[fmt.Sprintf("asset-%06d", i)] = map[string]any{"href": "x.tif"}
	}
	assets["red"] = map[string]any{"href": "B04.tif", "eo:bands": []any{map[string]any{"common_name": "red"}}}
	big, _ := json.Marshal(map[string]any{"type": "Feature", "assets": assets})
	tif("assets-100000")
	p := g.write("stac/assets-100000/item.json", big)
	g.add(InputCase{Name: "stac/assets-100000", Args: []string{"scene", p}, Either: true, Names: p})
	s("href-dev-zero", []byte(`{"type":"Feature","assets":{"red":{"href":"/dev/zero","eo:bands":[{"common_name":"red"}]}}}`), "is a device, not a file")
	s("href-file-url-dev-zero", []byte(`{"type":"Feature","assets":{"red":{"href":"file:///dev/zero","eo:bands":[{"common_name":"red"}]}}}`), "is a device, not a file")
	s("href-folder", []byte(`{"type":"Feature","assets":{"red":{"href":".","eo:bands":[{"common_name":"red"}]}}}`), "")
	s("href-missing", []byte(`{"type":"Feature","assets":{"red":{"href":"none.tif","eo:bands":[{"common_name":"red"}]}}}`), "")
	s("href-remote-1MB", []byte(`{"type":"Feature","assets":{"red":{"href":"https://example.invalid/`+strings.Repeat("p", 1<<20)+`","eo:bands":[{"common_name":"red"}]}}}`), "")
	s("key-1MB", []byte(`{"type":"Feature","assets":{"`+strings.Repeat("k", 1<<20)+`":{"href":"x"}}}`), "")
	s("href-1MB", []byte(`{"type":"Feature","assets":{"red":{"href":"`+strings.Repeat("h", 1<<20)+`","eo:bands":[{"common_name":"red"}]}}}`), "")
	s("deep-json", []byte(`{"type":"Feature","properties":`+strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100000)+`,"assets":{}}`), "")
	s("not-json", []byte("this is not JSON"), "malformed JSON")
	s("not-a-feature", []byte(`{"type":"FeatureCollection","features":[]}`), "not a STAC item")
	s("over-16MiB", []byte(`{"type":"Feature","assets":{},"x":"`+strings.Repeat(" ", 17<<20)+`"}`), "more than the")
	s("jp2-without-grid", []byte(`{"type":"Feature","assets":{"red":{"href":"B04.jp2","eo:bands":[{"common_name":"red"}]}}}`), "grid is unknown")
	s("nan-transform", []byte(`{"type":"Feature","properties":{"proj:epsg":32633},"assets":{"red":{"href":"B04.jp2","proj:shape":[10,10],"proj:transform":[1e400,0,0,0,-1e400,0],"eo:bands":[{"common_name":"red"}]}}}`), "")
	s("shape-huge", []byte(`{"type":"Feature","properties":{"proj:epsg":32633},"assets":{"red":{"href":"B04.jp2","proj:shape":[2000000000,2000000000],"proj:transform":[10,0,0,0,-10,0],"eo:bands":[{"common_name":"red"}]}}}`), "")
	s("empty", nil, "")
}

// gpkg builds a GeoPackage with the given statements after the required
// tables.
func (g *igen) gpkg(name string, stmts ...string) string {
	p := g.path("gpkg/" + name + ".gpkg")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		g.fail(err)
		return p
	}
	defer db.Close()
	base := []string{
		`PRAGMA application_id = 1196444487`,
		`CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT, srs_id INTEGER PRIMARY KEY, organization TEXT, organization_coordsys_id INTEGER, definition TEXT, description TEXT)`,
		`INSERT INTO gpkg_spatial_ref_sys VALUES ('WGS 84 / UTM 33N', 32633, 'EPSG', 32633, 'x', '')`,
		`CREATE TABLE gpkg_contents (table_name TEXT PRIMARY KEY, data_type TEXT, identifier TEXT, description TEXT, last_change TEXT, min_x REAL, min_y REAL, max_x REAL, max_y REAL, srs_id INTEGER)`,
		`CREATE TABLE gpkg_geometry_columns (table_name TEXT, column_name TEXT, geometry_type_name TEXT, srs_id INTEGER, z TINYINT, m TINYINT)`,
		`INSERT INTO gpkg_contents VALUES ('stands','features','stands','',NULL,0,0,1,1,32633)`,
		`INSERT INTO gpkg_geometry_columns VALUES ('stands','geom','POLYGON',32633,0,0)`,
	}
	for _, s := range append(base, stmts...) {
		if _, err := db.Exec(s); err != nil {
			g.fail(fmt.Errorf("%s: %s: %v", name, s, err))
		}
	}
	return p
}

// gpBlob is a GeoPackage geometry blob: the GP header and WKB.
func gpBlob(wkb []byte) string {
	b := append([]byte{'G', 'P', 0, 1, 0x89, 0x7f, 0, 0}, wkb...)
	return fmt.Sprintf("X'%x'", b)
}

func polyWKB(pts [][2]float64, declared uint32) []byte {
	le := binary.LittleEndian
	b := []byte{1}
	b = le.AppendUint32(b, 3)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, declared)
	for _, p := range pts {
		b = le.AppendUint64(b, math.Float64bits(p[0]))
		b = le.AppendUint64(b, math.Float64bits(p[1]))
	}
	return b
}

func (g *igen) gpkgs() {
	st := func(name, want string, stmts ...string) {
		g.stands("gpkg/"+name, g.gpkg(name, stmts...), want)
	}
	table := `CREATE TABLE stands (fid INTEGER PRIMARY KEY, geom BLOB, name TEXT)`
	sq := [][2]float64{{600050, 5299600}, {600300, 5299600}, {600300, 5299900}, {600050, 5299600}}
	st("view-zeroblob-900MB", "is a view, not a table", `CREATE VIEW stands AS SELECT 1 AS fid, zeroblob(900000000) AS geom`)
	st("view-randomblob-900MB", "is a view, not a table", `CREATE VIEW stands AS SELECT 1 AS fid, randomblob(900000000) AS geom`)
	st("view-recursive-infinite", "is a view, not a table", `CREATE VIEW stands AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r) SELECT i AS fid, NULL AS geom FROM r`)
	st("blob-70MB", "longer than the 64 MiB", table, `INSERT INTO stands VALUES (1, zeroblob(70000000), 'a')`)
	st("text-70MB", "longer than the 64 MiB", table, `INSERT INTO stands VALUES (1, NULL, CAST(zeroblob(70000000) AS TEXT))`)
	st("not-gp-blob", "no GP header", table, `INSERT INTO stands VALUES (1, X'00010203', 'a')`)
	deep := []byte{}
	for range 100000 {
		deep = append(deep, 1, 7, 0, 0, 0, 1, 0, 0, 0)
	}
	st("wkb-nested-100000", "nested too deeply", table, `INSERT INTO stands VALUES (1, `+gpBlob(deep)+`, 'a')`)
	st("wkb-count-2^31", "bad WKB geometry", table, `INSERT INTO stands VALUES (1, `+gpBlob(polyWKB(sq, 1<<31))+`, 'a')`)
	g.standsEither("gpkg/"+"wkb-coords-1e300", g.gpkg("wkb-coords-1e300", table, `INSERT INTO stands VALUES (1, `+gpBlob(polyWKB([][2]float64{{1e300, -1e300}, {-1e300, 1e300}, {1e300, 1e300}, {1e300, -1e300}}, 4))+`, 'a')`))
	g.standsEither("gpkg/"+"wkb-coords-nan", g.gpkg("wkb-coords-nan", table, `INSERT INTO stands VALUES (1, `+gpBlob(polyWKB([][2]float64{{math.NaN(), 0}, {1, 0}, {1, 1}, {math.NaN(), 0}}, 4))+`, 'a')`))
	st("wkb-curve", "curved geometries", table, `INSERT INTO stands VALUES (1, `+gpBlob([]byte{1, 10, 0, 0, 0, 0, 0, 0, 0})+`, 'a')`)
	st("wkb-point", "stands must be polygons", table, `INSERT INTO stands VALUES (1, `+gpBlob(append([]byte{1, 1, 0, 0, 0}, make([]byte, 16)...))+`, 'a')`)
	st("no-feature-table", "no feature table", `DELETE FROM gpkg_contents`)
	st("srs-missing", "srs_id", table, `UPDATE gpkg_geometry_columns SET srs_id = 999`)
	st("two-layers", "pick one", table, `INSERT INTO gpkg_contents VALUES ('other','features','o','',NULL,0,0,1,1,32633)`)
	g.stands("gpkg/sqlite-magic-junk", g.write("gpkg/junk.gpkg", append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xee}, 4096)...)), "")
	g.stands("gpkg/empty-file", g.write("gpkg/empty.gpkg", nil), "not a GeoPackage or GeoJSON")
	ok := g.gpkg("truncated-src", table, `INSERT INTO stands VALUES (1, `+gpBlob(polyWKB(sq, 4))+`, 'a')`)
	b, _ := os.ReadFile(ok)
	g.stands("gpkg/truncated", g.write("gpkg/truncated.gpkg", b[:len(b)/3]), "")
	g.add(InputCase{Name: "gpkg/layer-name-64KB", Args: []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", ok + ":" + strings.Repeat("l", 65000), "--csv", "OUT/zonal.csv"}, Want: "no layer", Names: ok})
}

func (g *igen) geojsons() {
	j := func(name, body, want string) {
		g.stands("geojson/"+name, g.write("geojson/"+name+".geojson", []byte(body)), want)
	}
	j("nested-collections-100", `{"type":"Feature","properties":{},"geometry":`+strings.Repeat(`{"type":"GeometryCollection","geometries":[`, 100)+strings.Repeat(`]}`, 100)+`}`, "nested more than")
	j("nested-arrays-1M", `{"type":"Polygon","coordinates":`+strings.Repeat("[", 1<<20)+strings.Repeat("]", 1<<20)+`}`, "")
	j("coords-1e400", standsJSON(`[[[1e400,0],[1,0],[1,1],[1e400,0]]]`), "bad coordinates")
	g.standsEither("geojson/"+"coords-1e300", g.write("geojson/"+"coords-1e300"+".geojson", []byte(standsJSON(`[[[1e300,-1e300],[-1e300,1e300],[1e300,1e300],[1e300,-1e300]]]`))))
	j("coords-strings", standsJSON(`[[["a","b"],[1,0],[1,1],["a","b"]]]`), "bad coordinates")
	j("position-one-number", standsJSON(`[[[0],[1,0],[1,1],[0]]]`), "two numbers")
	j("point", `{"type":"Point","coordinates":[1,2]}`, "stands must be polygons")
	j("null-feature", `{"type":"FeatureCollection","features":[null]}`, "is null")
	j("not-json", `{"type": "FeatureCollection", "features": [`, "not GeoJSON")
	j("no-type", `{"features":[]}`, "not GeoJSON")
	j("unknown-type", `{"type":"Topology"}`, "is not a feature collection")
	j("crs-unknown", `{"type":"FeatureCollection","crs":{"type":"link","properties":{"href":"file:///dev/zero"}},"features":[]}`, "not supported")
	g.standsEither("geojson/"+"id-1MB", g.write("geojson/"+"id-1MB"+".geojson", []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"`+strings.Repeat("i", 1<<20)+`","properties":{},"geometry":null}]}`)))
	g.standsEither("geojson/"+"property-key-1MB", g.write("geojson/"+"property-key-1MB"+".geojson", []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"`+strings.Repeat("k", 1<<20)+`":1},"geometry":null}]}`)))
	huge := g.path("geojson/over-256MiB.geojson")
	if f, err := os.Create(huge); err == nil {
		f.WriteString(`{"type":"FeatureCollection","features":[]}`)
		f.Truncate(257 << 20)
		f.Close()
	}
	g.stands("geojson/over-256MiB", huge, "more than the 256 MiB of GeoJSON")
	// 200 000 small stands, and one stand of 2 million vertices.
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"EPSG:32633"}},"features":[`)
	for i := range 200000 {
		if i > 0 {
			b.WriteByte(',')
		}
		x, y := 600000+(i%64)*10, 5300000-(i/64%48)*10-10
		fmt.Fprintf(&b, `{"type":"Feature","properties":{"n":%d},"geometry":{"type":"Polygon","coordinates":[[[%d,%d],[%d,%d],[%d,%d],[%d,%d]]]}}`, i, x, y, x+8, y, x+8, y+8, x, y)
	}
	b.WriteString("]}")
	g.add(InputCase{Name: "geojson/features-200000", Args: []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", g.write("geojson/features-200000.geojson", []byte(b.String())), "--csv", "OUT/zonal.csv"}, Either: true})
	b.Reset()
	b.WriteString(`{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"EPSG:32633"}},"features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[`)
	n := 2000000
	for i := range n + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		a := 2 * math.Pi * float64(i%n) / float64(n)
		fmt.Fprintf(&b, "[%.3f,%.3f]", 600320+200*math.Cos(a), 5299760+200*math.Sin(a))
	}
	b.WriteString("]]}}]}")
	g.add(InputCase{Name: "geojson/vertices-2000000", Args: []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", g.write("geojson/vertices-2000000.geojson", []byte(b.String())), "--csv", "OUT/zonal.csv"}, Either: true})
}

func (g *igen) lists() {
	l := func(name, body, want string) {
		p := g.write("list/"+name+".txt", []byte(body))
		g.add(InputCase{Name: "list/" + name, Args: []string{"batch", "--out", "OUT", "--list", p}, Want: want, Names: p, Either: want == ""})
	}
	l("line-2MB", strings.Repeat("x", 2<<20)+"\n", "token too long")
	// canopy stack's list of path,date lines.
	sl := func(name, body, want string) {
		p := g.write("list/stack-"+name+".csv", []byte(body))
		g.add(InputCase{Name: "list/stack-" + name, Args: []string{"stack", "--list", p}, Want: want, Names: p})
	}
	sl("line-2MB", strings.Repeat("x", 2<<20)+",2020-01-01\n", "")
	sl("lines-1M", strings.Repeat("a.tif,2020-01-01\n", 1<<20), "more than")
	sl("no-comma", "a.tif 2020-01-01\n", "want path,date")
	sl("bad-date", "a.tif,2020-13-45\n", "want path,date")
	sl("binary", string(bytes.Repeat([]byte{0, 0xff, ',', '\n'}, 1<<16)), "")
	g.add(InputCase{Name: "list/stack-path-dev-zero", Args: []string{"stack", "--list", g.write("list/stack-dev-zero.csv", []byte("/dev/zero,2020-01-01\n/dev/zero,2020-02-01\n"))}, Want: "not a product", Names: "/dev/zero"})
	g.add(InputCase{Name: "list/stack-path-dot-dot", Args: []string{"stack", "--list", g.write("list/stack-dot-dot.csv", []byte("../../../../../../../etc/passwd,2020-01-01\n"+g.red+",2020-02-01\n"))}, Want: "", Names: "passwd"})
}

// notFiles adds what is not a regular file (a FIFO, a device, a folder, a
// symbolic link loop, a dangling link, a missing file) in every place the
// command line takes a file to read.
func (g *igen) notFiles() {
	kinds := g.specialPaths()
	for _, k := range kinds {
		for _, place := range []struct {
			name string
			ext  string
			args func(p string) []string
		}{
			{"scene-zip", ".zip", func(p string) []string { return []string{"scene", p} }},
			{"scene-tar", ".tar", func(p string) []string { return []string{"scene", p} }},
			{"scene-stac", ".json", func(p string) []string { return []string{"scene", p} }},
			{"scene-tif", ".tif", func(p string) []string { return []string{"scene", p} }},
			{"compute-scene-zip", ".zip", func(p string) []string {
				return []string{"compute", "--scene", p, "--backend", "go", "--tif", "OUT/ndvi.tif"}
			}},
			{"compute-red", ".tif", func(p string) []string {
				return []string{"compute", "--red", p, "--nir", g.nir, "--backend", "go", "--tif", "OUT/ndvi.tif"}
			}},
			{"stands-gpkg", ".gpkg", func(p string) []string {
				return []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", p, "--csv", "OUT/zonal.csv"}
			}},
			{"stands-geojson", ".geojson", func(p string) []string {
				return []string{"zonal", "--raw", "--red", g.red, "--nir", g.nir, "--stands", p, "--csv", "OUT/zonal.csv"}
			}},
			{"batch-list", ".txt", func(p string) []string { return []string{"batch", "--out", "OUT", "--list", p} }},
			{"stack-list", ".csv", func(p string) []string { return []string{"stack", "--list", p} }},
			{"stack-product", ".zip", func(p string) []string { return []string{"stack", p} }},
		} {
			p := k.make(place.ext)
			if p == "" {
				continue
			}
			g.add(InputCase{Name: "path/" + k.name + "-as-" + place.name, Args: place.args(p), Want: k.want, Names: p})
		}
		// A STAC asset's href, and a band file a Landsat MTL names inside
		// its folder, that are not files.
		if p := k.make(".tif"); p != "" {
			it := g.write("stac/href-"+k.name+"/item.json", []byte(`{"type":"Feature","assets":{"red":{"href":"`+filepath.ToSlash(p)+`","eo:bands":[{"common_name":"red"}]}}}`))
			g.add(InputCase{Name: "path/" + k.name + "-as-stac-href", Args: []string{"compute", "--scene", it, "--backend", "go", "--tif", "OUT/ndvi.tif"}, Want: k.want, Names: p})
		}
		if k.name == "fifo" || k.name == "folder" || k.name == "dev-zero" {
			band := g.landsatID + "_SR_B4.TIF"
			dir := g.landsat("band-"+k.name, band, "")
			if p := k.make(".TIF"); p != "" {
				g.fail(os.Remove(filepath.Join(dir, band)))
				g.fail(os.Rename(p, filepath.Join(dir, band)))
				want := k.want
				if k.name == "dev-zero" {
					want = "" // a link out of the product: refused as such first
				}
				g.add(InputCase{Name: "path/" + k.name + "-as-mtl-band", Args: []string{"compute", "--scene", dir, "--backend", "go", "--tif", "OUT/ndvi.tif"}, Want: want, Names: band})
			}
		}
		// An existing batch.jsonl, read to skip what is done, that is not
		// a regular file (a missing one is a fresh start: not a case).
		if k.name == "missing" || k.name == "dangling-symlink" {
			continue
		}
		p := k.make(".jsonl")
		out := g.path("batch-" + k.name + "/x")
		out = filepath.Dir(out)
		g.fail(os.Rename(p, filepath.Join(out, "batch.jsonl")))
		g.add(InputCase{Name: "path/" + k.name + "-as-batch-jsonl", Args: []string{"batch", "--out", out, g.red}, Names: filepath.Join(out, "batch.jsonl")})
	}
}

// special is a kind of path that is not a regular file.
type special struct {
	name, want string
	make       func(ext string) string // "" when it cannot be made here
}

func (g *igen) commonSpecials() []special {
	n := 0
	next := func(base, ext string) string {
		n++
		return filepath.Join(g.path("special/x"), "..", fmt.Sprintf("%s-%d%s", base, n, ext))
	}
	return []special{
		{"folder", "", func(ext string) string {
			p := next("folder", ext)
			g.fail(os.MkdirAll(p, 0o755))
			return p
		}},
		{"missing", "no such file", func(ext string) string { return next("missing", ext) }},
		{"symlink-loop", "too many levels of symbolic links", func(ext string) string {
			p := next("loop", ext)
			g.fail(os.Symlink(filepath.Base(p), p))
			return p
		}},
		{"dangling-symlink", "no such file", func(ext string) string {
			p := next("dangling", ext)
			g.fail(os.Symlink("nowhere"+ext, p))
			return p
		}},
	}
}

// sessions adds session files the window is started on (canopy gui
// --session FILE) that are not sessions: FIFOs, devices, folders, links,
// files far too large, damaged JSON. Each is read before the window opens
// and refused in one line naming it, as a failed run (exit 1).
func (g *igen) sessions() {
	sess := func(name, p, want string) {
		g.add(InputCase{Name: "session/" + name, Args: []string{"gui", "--session", p, "--exit-after", "1s"}, Want: want, Names: p, GUI: true})
	}
	for _, k := range g.specialPaths() {
		if p := k.make(".canopy"); p != "" {
			sess(k.name, p, k.want)
		}
	}
	sess("dev-zero-itself", "/dev/zero", "is a device, not a file")
	j := func(name, body, want string) {
		sess(name, g.write("session/"+name+".canopy", []byte(body)), want)
	}
	j("over-16MiB", `{"version":1,"expr":"`+strings.Repeat("a", 17<<20)+`"}`, "more than the 16 MiB")
	sparse := g.path("session/sparse-8GiB.canopy")
	if f, err := os.Create(sparse); err == nil {
		f.WriteString(`{"version":1,"expr":"`)
		g.fail(f.Truncate(8 << 30))
		f.Close()
	}
	sess("sparse-8GiB", sparse, "more than the 16 MiB")
	j("malformed-json", `{"version": 1, "product": `, "not a Canopy session file")
	j("not-json", "\x00\x01\x02 binary \xff\xfe", "not a Canopy session file")
	j("empty", "", "not a Canopy session file")
	j("nested-100000", `{"version":1,"after":`+strings.Repeat(`{"after":`, 100000)+`null`+strings.Repeat(`}`, 100001), "not a Canopy session file")
	j("version-9", `{"version":9}`, "version 9")
	j("no-version", `{"product":"x.tif"}`, "version 0")
	j("classes-wrong-type", `{"version":1,"classes":"dense"}`, "not a Canopy session file")
	j("key-1MB-version-2", `{"`+strings.Repeat("k", 1<<20)+`":1,"version":2}`, "version 2")
	j("utf16", "\xff\xfe{\x00}\x00", "not a Canopy session file")
}
