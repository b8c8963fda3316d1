package remote

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// s3Regions are the regions of the public buckets the archives' STAC
// items point at with s3:// hrefs (Earth Search's alternate hrefs).
var s3Regions = map[string]string{
	"sentinel-cogs":        "us-west-2",
	"sentinel-s2-l2a-cogs": "us-west-2",
	"sentinel-s2-l2a":      "eu-central-1",
	"sentinel-s2-l1c":      "eu-central-1",
	"usgs-landsat":         "us-west-2",
	"landsat-pds":          "us-west-2",
	"copernicus-dem-30m":   "eu-central-1",
	"copernicus-dem-90m":   "eu-central-1",
	"esa-worldcover":       "eu-central-1",
}

// requesterPays are the public buckets of s3Regions that bill the reader:
// an unsigned request is refused (Earth Search's Landsat assets and its
// Sentinel-2 JPEG 2000 twins point there).
var requesterPays = map[string]bool{
	"usgs-landsat":    true,
	"sentinel-s2-l2a": true,
	"sentinel-s2-l1c": true,
}

// requesterPaysBucket is the bucket of an S3 HTTPS URL (virtual-hosted or
// path style) when it is one of requesterPays, else "".
func requesterPaysBucket(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if !strings.HasSuffix(h, ".amazonaws.com") {
		return ""
	}
	b, _, _ := strings.Cut(h, ".s3.")
	if b == h || strings.HasPrefix(h, "s3.") {
		b, _, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	}
	if requesterPays[b] {
		return b
	}
	return ""
}

// HTTPURL returns the HTTP(S) URL of a remote href: http and https as
// they are, s3://BUCKET/KEY as the bucket's HTTPS endpoint (the region of
// the archives' public buckets is known; others take $AWS_REGION or
// $AWS_DEFAULT_REGION, else us-east-1). Other schemes are an error.
func HTTPURL(href string) (string, error) {
	u, err := url.Parse(href)
	if err != nil {
		return "", fmt.Errorf("%s: not a URL: %v", clip(href), err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", fmt.Errorf("%s: the URL has no host", clip(href))
		}
		return href, nil
	case "s3":
		bucket, key := u.Host, strings.TrimPrefix(u.Path, "/")
		if bucket == "" || key == "" {
			return "", fmt.Errorf("%s: an s3:// URL needs a bucket and a key", clip(href))
		}
		region := s3Regions[bucket]
		if region == "" {
			region = os.Getenv("AWS_REGION")
		}
		if region == "" {
			region = os.Getenv("AWS_DEFAULT_REGION")
		}
		if region == "" {
			region = "us-east-1"
		}
		esc := (&url.URL{Path: "/" + key}).EscapedPath()
		if strings.Contains(bucket, ".") {
			// Dotted names do not fit the TLS certificate of the
			// virtual-hosted style: the path style.
			return fmt.Sprintf("https://s3.%s.amazonaws.com/%s%s", region, bucket, esc), nil
		}
		return fmt.Sprintf("https://%s.s3.%s.amazonaws.com%s", bucket, region, esc), nil
	case "":
		return "", fmt.Errorf("%s: not a URL (no scheme)", clip(href))
	}
	return "", fmt.Errorf("%s: %s:// URLs are not read; http, https and s3 are", clip(href), u.Scheme)
}

// IsURL reports whether s names a remote file (http, https or s3), as a
// scene or band argument may.
func IsURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "s3://")
}

// cacheKey is the URL a file is cached under: without the query when the
// query is a signature (Azure SAS sig=, AWS X-Amz-Signature), which
// changes with every token while the file stays the same.
func cacheKey(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	if q.Has("sig") || q.Has("X-Amz-Signature") {
		p.RawQuery = ""
	}
	p.User, p.Fragment = nil, ""
	return p.String()
}
