// Go's own answer to Range requests, the reference catalogd's /api/v1/all follows: the bytes of
// FILE served with net/http's ServeContent (Content-Type set, as catalogd sets it, so nothing
// is sniffed) and a fixed modification time, on 127.0.0.1 and a free port.
//
// Usage: go run main.go FILE MODTIME_UNIX_SECONDS
// Prints "http://127.0.0.1:PORT/" on one line, then serves until its standard input closes
// (the test that started it ends, or drops its pipe), so it never outlives the test.
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	body, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	secs, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	modtime := time.Unix(secs, 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jsonl")
		http.ServeContent(w, r, "all", modtime, bytes.NewReader(body))
	})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Printf("http://%s/\n", ln.Addr())
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second}
	srv.Serve(ln)
}
