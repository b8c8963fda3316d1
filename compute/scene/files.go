package scene

// Files returns the paths of the files on disk the scene is made of, so
// that a run's outputs can refuse to replace any of them: the path Open
// was given; for a product folder every file in it (its metadata, band
// files and masks); for a zip or a tar the archive; for a STAC item the
// item and every asset file it names; for an orthomosaic the GeoTIFF.
func (s *Scene) Files() []string {
	out := []string{s.Path}
	switch c := s.c.(type) {
	case *dirContainer:
		for _, n := range c.files {
			out = append(out, c.where(n))
		}
	case *zipContainer:
		out = append(out, c.path)
	case *tarContainer:
		out = append(out, c.path)
	case *filesContainer:
		out = append(out, c.files...)
	}
	return out
}
