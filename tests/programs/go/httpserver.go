// An HTTP server (net/http): every request is answered with
// "hello from <hostname> <path> <n>\n", n counting requests from 1.
// Prints "listening on ADDR" once it listens and, with -n N, shuts down
// gracefully after the N-th response and prints "served N requests".
// Usage: httpserver [-addr :8080] [-n N]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	limit := flag.Int("n", 0, "exit after serving this many requests (0: never)")
	flag.Parse()

	host, err := os.Hostname()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostname:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	count := 0
	done := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count++
		n := count
		mu.Unlock()
		fmt.Fprintf(w, "hello from %s %s %d\n", host, r.URL.Path, n)
		if n == *limit {
			close(done)
		}
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", *addr)
	srv := &http.Server{Handler: handler}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case <-done:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "shutdown:", err)
			os.Exit(1)
		}
		fmt.Printf("served %d requests\n", *limit)
	case err := <-served:
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
