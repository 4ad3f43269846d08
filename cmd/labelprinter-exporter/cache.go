package main

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	labelprinter "github.com/labelprinter/go-labelprinter"
)

// clientCache holds one SDK Client per target, so a printer probed every scrape interval keeps
// its retry budget and its connections warm, and evicts the least recently used target beyond
// its size, so a flood of made-up target URLs cannot grow the exporter's memory.
type clientCache struct {
	mu  sync.Mutex
	lru *simplelru.LRU[string, *labelprinter.Client]
	// newClient builds the Client for a target the cache does not hold.
	newClient func(target string) (*labelprinter.Client, error)
}

func newClientCache(size int, newClient func(string) (*labelprinter.Client, error)) (*clientCache, error) {
	// Evicted clients are dropped, not closed: they share the exporter's transport, whose idle
	// pool is capped and aged on its own, and closing one would close every target's idle
	// connections.
	l, err := simplelru.NewLRU[string, *labelprinter.Client](size, nil)
	if err != nil {
		return nil, err
	}
	return &clientCache{lru: l, newClient: newClient}, nil
}

// get returns the target's Client, building it on first use. Building a Client touches no
// network, so doing it under the lock is cheap, and it keeps two concurrent first probes of one
// target from building two.
func (c *clientCache) get(target string) (*labelprinter.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.lru.Get(target); ok {
		return cl, nil
	}
	cl, err := c.newClient(target)
	if err != nil {
		return nil, err
	}
	c.lru.Add(target, cl)
	return cl, nil
}

// len returns the number of targets held.
func (c *clientCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// contains reports whether target is held, without making it more recent.
func (c *clientCache) contains(target string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Contains(target)
}
