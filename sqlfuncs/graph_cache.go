package sqlfuncs

import (
	"sync"
	"time"
)

// graphCache keeps the last few graphs built (HTA's DAG, the CTDA graph), so that the path,
// summary, nodes, edges and what-if functions on one window build it once. Least recently used
// entries go first. Despite the name it holds any value: cpFrameCache keeps the traces' frames in one.
type graphCache[K comparable, V any] struct {
	mu      sync.Mutex
	entries []*graphCacheEntry[K, V]
	size    int // entries kept; 0 = graphCacheSize
}

type graphCacheEntry[K comparable, V any] struct {
	key  K
	val  V
	used time.Time
}

const graphCacheSize = 8

func (c *graphCache[K, V]) get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == key {
			e.used = time.Now()
			return e.val, true
		}
	}
	var zero V
	return zero, false
}

func (c *graphCache[K, V]) put(key K, val V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := c.size
	if size <= 0 {
		size = graphCacheSize
	}
	if len(c.entries) >= size {
		oldest := 0
		for i, e := range c.entries {
			if e.used.Before(c.entries[oldest].used) {
				oldest = i
			}
		}
		c.entries = append(c.entries[:oldest], c.entries[oldest+1:]...)
	}
	c.entries = append(c.entries, &graphCacheEntry[K, V]{key, val, time.Now()})
}

func (c *graphCache[K, V]) reset() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}
