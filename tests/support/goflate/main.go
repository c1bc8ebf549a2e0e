// The reference side of tests/library/goflate_go.rs: for each file path read from stdin (one per line),
// prints the length of the raw DEFLATE stream Go's compress/flate writes for the whole file at
// level 6 (one Write, then Close, as operator-framework/api's GzipBase64Encode does), as
// "length<TAB>path". Standard library only: it builds offline.
package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var buf bytes.Buffer
	for in.Scan() {
		path := in.Text()
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
		buf.Reset()
		w, err := flate.NewWriter(&buf, 6)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w.Write(data)
		w.Close()
		fmt.Fprintf(out, "%d\t%s\n", buf.Len(), path)
	}
}
