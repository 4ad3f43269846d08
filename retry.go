package labelprinter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// RetryPolicy bounds how calls are retried. Zero fields take the defaults; MaxAttempts 1
// turns retries off. Whatever the policy, PrintJob and Trigger are retried only when the
// connection could not be made, since a label printed twice is worse than an error.
type RetryPolicy struct {
	// MaxAttempts is the number of requests per call, the first included (default 4).
	MaxAttempts int
	// MinWait is the backoff base: retry n waits a uniform random time in
	// [0, min(MaxWait, MinWait·2^n)] (default 100 ms).
	MinWait time.Duration
	// MaxWait caps the computed backoff (default 2 s).
	MaxWait time.Duration
	// MaxRetryAfter is the longest Retry-After the SDK will wait; a longer one ends the call at
	// once with the printer's *APIError (default 30 s).
	MaxRetryAfter time.Duration
	// Budget is the size of the Client's retry budget, in tokens: a retry costs 5 (10 after a
	// timeout) and a success refunds 1, so a dead printer is not hammered by every goroutine
	// at once (default 100).
	Budget int
}

// DefaultRetryPolicy returns the policy a Client uses unless WithRetry says otherwise.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:   4,
		MinWait:       100 * time.Millisecond,
		MaxWait:       2 * time.Second,
		MaxRetryAfter: 30 * time.Second,
		Budget:        100,
	}
}

// retryClass says which failures of an operation may be retried.
type retryClass uint8

const (
	// idempotent calls (GET, PUT, DELETE, abortPrint) retry connection errors and 408/429/5xx.
	idempotent retryClass = iota
	// printOnce calls (printJob, trigger) retry only when the connection could not be made.
	printOnce
)

// maybeActed reports whether an answer with status code leaves open whether the printer acted
// on a call of class. For printOnce calls, 500 and 502/504 (a gateway's "no answer in time")
// may come after the printer took the job; 503 says it was not processed. Such an *APIError
// matches ErrOutcomeUnknown, and the call is not retried (printOnce never retries a status).
func maybeActed(class retryClass, code int) bool {
	if class != printOnce {
		return false
	}
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// checkRetry is the one retry rule. It is installed as retryablehttp's CheckRetry and waits
// itself, so it can honour the context deadline and the Retry-After cap exactly.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	if st == nil {
		return false, nil
	}
	st.attempts++
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		c.budget.refund()
		return false, nil
	}
	if ctx.Err() != nil {
		return false, nil
	}
	op := &st.op
	var (
		retryAfter    time.Duration
		hasRetryAfter bool
		reason        string
		cost          = retryCost
	)
	if err != nil {
		if !retryableError(op.class, err) {
			return false, nil
		}
		if isTimeout(err) {
			cost = timeoutRetryCost
		}
		reason = "transport error"
	} else {
		st.apiErr = c.newAPIError(op, resp)
		st.apiErr.Attempts = st.attempts
		if op.class != idempotent || !retryableStatus(resp.StatusCode) {
			return false, nil
		}
		retryAfter, hasRetryAfter = parseRetryAfter(resp.Header.Values("Retry-After"), time.Now())
		reason = "status " + strconv.Itoa(resp.StatusCode)
	}
	if !op.stream.rewindable() || st.attempts >= c.policy.MaxAttempts {
		return false, nil
	}
	wait := c.backoff(st.attempts - 1)
	if hasRetryAfter {
		if retryAfter > c.policy.MaxRetryAfter {
			return false, nil
		}
		wait = retryAfter
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return false, nil
	}
	if !c.budget.take(cost) {
		return false, nil
	}
	if c.logger != nil {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "labelprinter retry",
			slog.String("method", op.method), slog.String("path", c.shownPath(c.redactorNow(), op)),
			slog.Int("attempt", st.attempts), slog.String("reason", reason), slog.Duration("wait", wait))
	}
	if err := c.sleep(ctx, wait); err != nil {
		st.waitErr = err
		return false, nil
	}
	st.apiErr = nil
	return true, nil
}

// backoff is full jitter: uniform in [0, min(MaxWait, MinWait·2^retry)].
func (c *Client) backoff(retry int) time.Duration {
	ceiling := c.policy.MaxWait
	if retry < 62 {
		if d := c.policy.MinWait << uint(retry); d > 0 && d < ceiling && d>>uint(retry) == c.policy.MinWait {
			ceiling = d
		}
	}
	return time.Duration(c.jitter() * float64(ceiling))
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryableError classifies a transport error: never a certificate error or a refused
// redirect; for print-once calls only a failed dial. The caller's context is checked before
// this: net/http's own timeouts also match context.DeadlineExceeded, and they are retryable.
func retryableError(class retryClass, err error) bool {
	var (
		re   *RedirectError
		cve  *tls.CertificateVerificationError
		uae  x509.UnknownAuthorityError
		he   x509.HostnameError
		cie  x509.CertificateInvalidError
		ae   tls.AlertError
		rhe  tls.RecordHeaderError
		dnse *net.DNSError
	)
	if errors.As(err, &re) || errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &he) ||
		errors.As(err, &cie) || errors.As(err, &ae) || errors.As(err, &rhe) {
		return false
	}
	if errors.As(err, &dnse) && dnse.IsNotFound {
		return false
	}
	// A TLS alert from the printer (it refused our certificate) will not change on a retry.
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" {
		return false
	}
	if class == printOnce {
		return isDialError(err)
	}
	return true
}

// isDialError reports whether err proves the request never left this machine.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// parseRetryAfter reads the first Retry-After value: whole seconds or an HTTP date. Values too
// large for a Duration saturate instead of overflowing.
func parseRetryAfter(values []string, now time.Time) (time.Duration, bool) {
	if len(values) == 0 {
		return 0, false
	}
	v := strings.TrimSpace(values[0])
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return time.Duration(math.MaxInt64), true
			}
			return 0, false
		}
		if n > uint64(math.MaxInt64/int64(time.Second)) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

const (
	retryCost        = 5
	timeoutRetryCost = 10
)

// retryBudget is a token bucket shared by every call of a Client: retries spend tokens and
// successes earn one back, so a dead printer stops being retried by everyone at once. It is
// lock-free because every successful call refunds: with a full bucket, the usual state, a
// refund is one atomic load and concurrent callers never write the shared cache line.
type retryBudget struct {
	tokens   atomic.Int64
	capacity int64
}

func newRetryBudget(capacity int) *retryBudget {
	b := &retryBudget{capacity: int64(capacity)}
	b.tokens.Store(int64(capacity))
	return b
}

func (b *retryBudget) take(cost int) bool {
	for {
		t := b.tokens.Load()
		if t < int64(cost) {
			return false
		}
		if b.tokens.CompareAndSwap(t, t-int64(cost)) {
			return true
		}
	}
}

func (b *retryBudget) refund() {
	for {
		t := b.tokens.Load()
		if t >= b.capacity || b.tokens.CompareAndSwap(t, t+1) {
			return
		}
	}
}

func (b *retryBudget) available() int { return int(b.tokens.Load()) }
