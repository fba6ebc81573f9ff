// gcwait: goroutines that allocate and drop memory on every P while the
// main goroutine forces collections. Go's background sweeper then waits,
// without a system call, for sweepers on other threads (its
// `!isSweepDone()` turn): the wait faultline turns into a give-way point.
// Prints what it computed, so two runs can be compared.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

type node struct {
	next *node
	data [48]byte
}

func churn(id, rounds int) uint64 {
	var sum uint64
	for r := 0; r < rounds; r++ {
		var head *node
		for i := 0; i < 2000; i++ {
			n := &node{next: head}
			n.data[i%48] = byte(i + id)
			head = n
		}
		for n := head; n != nil; n = n.next {
			sum += uint64(n.data[0])
		}
	}
	return sum
}

func main() {
	const workers = 4
	var wg sync.WaitGroup
	sums := make([]uint64, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			sums[w] = churn(w, 150)
		}(w)
	}
	for i := 0; i < 20; i++ {
		runtime.GC()
	}
	wg.Wait()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	fmt.Printf("sums %v\n", sums)
	fmt.Printf("gc cycles >= 20: %v\n", stats.NumGC >= 20)
}
