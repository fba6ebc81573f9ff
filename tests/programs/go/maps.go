// Go map iteration order, randomised by the runtime's hash seed and a random
// start bucket per range loop: under faultline both follow the seed.
package main

import (
	"fmt"
	"strings"
)

func main() {
	m := make(map[string]int)
	for i := 0; i < 16; i++ {
		m[fmt.Sprintf("key%02d", i)] = i
	}
	for pass := 1; pass <= 2; pass++ {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		fmt.Printf("pass%d %s\n", pass, strings.Join(keys, " "))
	}
}
