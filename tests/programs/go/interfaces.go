// Lists the network interfaces and their addresses (net.Interfaces, which
// asks rtnetlink): under faultline, the simulated host's lo and eth0.
package main

import (
	"fmt"
	"net"
)

func main() {
	ifs, err := net.Interfaces()
	if err != nil {
		fmt.Println("interfaces:", err)
		return
	}
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		fmt.Println(i.Index, i.Name, i.MTU, i.HardwareAddr, i.Flags, addrs)
	}
}
