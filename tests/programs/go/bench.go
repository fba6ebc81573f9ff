// Benchmark load for the Go runtime: goroutines ping-ponging over unbuffered
// channels and many time.Now calls.
// Usage: bench [pingpongs=50000] [clock_reads=100000]
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func arg(i int, def int) int {
	if len(os.Args) > i {
		n, err := strconv.Atoi(os.Args[i])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return n
	}
	return def
}

func main() {
	pingpongs, reads := arg(1, 50000), arg(2, 100000)
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	sum := 0
	for i := 0; i < pingpongs; i++ {
		ping <- i
		sum += <-pong
	}
	close(ping)
	var last time.Time
	for i := 0; i < reads; i++ {
		last = time.Now()
	}
	fmt.Printf("pingpongs %d sum %d clock reads %d (year %d)\n", pingpongs, sum, reads, last.Year())
}
