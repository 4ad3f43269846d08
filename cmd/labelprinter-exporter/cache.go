package main

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	labelprinter "github.com/labelprinter/go-labelprinter"
)

// cacheKey is a target as one module probes it: the same URL under two modules is two clients,
// with two sets of credentials.
type cacheKey struct {
	module *module
	target string
}

// clientCache holds one SDK Client per module and target, so a printer probed every scrape
// interval keeps its connections warm, and evicts the least recently used target beyond its
// size, so a flood of made-up target URLs cannot grow the exporter's memory.
type clientCache struct {
	mu  sync.Mutex
	lru *simplelru.LRU[cacheKey, *labelprinter.Client]
	// newClient builds the Client for a target the cache does not hold.
	newClient func(m *module, target string) (*labelprinter.Client, error)
	// evictions counts targets pushed out since the modules' idle connections were last closed.
	evictions, size int
	closeIdle       func()
}

// newClientCache holds up to size targets. closeIdle closes every module's idle connections;
// it is called once per size evictions. An evicted Client is dropped, not closed: it shares its
// module's transport, and closing one would close every target's idle connections. But a
// transport keeps idle connections of targets no longer cached until they time out, so once as
// many targets as the cache holds were pushed out (a flood of made-up targets, not a plant's
// steady scrapes), the idle pools are emptied, which keeps them at about twice the cache.
func newClientCache(size int, newClient func(*module, string) (*labelprinter.Client, error), closeIdle func()) (*clientCache, error) {
	c := &clientCache{newClient: newClient, size: size, closeIdle: closeIdle}
	l, err := simplelru.NewLRU[cacheKey, *labelprinter.Client](size, func(cacheKey, *labelprinter.Client) {
		c.evictions++
		if c.evictions >= c.size && c.closeIdle != nil {
			c.evictions = 0
			c.closeIdle()
		}
	})
	if err != nil {
		return nil, err
	}
	c.lru = l
	return c, nil
}

// get returns the Client of target under m, building it on first use. Building a Client touches
// no network, so doing it under the lock is cheap, and it keeps two concurrent first probes of
// one target from building two.
func (c *clientCache) get(m *module, target string) (*labelprinter.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{m, target}
	if cl, ok := c.lru.Get(k); ok {
		return cl, nil
	}
	cl, err := c.newClient(m, target)
	if err != nil {
		return nil, err
	}
	c.lru.Add(k, cl)
	return cl, nil
}

// len returns the number of targets held.
func (c *clientCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// contains reports whether target is held under m, without making it more recent.
func (c *clientCache) contains(m *module, target string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Contains(cacheKey{m, target})
}

// newSDKClient builds the SDK Client of one target on its module's HTTP client. Retries are off:
// Prometheus probes again at the next interval, and a retry inside a probe would only stretch it
// toward the scrape timeout and hide the failure labelprinter_up is there to show.
func newSDKClient(m *module, target string) (*labelprinter.Client, error) {
	return labelprinter.NewClient(target,
		labelprinter.WithHTTPClient(m.hc),
		labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}),
		labelprinter.WithUserAgent("labelprinter-exporter"))
}
