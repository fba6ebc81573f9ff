// Goroutines that read time.Now in loops, sleep and meet on a mutex; prints
// what they saw, so a run with faultline's vDSO and one with trapped clock
// reads can be compared line by line (a static Go binary parses the vDSO
// itself).
package main

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := time.Duration(0)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 2000; j++ {
				d := time.Since(start)
				mu.Lock()
				total += d
				mu.Unlock()
				if j%500 == 0 {
					time.Sleep(time.Duration(i+1) * time.Millisecond)
				}
			}
		}(i)
	}
	wg.Wait()
	deadline := time.Now().Add(200 * time.Microsecond)
	polls := 0
	for time.Now().Before(deadline) {
		polls++
	}
	fmt.Printf("total %d polls %d elapsed %s now %s\n", total, polls, time.Since(start),
		time.Now().UTC().Format(time.RFC3339Nano))
}
