package printersim

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// This file holds the page session's cookie (its name, its flags) and the login's rules: the
// token compared in constant time, and at most loginFailLimit wrong tokens a loginFailWindow
// per client address.

const (
	loginFailLimit  = 10
	loginFailWindow = time.Minute
	// loginFailAddrs bounds the addresses remembered; past it the one whose failures are
	// oldest is forgotten first.
	loginFailAddrs = 4096
)

// sessionCookieName is the session cookie's name for r. It carries the simulator's port,
// since a browser sends a host's cookies to every port of it: two simulators on one host keep
// their own sessions, and neither receives the other's. Over TLS it has the __Host- prefix,
// which makes the browser keep it only as Secure, for this host, for every path.
func (s *Simulator) sessionCookieName(r *http.Request) string {
	name := "printersim_session"
	if port := localPort(r); port != "" {
		name += "_" + port
	}
	if s.overTLS(r) {
		name = "__Host-" + name
	}
	return name
}

// localPort is the port r's connection reached, or the Host's when it is not known.
func localPort(r *http.Request) string {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(la.String()); err == nil {
			return port
		}
	}
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		return port
	}
	return ""
}

// sessionCookie is the cookie that sets (or, with maxAge -1, clears) the session id.
func (s *Simulator) sessionCookie(r *http.Request, id string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: s.sessionCookieName(r), Value: id, Path: "/", HttpOnly: true, Secure: s.overTLS(r), SameSite: http.SameSiteStrictMode, MaxAge: maxAge}
}

// tokenEqual compares a token given with the simulator's in time that depends on neither
// (their SHA-256 sums are compared, so not even on their lengths).
func tokenEqual(given, want string) bool {
	g, w := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// loginFails remembers each client address's recent wrong logins.
type loginFails struct {
	mu    sync.Mutex
	addrs map[string][]time.Time // the times of the last wrong logins, oldest first
}

// wait returns how long addr must wait before its next login is tried, 0 when it may log in.
func (l *loginFails) wait(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	times := l.addrs[addr]
	if len(times) < loginFailLimit {
		return 0
	}
	return max(times[len(times)-loginFailLimit].Add(loginFailWindow).Sub(now), 0)
}

// failed counts a wrong login from addr.
func (l *loginFails) failed(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs == nil {
		l.addrs = map[string][]time.Time{}
	}
	if _, ok := l.addrs[addr]; !ok && len(l.addrs) >= loginFailAddrs {
		oldest, at := "", time.Time{}
		for k, times := range l.addrs {
			last := times[len(times)-1]
			if !now.Before(last.Add(loginFailWindow)) {
				delete(l.addrs, k)
				continue
			}
			if oldest == "" || last.Before(at) {
				oldest, at = k, last
			}
		}
		if len(l.addrs) >= loginFailAddrs {
			delete(l.addrs, oldest)
		}
	}
	times := append(l.addrs[addr], now)
	if len(times) > loginFailLimit {
		times = times[len(times)-loginFailLimit:]
	}
	l.addrs[addr] = times
}

// retryAfter is a wait in whole seconds for Retry-After, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(int((d+time.Second-1)/time.Second), 1))
}
