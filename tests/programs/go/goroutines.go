// Goroutines and channels with the default GOMAXPROCS: four goroutines each
// send their id 25 times on an unbuffered channel, yielding between sends;
// main prints the order it received them in, then per-goroutine counts.
package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

const (
	workers    = 4
	iterations = 25
)

func main() {
	fmt.Printf("gomaxprocs %d numcpu %d\n", runtime.GOMAXPROCS(0), runtime.NumCPU())

	ids := make(chan int)
	var wg sync.WaitGroup
	for id := 0; id < workers; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for i := 0; i < iterations; i++ {
				ids <- id
				runtime.Gosched()
			}
		}(id)
	}
	go func() {
		wg.Wait()
		close(ids)
	}()

	var order strings.Builder
	counts := make([]int, workers)
	for id := range ids {
		order.WriteByte(byte('0' + id))
		counts[id]++
	}
	fmt.Printf("order %s\n", order.String())
	fmt.Printf("counts %d %d %d %d\n", counts[0], counts[1], counts[2], counts[3])
}
