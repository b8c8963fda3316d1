package stac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"canopy/compute/internal/retry"
)

// PCTokenAPI is the Planetary Computer's SAS token endpoint.
const PCTokenAPI = "https://planetarycomputer.microsoft.com/api/sas/v1/token"

// blobDomain is Azure Blob Storage's, where the Planetary Computer's
// assets are.
const blobDomain = ".blob.core.windows.net"

// PCSigner signs Planetary Computer asset links as the Planetary
// Computer's own SDK does: a link to Azure Blob Storage
// (ACCOUNT.blob.core.windows.net/CONTAINER/...) gets the SAS token of its
// account and container, from TokenAPI/ACCOUNT/CONTAINER, appended as its
// query; a token is reused until a minute before its msft:expiry. Other
// links are returned as they are. $PC_SDK_SUBSCRIPTION_KEY, when set, is
// sent as the Ocp-Apim-Subscription-Key header (higher rate limits). Its
// methods are safe for concurrent use.
type PCSigner struct {
	// TokenAPI is the token endpoint (default PCTokenAPI).
	TokenAPI string
	// HTTP is the client tokens are fetched with (nil: a default one).
	HTTP *http.Client
	// Now is the clock (nil: time.Now), for tests.
	Now func() time.Time

	mu     sync.Mutex
	tokens map[string]pcToken
	// Fetches counts the tokens fetched.
	Fetches int
}

type pcToken struct {
	token  string
	expiry time.Time
}

func (s *PCSigner) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Sign returns rawURL with its SAS token (a fresh one when refresh).
func (s *PCSigner) Sign(ctx context.Context, rawURL string, refresh bool) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.HasSuffix(strings.ToLower(u.Hostname()), blobDomain) {
		return rawURL, nil
	}
	if u.Query().Has("sig") && !refresh {
		return rawURL, nil // signed already
	}
	account := strings.TrimSuffix(strings.ToLower(u.Hostname()), blobDomain)
	container, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if account == "" || container == "" {
		return rawURL, nil
	}
	key := account + "/" + container
	s.mu.Lock()
	tok, ok := s.tokens[key]
	s.mu.Unlock()
	if !ok || refresh || s.now().After(tok.expiry.Add(-time.Minute)) {
		if tok, err = s.fetch(ctx, key); err != nil {
			return "", err
		}
	}
	q := u.Query()
	for _, k := range []string{"st", "se", "sp", "sv", "sr", "skoid", "sktid", "skt", "ske", "sks", "skv", "sig", "spr", "sip", "srt", "ss"} {
		q.Del(k) // an old signature's fields
	}
	u.RawQuery = q.Encode()
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += tok.token
	return u.String(), nil
}

// fetch gets the token of an account/container.
func (s *PCSigner) fetch(ctx context.Context, key string) (pcToken, error) {
	api := s.TokenAPI
	if api == "" {
		api = PCTokenAPI
	}
	hc := s.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	target := strings.TrimRight(api, "/") + "/" + key
	var tok pcToken
	err := retry.Policy{Retries: 4, Base: 500 * time.Millisecond, Max: 8 * time.Second}.Do(ctx, func(int) retry.Outcome {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return retry.Outcome{Err: err}
		}
		if k := os.Getenv("PC_SDK_SUBSCRIPTION_KEY"); k != "" {
			req.Header.Set("Ocp-Apim-Subscription-Key", k)
		}
		req.Header.Set("User-Agent", "canopy")
		resp, err := hc.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return retry.Outcome{Err: err, Retry: true}
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return retry.Outcome{Err: fmt.Errorf("the token service answers %s", resp.Status), Retry: true, Busy: true, After: retry.After(resp.Header.Get("Retry-After"))}
		}
		if resp.StatusCode != http.StatusOK {
			return retry.Outcome{Err: fmt.Errorf("the token service answers %s", resp.Status)}
		}
		if rerr != nil {
			return retry.Outcome{Err: rerr, Retry: true}
		}
		var t struct {
			Token  string `json:"token"`
			Expiry string `json:"msft:expiry"`
		}
		if err := json.Unmarshal(data, &t); err != nil || t.Token == "" {
			return retry.Outcome{Err: errors.New("the token service's answer holds no token")}
		}
		exp, err := time.Parse(time.RFC3339Nano, t.Expiry)
		if err != nil {
			// No usable expiry: use it for a while, as the SDK's own
			// callers do.
			exp = s.now().Add(30 * time.Minute)
		}
		tok = pcToken{strings.TrimPrefix(t.Token, "?"), exp}
		return retry.Outcome{}
	})
	if err != nil {
		if ctx.Err() != nil {
			return pcToken{}, ctx.Err()
		}
		return pcToken{}, fmt.Errorf("signing %s: %w", key, err)
	}
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]pcToken{}
	}
	s.tokens[key] = tok
	s.Fetches++
	s.mu.Unlock()
	return tok, nil
}
