// An HTTP client (net/http): GETs URL -n times, one after another, each with
// a -timeout, and prints "I: STATUS BODY" per request (the body as sent).
// Until the first response, a refused connection is retried every 50ms for
// up to -wait, since the server may still be starting. Exits 0 if every
// request got 200 OK; on an error prints "I: error: ERR" and exits 1.
// Usage: httpclient [-n 1] [-timeout 2s] [-wait 5s] URL
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"syscall"
	"time"
)

func main() {
	count := flag.Int("n", 1, "requests to make")
	timeout := flag.Duration("timeout", 2*time.Second, "timeout of each request")
	wait := flag.Duration("wait", 5*time.Second, "how long to retry refused connections at first")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: httpclient [-n N] [-timeout D] [-wait D] URL")
		os.Exit(2)
	}
	url := flag.Arg(0)
	client := &http.Client{Timeout: *timeout}
	start := time.Now()
	ok := true
	for i := 1; i <= *count; i++ {
		resp, err := client.Get(url)
		for i == 1 && err != nil && errors.Is(err, syscall.ECONNREFUSED) && time.Since(start) < *wait {
			fmt.Fprintln(os.Stderr, "retrying:", err)
			time.Sleep(50 * time.Millisecond)
			resp, err = client.Get(url)
		}
		if err != nil {
			fmt.Printf("%d: error: %v\n", i, err)
			os.Exit(1)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			fmt.Printf("%d: error: reading body: %v\n", i, err)
			os.Exit(1)
		}
		fmt.Printf("%d: %s %s", i, resp.Status, body)
		ok = ok && resp.StatusCode == http.StatusOK
	}
	if !ok {
		os.Exit(1)
	}
}
