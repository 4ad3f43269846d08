package main

import (
	"container/list"
	"fmt"
	"hash/maphash"
	"sync"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// targetKey is a target as one module probes it: the same URL under two modules is two
// targets, with two sets of credentials. The target is kept as a hash, so a cached target holds
// none of its (up to maxTargetLen) bytes.
type targetKey struct {
	module *module
	hash   uint64
}

// targetCache remembers the targets probed most recently, up to its size, and keeps the idle
// connections of the module transports bounded by it. Connections are the module's (its
// transport keeps them warm from one scrape interval to the next); the cache only counts the
// targets they serve. Once as many targets as it holds were pushed out (a flood of made-up
// targets, not a plant's steady scrapes), it empties the modules' idle pools, which keeps them
// at about twice the cache whatever /probe is asked.
type targetCache struct {
	mu        sync.Mutex
	order     *list.List                  // of targetKey, the most recent first
	held      map[targetKey]*list.Element // the targets in order
	seed      maphash.Seed
	evictions int
	size      int
	closeIdle func()
}

// newTargetCache holds up to size targets; closeIdle closes every module's idle connections.
func newTargetCache(size int, closeIdle func()) (*targetCache, error) {
	if size <= 0 {
		return nil, fmt.Errorf("target cache size must be positive, got %d", size)
	}
	return &targetCache{order: list.New(), held: make(map[targetKey]*list.Element, size),
		seed: maphash.MakeSeed(), size: size, closeIdle: closeIdle}, nil
}

func (c *targetCache) key(m *module, target string) targetKey {
	return targetKey{m, maphash.String(c.seed, target)}
}

// touch records a probe of target under m, making it the most recent.
func (c *targetCache) touch(m *module, target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.key(m, target)
	if e, ok := c.held[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.held[k] = c.order.PushFront(k)
	if c.order.Len() <= c.size {
		return
	}
	oldest := c.order.Back()
	c.order.Remove(oldest)
	delete(c.held, oldest.Value.(targetKey))
	c.evictions++
	if c.evictions >= c.size && c.closeIdle != nil {
		c.evictions = 0
		c.closeIdle()
	}
}

// len returns the number of targets held.
func (c *targetCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// contains reports whether target is held under m, without making it more recent.
func (c *targetCache) contains(m *module, target string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.held[c.key(m, target)]
	return ok
}

// newSDKClient builds the SDK Client of one probe on its module's HTTP client: a few hundred
// bytes, touching no network, the connections being the module's. Retries are off: Prometheus
// probes again at the next interval, and a retry inside a probe would only stretch it toward the
// scrape timeout and hide the failure labelprinter_up is there to show. The module's credentials,
// which its round tripper adds out of the SDK's sight, are read now (a rotated credentials file
// counts from the next probe) and given to the SDK, which keeps them out of every error; so are
// the values the module's transport is seen sending (an OAuth2 access token), asked for when
// an error is built, after the request that sent them.
func newSDKClient(m *module, target string) (*labelprinter.Client, error) {
	return labelprinter.NewClient(target,
		labelprinter.WithHTTPClient(m.hc),
		labelprinter.WithRedactedValues(m.secrets.Source.Values()...),
		labelprinter.WithRedactedValuesFunc(m.secrets.Sent.Values),
		labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}),
		labelprinter.WithUserAgent("labelprinter-exporter"))
}
