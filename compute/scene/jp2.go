package scene

import (
	"canopy/compute"
	"canopy/native/openjp2"
)

// jp2Types are compute's names for the sample types libopenjp2's decoder
// stores.
var jp2Types = map[openjp2.SampleType]compute.DataType{
	openjp2.U8: compute.U8, openjp2.U16: compute.U16, openjp2.I16: compute.I16, openjp2.I32: compute.I32,
}

// jp2Type is the stored type of a JPEG 2000 band's samples.
func jp2Type(in openjp2.Info) compute.DataType { return jp2Types[in.Type()] }

// jp2Decode decodes a JPEG 2000 band (or a window of it) as a plane of its
// stored type.
func jp2Decode(d *openjp2.Decoder, opt openjp2.Options) (compute.Plane, error) {
	p, err := d.Decode(opt)
	if err != nil {
		return compute.Plane{}, err
	}
	return compute.Plane{Type: jp2Types[p.Type], Width: p.Width, Height: p.Height, Data: p.Data}, nil
}
