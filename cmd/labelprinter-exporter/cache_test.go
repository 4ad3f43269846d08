package main

import (
	"fmt"
	"testing"
)

// TestTargetCacheOrder: the cache keeps the size targets touched most recently (a touch of a
// held target makes it the most recent, a look does not), counts one target per module, and
// empties the idle pools once as many targets as it holds were pushed out.
func TestTargetCacheOrder(t *testing.T) {
	closed := 0
	c, err := newTargetCache(3, func() { closed++ })
	if err != nil {
		t.Fatal(err)
	}
	a, b := &module{}, &module{}
	for _, target := range []string{"t1", "t2", "t3"} {
		c.touch(a, target)
	}
	c.touch(b, "t1") // another module's t1 is another target: a's t1, the oldest, goes
	if c.contains(a, "t1") || !c.contains(b, "t1") || c.len() != 3 {
		t.Fatalf("after a's t1..t3 and b's t1 in a cache of 3: a t1 %v, b t1 %v, %d held", c.contains(a, "t1"), c.contains(b, "t1"), c.len())
	}
	c.touch(a, "t2") // t2 is the most recent now; t3 the oldest
	c.contains(a, "t3")
	c.touch(a, "t4")
	if c.contains(a, "t3") || !c.contains(a, "t2") || !c.contains(a, "t4") {
		t.Errorf("after touching t2 again and looking at t3, t4 pushed out t2 or kept t3: t2 %v, t3 %v, t4 %v", c.contains(a, "t2"), c.contains(a, "t3"), c.contains(a, "t4"))
	}
	if closed != 0 {
		t.Fatalf("idle pools emptied after 2 of 3 evictions")
	}
	c.touch(a, "t5")
	if closed != 1 {
		t.Errorf("idle pools emptied %d times after 3 evictions in a cache of 3, want 1", closed)
	}
	for i := range 6 {
		c.touch(a, fmt.Sprint("u", i))
	}
	if closed != 3 || c.len() != 3 {
		t.Errorf("after 9 evictions: idle pools emptied %d times, want 3; %d held, want 3", closed, c.len())
	}
	if _, err := newTargetCache(0, nil); err == nil {
		t.Error("a cache of 0 targets was made")
	}
}
