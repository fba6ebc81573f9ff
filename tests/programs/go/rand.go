// math/rand seeded from time.Now().UnixNano() (virtual under faultline) and
// crypto/rand bytes (from getrandom, seeded by faultline).
package main

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"time"
)

func main() {
	rand.Seed(time.Now().UnixNano())
	fmt.Printf("math %d %d %d %d\n", rand.Int63(), rand.Int63(), rand.Intn(1000), rand.Intn(1000))
	buf := make([]byte, 16)
	if _, err := crand.Read(buf); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("crypto %s\n", hex.EncodeToString(buf))
}
