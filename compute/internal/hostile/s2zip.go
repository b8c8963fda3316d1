package hostile

import (
	"archive/zip"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"strings"
)

// s2Band is a band member of a Sentinel-2 zip: an uncompressed GeoTIFF of
// n×n pixels of zero at res metres, deflated into the zip (a band of zeros
// deflates about a thousandfold).
type s2Band struct {
	name string // B04, B08, SCL
	res  int
	n    int
	bits int
}

// zeroTIFF is the head of a valid GeoTIFF of n×n zeros (strips of 16
// rows, uncompressed, at res metres from 600000, 5300000 in EPSG:32633)
// and the number of zero bytes of pixels that follow it.
func zeroTIFF(n, res, bits int) ([]byte, int64) {
	rows := 16
	strips := (n + rows - 1) / rows
	stripBytes := uint64(n * rows * bits / 8)
	t := newTIFF()
	t.long(tImageWidth, uint64(n))
	t.long(tImageLength, uint64(n))
	t.short(tBitsPerSample, uint64(bits))
	t.short(tSampleFormat, 1)
	t.short(tSamplesPerPixel, 1)
	t.short(tCompression, cNone)
	t.short(tPhotometric, 1)
	t.long(tRowsPerStrip, uint64(rows))
	t.ascii(tGDALNoData, "0")
	t.doubles(tPixelScale, float64(res), float64(res), 0)
	t.doubles(tTiepoint, 0, 0, 0, 600000, 5300000, 0)
	t.short(tGeoKeys, 1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32633)
	layout := func(start uint64) {
		offs, counts := make([]uint64, strips), make([]uint64, strips)
		for i := range strips {
			offs[i] = start + uint64(i)*stripBytes
			counts[i] = min(stripBytes, uint64(n*bits/8)*uint64(n-i*rows))
		}
		t.offsets(tStripOffsets, offs...)
		t.offsets(tStripByteCounts, counts...)
	}
	layout(0)
	head := uint64(len(t.bytes()))
	layout(head) // the same length: the offsets are fixed-size values
	return t.bytes(), int64(n) * int64(n) * int64(bits/8)
}

// s2Zip writes a Sentinel-2 L2A product as a zip whose band members are
// deflated GeoTIFFs of zeros (imageFormat GeoTIFF, as some archives
// deliver), with the product's MTD_MSIL2A.xml and the granule's
// MTD_TL.xml, and returns its path. The zip is small; the bands are not.
func (g *igen) s2Zip(name string, n int, bands ...s2Band) string {
	p := g.path("zip/" + name + "/" + strings.TrimSuffix(safeDir, ".SAFE") + ".zip")
	f, err := os.Create(p)
	if err != nil {
		g.fail(err)
		return p
	}
	defer func() { g.fail(f.Close()) }()
	w := zip.NewWriter(f)
	w.RegisterCompressor(zip.Deflate, func(o io.Writer) (io.WriteCloser, error) { return flate.NewWriter(o, flate.BestCompression) })
	granule := "GRANULE/L2A_T32TQM_A042000_20230714T102601"
	tile := "T32TQM_20230714T102601_"
	var files strings.Builder
	for _, b := range bands {
		fmt.Fprintf(&files, "<IMAGE_FILE>%s/IMG_DATA/R%dm/%s%s_%dm</IMAGE_FILE>", granule, b.res, tile, b.name, b.res)
	}
	mtd := `<?xml version="1.0" encoding="UTF-8"?>
<n1:Level-2A_User_Product xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd">
<n1:General_Info><Product_Info><PRODUCT_START_TIME>2023-07-14T10:26:01.024Z</PRODUCT_START_TIME>
<PRODUCT_URI>` + safeDir + `</PRODUCT_URI><PROCESSING_BASELINE>05.09</PROCESSING_BASELINE>
<Datatake datatakeIdentifier="x"><SPACECRAFT_NAME>Sentinel-2A</SPACECRAFT_NAME></Datatake>
<Product_Organisation><Granule_List><Granule granuleIdentifier="g" imageFormat="GeoTIFF">` + files.String() + `</Granule></Granule_List></Product_Organisation></Product_Info>
<Product_Image_Characteristics><QUANTIFICATION_VALUES_LIST><BOA_QUANTIFICATION_VALUE unit="none">10000</BOA_QUANTIFICATION_VALUE></QUANTIFICATION_VALUES_LIST>
<BOA_ADD_OFFSET_VALUES_LIST><BOA_ADD_OFFSET band_id="3">-1000</BOA_ADD_OFFSET><BOA_ADD_OFFSET band_id="7">-1000</BOA_ADD_OFFSET></BOA_ADD_OFFSET_VALUES_LIST></Product_Image_Characteristics>
</n1:General_Info></n1:Level-2A_User_Product>
`
	var geo strings.Builder
	for _, res := range []int{10, 20} {
		m := n * 10 / res
		fmt.Fprintf(&geo, `<Size resolution="%d"><NROWS>%d</NROWS><NCOLS>%d</NCOLS></Size>`, res, m, m)
		fmt.Fprintf(&geo, `<Geoposition resolution="%d"><ULX>600000</ULX><ULY>5300000</ULY><XDIM>%d</XDIM><YDIM>-%d</YDIM></Geoposition>`, res, res, res)
	}
	tl := `<?xml version="1.0" encoding="UTF-8"?>
<n1:Level-2A_Tile_ID xmlns:n1="x"><n1:General_Info><TILE_ID>S2A_OPER_MSI_L2A_TL_2APS_20230714T163539_A042000_T32TQM_N05.09</TILE_ID><SENSING_TIME>2023-07-14T10:26:01.024Z</SENSING_TIME></n1:General_Info>
<n1:Geometric_Info><Tile_Geocoding metadataLevel="Brief"><HORIZONTAL_CS_NAME>WGS84 / UTM zone 33N</HORIZONTAL_CS_NAME><HORIZONTAL_CS_CODE>EPSG:32633</HORIZONTAL_CS_CODE>` + geo.String() + `</Tile_Geocoding></n1:Geometric_Info></n1:Level-2A_Tile_ID>
`
	put := func(member string, head []byte, zeros int64) {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: safeDir + "/" + member, Method: zip.Deflate})
		if err != nil {
			g.fail(err)
			return
		}
		fw.Write(head)
		chunk := make([]byte, 1<<20)
		for zeros > 0 {
			k := min(zeros, int64(len(chunk)))
			fw.Write(chunk[:k])
			zeros -= k
		}
	}
	put("MTD_MSIL2A.xml", []byte(mtd), 0)
	put(granule+"/MTD_TL.xml", []byte(tl), 0)
	for _, b := range bands {
		head, zeros := zeroTIFF(b.n, b.res, b.bits)
		put(fmt.Sprintf("%s/IMG_DATA/R%dm/%s%s_%dm.tif", granule, b.res, tile, b.name, b.res), head, zeros)
	}
	g.fail(w.Close())
	return p
}

// s2Zips adds products whose band members are inflated from a small zip:
// a real tile's size (two 10980² bands and the 20 m SCL: 512 MB inflated
// from 0.5 MB), read by canopy scene and computed by canopy compute
// (within 1 GiB: its inflated members are not held in memory), and
// a product whose two bands together would take more memory once
// inflated than Canopy allows (refused at once, naming the limit and the
// way round). Each member is inflated once, however often it is read.
func (g *igen) s2Zips() {
	const tile = 10980
	p := g.s2Zip("bands-inflate-512MB", tile, s2Band{"B04", 10, tile, 16}, s2Band{"B08", 10, tile, 16}, s2Band{"SCL", 20, tile / 2, 8})
	g.add(InputCase{Name: "zip/bands-inflate-512MB-scene", Args: []string{"scene", p}, Either: true, Names: p})
	// Without the mask, so that the case stays well inside 10 s of CPU
	// (NDVI with the SCL mask of a whole tile comes close to it: measured
	// in docs/BENCHMARKS.md, "Numbers behind code comments", with the
	// memory the two bands alone take).
	g.add(InputCase{Name: "zip/bands-inflate-512MB-compute", Args: []string{"compute", "--scene", p, "--backend", "go", "--mask", "none", "--tif", "OUT/ndvi.tif"}, Either: true, Names: p})
	const big = 14500 // 420 MB a band: two are more than the 768 MiB of inflated members
	p = g.s2Zip("bands-inflate-840MB", big, s2Band{"B04", 10, big, 16}, s2Band{"B08", 10, big, 16})
	g.add(InputCase{Name: "zip/bands-inflate-840MB-scene", Args: []string{"scene", p}, Want: "unzip the archive", Names: p, Quick: true})
	g.add(InputCase{Name: "zip/bands-inflate-840MB-compute", Args: []string{"compute", "--scene", p, "--backend", "go", "--tif", "OUT/ndvi.tif"}, Want: "unzip the archive", Names: p, Quick: true})
}
