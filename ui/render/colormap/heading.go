package colormap

// WithHeading returns a copy of l whose legend is headed name (the index
// shown: "EVI", a custom formula) instead of "NDVI"; the colours are the
// same.
func (l *LUT) WithHeading(name string) *LUT {
	c := *l
	c.heading = name
	return &c
}

// headingText is the legend's heading.
func (l *LUT) headingText() string {
	if l.heading == "" {
		return "NDVI"
	}
	return l.heading
}

// Heading returns the legend's heading: the index shown ("NDVI" unless
// WithHeading said otherwise).
func (l *LUT) Heading() string { return l.headingText() }
